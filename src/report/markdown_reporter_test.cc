#include <gtest/gtest.h>

#include "report/reporter.h"
#include "results/test_support.h"

namespace kfpbench::report {
namespace {

TEST(MarkdownReport, SummaryTableAndVerdicts) {
  auto r = results::testing::SyntheticResults(1);
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

TEST(MarkdownReport, StressStepsWithWhyTheSearchStoppedAndScheduleFires) {
  auto r = results::testing::SyntheticResults(1);
  r.stress_steps = {{0, 15, 3, 0, 1200, 0, true}, {0, 30, 6, 0, 1500, 0, true}};
  r.stress_stops = {{0, results::StressStopReason::kRunTimeReached,
                     "runTime ended before the step at 60/min could run its 4s"}};
  r.schedules = {{1, 2, 8, 7}};
  auto md = MarkdownReporter::Render(r, nullptr);
  ASSERT_TRUE(md.ok()) << md.error().message;
  EXPECT_NE(md->find("**Stress search, scenario 0**: held up to 30 runs/min, not broken (runTime "
                     "ended before the step at 60/min could run its 4s)"),
            std::string::npos)
      << *md;
  EXPECT_NE(md->find("| 30 | 6 | 0 | 1.5s | ✅ held |"), std::string::npos) << *md;
  EXPECT_NE(md->find("| scenario 1 (2 schedules) | 8 | 7 | 1 |"), std::string::npos) << *md;
  EXPECT_NE(md->find("Trigger lag: p50 "), std::string::npos) << *md;
}

TEST(MarkdownReport, GrowthFitsPerOperation) {
  auto r = results::testing::Sample();
  r.growth = {results::testing::SyntheticGrowth(1.0)};
  auto md = MarkdownReporter::Render(r, nullptr);
  ASSERT_TRUE(md.ok()) << md.error().message;
  EXPECT_NE(md->find("**Growth, scenario 0**: latency ~ runs stored^k over 4 level(s)"),
            std::string::npos)
      << *md;
  auto row = [&](const std::string& op) {
    size_t at = md->find("| " + op + " | ", md->find("**Growth"));
    return at == std::string::npos ? std::string() : md->substr(at, md->find('\n', at) - at);
  };
  EXPECT_NE(row("ListRuns").find("] linear | "), std::string::npos) << *md;
  EXPECT_NE(row("GetRun").find("] constant | "), std::string::npos) << *md;
}

TEST(MarkdownReport, AllPassedAndNoThresholds) {
  auto r = results::testing::SyntheticResults(2);
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
