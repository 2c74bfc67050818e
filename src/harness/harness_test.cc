// One pass of a scenario file (RunScenarios) against the embedded backend:
// every scenario runs, a failing one is listed without stopping the others,
// checkpoints are taken while it runs, an interrupted pass says so, and what
// the pass created is deleted at its end.
#include "harness/harness.h"

#include <atomic>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/test_support.h"

namespace kfpbench::harness {
namespace {

using ::testing::HasSubstr;

class HarnessTest : public testing::EmbeddedTargetTest {};

TEST_F(HarnessTest, AFailingScenarioIsListedAndTheOthersRun) {
  auto r = Run(R"([{"mode": "RANDOM_GETS", "runTime": "500ms", "mix": {"GetRun": 1}},
                   {"mode": "RANDOM_GETS", "runTime": "500ms", "mix": {"ListRuns": 1}}])");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_THAT(r.errors[0], HasSubstr("scenario [0] RANDOM_GETS: "));
  EXPECT_GT(Calls(r, "ListRuns"), 0u);
  ASSERT_EQ(r.scenarios.size(), 2u);
  EXPECT_EQ(r.scenarios[1].index, 1u);
  EXPECT_FALSE(r.partial);
  EXPECT_LE(r.started, r.finished);
  EXPECT_EQ(r.benchmark_id, "kfpbench-test");
  EXPECT_TRUE(r.harness_usage.Measured());
}

TEST_F(HarnessTest, RunsAreFollowedToTheirEndAndTheirObjectsDeleted) {
  auto r = Run(R"([{"mode": "PIPELINE_RUN", "runTime": "500ms", "numTimes": 2,
                    "pipelineFileName": "sleep_chain.yaml"}])");
  EXPECT_TRUE(r.errors.empty()) << r.errors.front();
  ASSERT_FALSE(r.runs.empty());
  for (const auto& run : r.runs) EXPECT_EQ(run.state, RuntimeState::kSucceeded) << run.run_id;
  EXPECT_EQ(Calls(r, "CreateRun"), r.runs.size());
  EXPECT_EQ(r.created.runs, static_cast<int64_t>(r.runs.size()));
  EXPECT_EQ(r.deleted.total(), r.created.total());
  EXPECT_EQ(r.created.pipelines, 1);  // uploaded once, shared by both workers
}

TEST_F(HarnessTest, CheckpointsAreTakenAtTheStartAndTheEnd) {
  HarnessOptions options = Options();
  std::vector<bool> partial;
  options.checkpoint = [&](const results::BenchmarkResults& r) { partial.push_back(r.partial); };
  RunScenarios(Load(R"([{"mode": "RANDOM_GETS", "runTime": "300ms"}])"), session_->client(),
               session_->recorder(), options);
  ASSERT_GE(partial.size(), 2u);
  EXPECT_TRUE(partial.front());  // an unfinished copy before any load
  EXPECT_FALSE(partial.back());  // the results themselves
}

TEST_F(HarnessTest, AnInterruptedPassSaysItIsPartial) {
  HarnessOptions options = Options();
  std::atomic<bool> interrupted{true};  // Ctrl-C before the first scenario starts
  options.interrupted = &interrupted;
  auto r = RunScenarios(Load(R"([{"mode": "RANDOM_GETS", "startTime": "1s", "runTime": "1s"}])"),
                        session_->client(), session_->recorder(), options);
  EXPECT_TRUE(r.partial);
  EXPECT_FALSE(r.partial_reason.empty());
  EXPECT_EQ(Calls(r, "ListRuns"), 0u);
}

}  // namespace
}  // namespace kfpbench::harness
