// The growth shape as the runner drives it: level by level against the
// embedded backend, each level filled, counted and measured; a real target
// without --growth-fill, an interruption and a fill the target refuses each
// end the curve with the reason.
#include "harness/growth_runner.h"

#include <atomic>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/shapes.h"
#include "harness/test_support.h"

namespace kfpbench::harness {
namespace {

using ::testing::HasSubstr;

constexpr const char* kTwoLevels = R"([{"mode": "PIPELINE_RUN", "runTime": "2m",
    "pipelineFileName": "growth_tiny.yaml", "shape": "growth",
    "growth": {"levels": [4, 10], "measureTime": "1s", "fillConcurrency": 2,
               "measureConcurrency": 1}}])";

class GrowthRunnerTest : public testing::EmbeddedTargetTest {};

TEST_F(GrowthRunnerTest, EachLevelIsFilledCountedAndMeasured) {
  auto r = Run(kTwoLevels);
  EXPECT_TRUE(r.errors.empty()) << r.errors.front();
  ASSERT_EQ(r.growth.size(), 1u);
  const results::GrowthCurve& curve = r.growth[0];
  EXPECT_TRUE(curve.stopped_because.empty()) << curve.stopped_because;
  ASSERT_EQ(curve.levels.size(), 2u);
  EXPECT_EQ(curve.levels[0].target_runs, 4);
  EXPECT_EQ(curve.levels[1].target_runs, 10);
  for (const auto& level : curve.levels) {
    EXPECT_GE(level.runs_stored, level.target_runs);
    EXPECT_EQ(level.fill_failures, 0);
  }
  // The target starts empty: the first level's runs are all the fill's. A
  // later level tops up what is stored (the mix measured before it creates
  // runs too).
  EXPECT_GE(curve.levels[0].runs_created, 4);
  EXPECT_GE(curve.levels[1].runs_stored, curve.levels[0].runs_stored);
}

// Context for RunGrowth against a scripted target, and the scenario it runs.
class GrowthRefusedTest : public ::testing::Test {
 protected:
  Scenario Growth() {
    LoadOptions load;
    load.pipeline_dirs = {std::filesystem::path(KFPBENCH_SOURCE_DIR) / "examples/pipelines"};
    auto file = ParseScenarios(kTwoLevels, "/nonexistent/s.json", load);
    EXPECT_TRUE(file.ok()) << file.error().message;
    return file.ok() ? file->scenarios[0] : Scenario{};
  }

  std::atomic<int> asked_{0};
  testing::ScriptedTarget target_{[this](const http::Request&) {
    ++asked_;
    return http::Response::Json(403, R"({"message": "nothing may be created here"})");
  }};
  results::RunLog runs_;
  HarnessOptions options_;
};

TEST_F(GrowthRefusedTest, ARealTargetIsFilledOnlyWhenTheOperatorNamesTheFill) {
  Scenario scenario = Growth();
  Context context(target_.client(), runs_, options_, WallClock::now());
  Status s = RunGrowth(scenario, context);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr("only with --growth-fill NAME"));
  EXPECT_EQ(asked_.load(), 0);
}

TEST_F(GrowthRefusedTest, AnInterruptionBeforeALevelEndsTheCurveThere) {
  Scenario scenario = Growth();
  std::atomic<bool> interrupted{true};
  options_.embedded_target = true;
  options_.interrupted = &interrupted;
  Context context(target_.client(), runs_, options_, WallClock::now());
  ASSERT_TRUE(RunGrowth(scenario, context).ok());
  Findings f = context.findings();
  ASSERT_EQ(f.growth.size(), 1u);
  EXPECT_TRUE(f.growth[0].levels.empty());
  EXPECT_EQ(f.growth[0].stopped_because, "interrupted before level 1 (4 runs)");
  EXPECT_EQ(asked_.load(), 0);
}

TEST_F(GrowthRefusedTest, AFillTheTargetRefusesFailsTheScenarioAndSaysSo) {
  Scenario scenario = Growth();
  options_.growth_fill = "gtest-fill";
  Context context(target_.client(), runs_, options_, WallClock::now());
  Status s = RunGrowth(scenario, context);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr("the fill of level 1 (4 runs) failed"));
  EXPECT_THAT(s.error().message, HasSubstr("nothing may be created here"));
  Findings f = context.findings();
  ASSERT_EQ(f.growth.size(), 1u);
  EXPECT_EQ(f.growth[0].stopped_because, s.error().message);
  EXPECT_GT(asked_.load(), 0);
}

}  // namespace
}  // namespace kfpbench::harness
