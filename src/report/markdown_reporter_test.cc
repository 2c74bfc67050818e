#include <gtest/gtest.h>

#include "report/reporter.h"
#include "report/test_support.h"

namespace kfpbench::report {
namespace {

TEST(MarkdownReport, SummaryTableAndVerdicts) {
  auto r = testing::SyntheticResults(1);
  r.operations["List|Runs"] = r.operations["ListRuns"];  // a '|' must not break the table
  auto md = MarkdownReporter::Render(r, {{"GetRun", {"p95 < 1ms", "count > 10"}}});
  ASSERT_TRUE(md.ok()) << md.error().message;
  EXPECT_TRUE(md->starts_with("### kfpbench results — ❌ 1 of 2 thresholds failed")) << *md;
  EXPECT_NE(md->find("| ❌ | GetRun | `p95 < 1ms` |"), std::string::npos) << *md;
  EXPECT_NE(md->find("| ✅ | GetRun | `count > 10` | 800 |"), std::string::npos) << *md;
  EXPECT_NE(md->find("| operation | calls | errors | calls/s | p50 | p95 | p99 | max |"),
            std::string::npos);
  EXPECT_NE(md->find("| GetRun | 800 | 20 | 40.0 |"), std::string::npos) << *md;
  EXPECT_NE(md->find("| List\\|Runs |"), std::string::npos);
  EXPECT_NE(md->find("| run duration | 12 |"), std::string::npos) << *md;
  EXPECT_NE(md->find("- scenario 0: one run was rejected"), std::string::npos);
}

TEST(MarkdownReport, AllPassedAndNoThresholds) {
  auto r = testing::SyntheticResults(2);
  auto md = MarkdownReporter::Render(r, {{"GetRun", "count > 10"}});
  ASSERT_TRUE(md.ok());
  EXPECT_TRUE(md->starts_with("### kfpbench results — ✅ all 1 thresholds passed"));
  r.scenario_source = nullptr;
  md = MarkdownReporter::Render(r, nullptr);
  ASSERT_TRUE(md.ok());
  EXPECT_TRUE(md->starts_with("### kfpbench results\n"));
  EXPECT_FALSE(MarkdownReporter::Render(r, {{"GetRun", "p95 ~ 1s"}}).ok());
}

}  // namespace
}  // namespace kfpbench::report
