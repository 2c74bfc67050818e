#include <gtest/gtest.h>

#include "report/reporter.h"
#include "report/test_support.h"

namespace kfpbench::report {
namespace {

using testing::ReadFile;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t end; (end = text.find("\r\n", start)) != std::string::npos; start = end + 2) {
    out.push_back(text.substr(start, end - start));
  }
  return out;
}

TEST(CsvReport, WritesOperationsRunsAndTasks) {
  testing::TempDir dir;
  auto r = testing::SyntheticResults(1, 20, 12);
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

TEST(CsvReport, FailsOnAnUnwritableFolder) {
  testing::TempDir dir;
  std::ofstream(dir.path() / "file") << "x";
  Status s = CsvReporter(dir.path() / "file" / "csv").Report(testing::SyntheticResults(1));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("file"), std::string::npos);
}

}  // namespace
}  // namespace kfpbench::report
