#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report/reporter.h"
#include "results/test_support.h"

namespace kfpbench::report {
namespace {

using results::testing::ReadFile;
using ::testing::HasSubstr;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t end; (end = text.find("\r\n", start)) != std::string::npos; start = end + 2) {
    out.push_back(text.substr(start, end - start));
  }
  return out;
}

TEST(CsvReport, WritesOperationsRunsAndTasks) {
  results::testing::TempDir dir;
  auto r = results::testing::SyntheticResults(1, 20, 12);
  ASSERT_TRUE(CsvReporter(dir.path() / "csv").Report(r).ok());
  auto ops = Lines(ReadFile(dir.path() / "csv" / "operations.csv"));
  ASSERT_EQ(ops.size(), 1 + r.operations.size());
  EXPECT_TRUE(ops[0].starts_with("operation,count,errors,error_rate,throughput_per_s,min_us"));
  EXPECT_TRUE(ops[2].starts_with("GetRun,800,20,0.025000,40.000,")) << ops[2];
  auto runs = Lines(ReadFile(dir.path() / "csv" / "runs.csv"));
  ASSERT_EQ(runs.size(), 1 + r.runs.size());
  EXPECT_TRUE(runs[1].starts_with("0,run-0,SUCCEEDED,")) << runs[1];
  // A field with a comma or quotes is quoted, quotes doubled.
  EXPECT_TRUE(runs.back().ends_with(",\"CreateRun: HTTP 500 <internal> & \"\"quoted\"\"\""))
      << runs.back();
  auto tasks = Lines(ReadFile(dir.path() / "csv" / "tasks.csv"));
  EXPECT_EQ(tasks.size(), 1 + 12 * 4u);
  EXPECT_TRUE(tasks[1].starts_with("run-0,root,SUCCEEDED,true,")) << tasks[1];
  EXPECT_TRUE(tasks[2].ends_with(",100.000,300.000")) << tasks[2];
}

TEST(CsvReport, WritesStressStepsSchedulesAndEachRunsLateness) {
  results::testing::TempDir dir;
  auto r = results::testing::SyntheticResults(1, 0, 2);
  r.runs[0].intended = r.runs[0].created - std::chrono::milliseconds(250);
  r.runs[0].observed = r.runs[0].created + std::chrono::seconds(2);
  r.runs[1].scenario = 1;
  r.runs[1].recurring_run_id = "rr-1";
  r.runs[1].scheduled = r.runs[1].created - std::chrono::milliseconds(40);
  r.stress_steps = {{0, 15, 3, 0, 1200, 0, true}, {0, 120, 16, 1, 7000, 0.0625, false}};
  r.stress_stops = {{0, results::StressStopReason::kSloBroken, "the SLO broke at 120/min"}};
  r.schedules = {{1, 1, 3, 2}};
  ASSERT_TRUE(CsvReporter(dir.path() / "csv").Report(r).ok());
  auto runs = Lines(ReadFile(dir.path() / "csv" / "runs.csv"));
  EXPECT_TRUE(runs[0].ends_with(
      "latency_from_intended_ms,recurring_run_id,scheduled_at,trigger_lag_ms,error"));
  EXPECT_THAT(runs[1], HasSubstr(",2250.000,,,,")) << runs[1];
  EXPECT_THAT(runs[2], HasSubstr(",rr-1,")) << runs[2];
  EXPECT_THAT(runs[2], HasSubstr(",40.000,")) << runs[2];
  auto stress = Lines(ReadFile(dir.path() / "csv" / "stress.csv"));
  ASSERT_EQ(stress.size(), 3u);
  EXPECT_EQ(stress[1], "0,15,3,0,1200,0.000000,true,,");
  EXPECT_EQ(stress[2], "0,120,16,1,7000,0.062500,false,slo_broken,the SLO broke at 120/min");
  auto schedules = Lines(ReadFile(dir.path() / "csv" / "schedules.csv"));
  ASSERT_EQ(schedules.size(), 2u);
  EXPECT_EQ(schedules[1], "1,1,3,2,1,40,40");
}

TEST(CsvReport, GrowthHasARowPerLevelAndOperation) {
  results::testing::TempDir dir;
  auto r = results::testing::SyntheticResults(1);
  results::GrowthLevel level;
  level.target_runs = 1000;
  level.runs_stored = 1004;
  level.runs_created = 500;
  level.fill_seconds = 2;
  level.latency_us["ListRuns"].Record(3000);
  level.latency_us["CreateRun"].Record(100);
  level.errors["CreateRun"] = 1;
  results::GrowthCurve curve;
  curve.levels = {level};
  r.growth = {curve};
  ASSERT_TRUE(CsvReporter(dir.path() / "csv").Report(r).ok());
  auto growth = Lines(ReadFile(dir.path() / "csv" / "growth.csv"));
  ASSERT_EQ(growth.size(), 3u);
  EXPECT_EQ(growth[0],
            "scenario,target_runs,runs_stored,operation,count,errors,p50_us,p99_us,"
            "fill_objects_per_s");
  EXPECT_EQ(growth[1], "0,1000,1004,CreateRun,1,1,100,100,250.0");
  EXPECT_EQ(growth[2], "0,1000,1004,ListRuns,1,0,3000,3000,250.0");
}

TEST(CsvReport, FailsOnAnUnwritableFolder) {
  results::testing::TempDir dir;
  std::ofstream(dir.path() / "file") << "x";
  Status s = CsvReporter(dir.path() / "file" / "csv").Report(results::testing::SyntheticResults(1));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr("file"));
}

}  // namespace
}  // namespace kfpbench::report
