#include "harness/replay_steps.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kfpbench::harness {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

TEST(ReplayStepsTest, DurationsScaleWithTheShapeKept) {
  EXPECT_EQ(*ScaleStubDuration("exec-a=lognormal:200ms:0.25", 0.5),
            "exec-a=lognormal:100000us:0.25");
  EXPECT_EQ(*ScaleStubDuration("constant:1s", 0.01), "constant:10000us");
  EXPECT_EQ(*ScaleStubDuration("x=uniform:1s:3s", 2), "x=uniform:2000000us:6000000us");
  EXPECT_EQ(*ScaleStubDuration("exponential:10s", 1), "exponential:10000000us");
  EXPECT_FALSE(ScaleStubDuration("exec-a=sometimes", 1).ok());
}

TEST(ReplayStepsTest, TheFileReadsScaledAndFillsOnlyWhatTheCommandLineLeft) {
  ScenarioFile file;
  json replay = {{"stubDurations", {"exec-a=lognormal:200ms:0.2"}},
                 {"stubFailures", {"exec-a=0.25"}}};
  ASSERT_TRUE(ReadReplaySteps(replay, 0.1, file).ok());
  EXPECT_EQ(file.stub_durations, std::vector<std::string>{"exec-a=lognormal:20000us:0.2"});
  server::BackendOptions backend;
  backend.stub_failures = {"exec-a=1"};
  ApplyReplaySteps(file, backend);
  EXPECT_EQ(backend.stub_durations, file.stub_durations);
  EXPECT_EQ(backend.stub_failures, std::vector<std::string>{"exec-a=1"});
}

TEST(ReplayStepsTest, BadFieldsAreNamed) {
  ScenarioFile file;
  auto unknown = ReadReplaySteps({{"stubDuration", json::array()}}, 1, file);
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.error().message, HasSubstr("replay.stubDuration: unknown field"));
  auto failure = ReadReplaySteps({{"stubFailures", {"exec-a=2"}}}, 1, file);
  ASSERT_FALSE(failure.ok());
  EXPECT_THAT(failure.error().message, HasSubstr("replay.stubFailures"));
  auto not_string = ReadReplaySteps({{"stubDurations", {1}}}, 1, file);
  ASSERT_FALSE(not_string.ok());
  EXPECT_THAT(not_string.error().message, HasSubstr("replay.stubDurations[0]"));
}

// Issue 39: a replay waited 40 s in all on the observer's budget in a 6.8 s
// run. Its budget is sized for its peak rate, scaled as its offsets are.
TEST(ReplayStepsTest, TheObserverBudgetIsSizedForTheReplaysRate) {
  ScenarioFile file;
  file.scenarios.resize(2);
  ASSERT_TRUE(ReadReplaySteps({{"peakRunsPerSecond", 1.5}}, 0.05, file).ok());
  EXPECT_DOUBLE_EQ(file.replay_runs_per_second, 30);  // 20 times faster
  HarnessOptions h;                                   // 20 calls/s, a listing every 500 ms
  EXPECT_DOUBLE_EQ(SizeObserverBudget(file, h), 68);  // 2 x (30 + 2 / 0.5)
  EXPECT_DOUBLE_EQ(h.observer_qps, 68);
  // Never lowered, and left alone when unlimited or not a replay.
  EXPECT_DOUBLE_EQ(SizeObserverBudget(file, h), 0);
  h.observer_qps = 0;
  EXPECT_DOUBLE_EQ(SizeObserverBudget(file, h), 0);
  EXPECT_DOUBLE_EQ(h.observer_qps, 0);
  HarnessOptions plain;
  EXPECT_DOUBLE_EQ(SizeObserverBudget(ScenarioFile{}, plain), 0);
  EXPECT_FALSE(ReadReplaySteps({{"peakRunsPerSecond", "fast"}}, 1, file).ok());
}

}  // namespace
}  // namespace kfpbench::harness
