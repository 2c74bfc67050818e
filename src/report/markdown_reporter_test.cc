#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report/reporter.h"
#include "results/test_support.h"

namespace kfpbench::report {
namespace {

using ::testing::HasSubstr;

TEST(MarkdownReport, SummaryTableAndVerdicts) {
  auto r = results::testing::SyntheticResults(1);
  r.operations["List|Runs"] = r.operations["ListRuns"];  // a '|' must not break the table
  auto md = MarkdownReporter::Render(r, {{"GetRun", {"p95 < 1ms", "count > 10"}}});
  ASSERT_TRUE(md.ok()) << md.error().message;
  EXPECT_TRUE(md->starts_with("### kfpbench results — ❌ 1 of 2 thresholds failed")) << *md;
  EXPECT_THAT(*md, HasSubstr("| ❌ | GetRun | `p95 < 1ms` |")) << *md;
  EXPECT_THAT(*md, HasSubstr("| ✅ | GetRun | `count > 10` | 800 |")) << *md;
  EXPECT_THAT(*md, HasSubstr("| operation | calls | errors | calls/s | p50 | p95 | p99 | max |"));
  EXPECT_THAT(*md, HasSubstr("| GetRun | 800 | 20 | 40.0 |")) << *md;
  EXPECT_THAT(*md, HasSubstr("| List\\|Runs |"));
  EXPECT_THAT(*md, HasSubstr("| run duration | 12 |")) << *md;
  EXPECT_THAT(*md, HasSubstr("- scenario 0: one run was rejected"));
}

TEST(MarkdownReport, StressStepsWithWhyTheSearchStoppedAndScheduleFires) {
  auto r = results::testing::SyntheticResults(1);
  r.stress_steps = {{0, 15, 3, 0, 1200, 0, true}, {0, 30, 6, 0, 1500, 0, true}};
  r.stress_stops = {{0, results::StressStopReason::kRunTimeReached,
                     "runTime ended before the step at 60/min could run its 4s"}};
  r.schedules = {{1, 2, 8, 7}};
  auto md = MarkdownReporter::Render(r, nullptr);
  ASSERT_TRUE(md.ok()) << md.error().message;
  EXPECT_THAT(
      *md, HasSubstr("**Stress search, scenario 0**: held up to 30 runs/min, not broken (runTime "
                     "ended before the step at 60/min could run its 4s)"))
      << *md;
  EXPECT_THAT(*md, HasSubstr("| 30 | 6 | 0 | 1.5s | ✅ held |")) << *md;
  EXPECT_THAT(*md, HasSubstr("| scenario 1 (2 schedules) | 8 | 7 | 1 |")) << *md;
  EXPECT_THAT(*md, HasSubstr("Trigger lag: p50 ")) << *md;
}

TEST(MarkdownReport, GrowthFitsPerOperation) {
  auto r = results::testing::Sample();
  r.growth = {results::testing::SyntheticGrowth(1.0)};
  auto md = MarkdownReporter::Render(r, nullptr);
  ASSERT_TRUE(md.ok()) << md.error().message;
  EXPECT_THAT(*md, HasSubstr("**Growth, scenario 0**: latency ~ runs stored^k over 4 level(s)"))
      << *md;
  auto row = [&](const std::string& op) {
    size_t at = md->find("| " + op + " | ", md->find("**Growth"));
    return at == std::string::npos ? std::string() : md->substr(at, md->find('\n', at) - at);
  };
  EXPECT_THAT(row("ListRuns"), HasSubstr("] linear | ")) << *md;
  EXPECT_THAT(row("GetRun"), HasSubstr("] constant | ")) << *md;
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
