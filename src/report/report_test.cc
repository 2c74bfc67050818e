#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report/reporter.h"
#include "results/results_json.h"
#include "results/test_support.h"
#include "util/ids.h"

namespace kfpbench::report {
namespace {

using results::testing::Sample;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(JsonReport, HasVersionedSchemaUnitsAndMergeableHistograms) {
  auto j = results::ResultsToJson(Sample());
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["units"]["latency"], "us");
  const auto& op = j["operations"]["GetRun"];
  EXPECT_EQ(op["count"], 100);
  EXPECT_EQ(op["errors"], 2);
  EXPECT_DOUBLE_EQ(op["error_rate"].get<double>(), 0.02);
  EXPECT_EQ(op["by_status"]["503"], 2);
  EXPECT_EQ(op["latency_us"]["p50"].get<int64_t>() / 1000, 50);
  EXPECT_TRUE(metrics::Histogram::FromJson(op["histogram"]).ok());
  EXPECT_EQ(op["timeseries"].size(), 6u);  // seconds 0..5
  EXPECT_EQ(j["runs"]["count"], 2);
  EXPECT_EQ(j["runs"]["by_state"]["SUCCEEDED"], 1);
  EXPECT_EQ(j["runs"]["duration_ms"]["count"], 1);
  EXPECT_NEAR(j["runs"]["records"][0]["duration_ms"].get<double>(), 3000, 1e-6);
  EXPECT_NEAR(j["runs"]["records"][0]["queue_wait_ms"].get<double>(), 250, 1e-6);
  EXPECT_EQ(j["runs"]["records"][1]["error"], "CreateRun: HTTP 500");
  EXPECT_EQ(j["steps"]["step"]["scheduling_delay_ms"]["p50"], 250);
  EXPECT_EQ(j["steps"]["step"]["duration_ms"]["p50"], 2750);
}

TEST(JsonReport, WritesAtomicallyAndReportsUnwritablePaths) {
  auto dir = std::filesystem::temp_directory_path() / ("kfpbench-report-" + NewUuid());
  std::filesystem::create_directories(dir);
  JsonReporter ok(dir / "results.json");
  ASSERT_TRUE(ok.Report(Sample()).ok());
  std::ifstream in(dir / "results.json");
  auto parsed = nlohmann::json::parse(in);
  EXPECT_EQ(parsed["schema"], "kfpbench/results");
  EXPECT_FALSE(std::filesystem::exists(dir / "results.json.tmp"));
  JsonReporter bad(dir / "missing-dir" / "results.json");
  Status s = bad.Report(Sample());
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr("missing-dir"));
  std::filesystem::remove_all(dir);
}

TEST(ConsoleReport, PrintsOperationsAndRuns) {
  std::ostringstream out;
  ASSERT_TRUE(ConsoleReporter(out).Report(Sample()).ok());
  std::string text = out.str();
  EXPECT_THAT(text, HasSubstr("GetRun"));
  // The second run's CreateRun failed: it was never submitted (issue #16).
  EXPECT_THAT(text, HasSubstr("Runs: 1 submitted, 1 SUCCEEDED; 1 not created (CreateRun failed)"))
      << text;
  EXPECT_THAT(text, HasSubstr("run duration"));
}

TEST(ConsoleReport, EachValueInTheUnitThatShowsIt) {
  results::BenchmarkResults r;
  r.finished = r.started + std::chrono::seconds(1);
  for (int i = 0; i < 10; ++i) r.operations["GetRun"].latency_us.Record(30);  // 30 us calls
  std::ostringstream out;
  ASSERT_TRUE(ConsoleReporter(out).Report(r).ok());
  std::string text = out.str();
  EXPECT_THAT(text, HasSubstr("30us")) << text;  // not "0.0" ms
  EXPECT_THAT(text, Not(HasSubstr(" 0.0 "))) << text;
}

// A growth curve extrapolated far past what was measured can predict more
// than a duration holds (seen under UBSan: a p99 interval's end of 1.2e17 us
// overflowed on the way to nanoseconds). It prints, saturated.
TEST(ConsoleReport, AnAstronomicalExtrapolationPrintsInsteadOfOverflowing) {
  results::BenchmarkResults r;
  r.finished = r.started + std::chrono::seconds(1);
  r.growth = {results::testing::SyntheticGrowth(1.0)};  // 10 s at 100,000 runs
  r.growth[0].extrapolate_to = int64_t{1} << 50;
  ASSERT_GT(*r.growth[0].Fits().at("ListRuns").p99_at_extrapolation, 1e16);
  // A results.json from elsewhere can hold such a value too.
  r.operations["GetRun"].latency_us.Record(int64_t{1} << 60);
  std::ostringstream out;
  ASSERT_TRUE(ConsoleReporter(out).Report(r).ok());
  EXPECT_THAT(out.str(), HasSubstr("p99 at 1125899906842624 runs ~")) << out.str();
}

// Issue 29: after 8,375 CreateRun calls of a growth fill the console said
// "Runs: 0 submitted" over an empty duration table, and the growth section
// came last. Growth results come first, the measured mix apart from the
// fill's calls, and the fill's runs are counted where they were made.
TEST(ConsoleReport, AGrowthScenarioReadsGrowthFirstAndCountsTheFillsRuns) {
  results::BenchmarkResults r;
  r.finished = r.started + std::chrono::seconds(60);
  r.growth = {results::testing::SyntheticGrowth(0.4)};
  for (auto& l : r.growth[0].levels) {
    l.runs_created = 2000;
    l.measure_seconds = 10;
  }
  for (int i = 0; i < 8375; ++i) r.operations["CreateRun"].latency_us.Record(4000);
  // The mix's ListRuns:deep calls are ListRuns calls in the all-phases table:
  // 80 plain and 40 deep measured, 10 more by the fill's settling.
  for (auto& l : r.growth[0].levels) {
    for (int i = 0; i < 10; ++i) l.latency_us["ListRuns:deep"].Record(9000);
  }
  for (int i = 0; i < 130; ++i) r.operations["ListRuns"].latency_us.Record(3000);
  std::ostringstream out;
  ASSERT_TRUE(ConsoleReporter(out).Report(r).ok());
  std::string text = out.str();
  auto growth = text.find("Growth, scenario 0");
  auto mix = text.find("Measured mix (every level's measure phase");
  auto all = text.find("All API calls, every phase");
  ASSERT_NE(growth, std::string::npos) << text;
  ASSERT_NE(mix, std::string::npos) << text;
  ASSERT_NE(all, std::string::npos) << text;
  EXPECT_LT(growth, mix);
  EXPECT_LT(mix, all);
  // 20 ListRuns calls at each of 4 levels, apart from the fill's 8,375 CreateRuns.
  EXPECT_THAT(text, HasSubstr("ListRuns                    80")) << text;
  EXPECT_THAT(text, HasSubstr("Runs: 8000 created by the growth fill and 0 by its measured mix"))
      << text;
  EXPECT_THAT(text,
              HasSubstr("Of these, the fill and its settling made: CreateRun 8375, ListRuns 10\n"))
      << text;
  EXPECT_THAT(text, Not(HasSubstr("Runs: 0 submitted"))) << text;
  EXPECT_THAT(text, Not(HasSubstr("run duration"))) << text;
}

}  // namespace
}  // namespace kfpbench::report
