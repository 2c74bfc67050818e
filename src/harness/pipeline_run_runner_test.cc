// PIPELINE_RUN and EXPERIMENT against the embedded backend: runs created in
// closed loop are followed to their end, open-loop runs keep the schedule's
// intended starts, and EXPERIMENT puts every run in one experiment of its own.
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/test_support.h"

namespace kfpbench::harness {
namespace {

class PipelineRunRunnerTest : public testing::EmbeddedTargetTest {};

TEST_F(PipelineRunRunnerTest, ExperimentPutsEveryRunInOneExperimentOfItsOwn) {
  auto r = Run(R"([{"mode": "EXPERIMENT", "runTime": "500ms", "numTimes": 2,
                    "pipelineFileName": "sleep_chain.yaml"}])");
  EXPECT_TRUE(r.errors.empty()) << r.errors.front();
  ASSERT_FALSE(r.runs.empty());
  EXPECT_EQ(Calls(r, "CreateExperiment"), 1u);
  EXPECT_EQ(r.created.experiments, 1);
  std::set<std::string> experiments;
  for (const auto& run : r.runs) {
    EXPECT_EQ(run.state, RuntimeState::kSucceeded) << run.run_id;
    experiments.insert(run.experiment_id);
  }
  EXPECT_EQ(experiments.size(), 1u);
  EXPECT_FALSE(experiments.begin()->empty());
}

TEST_F(PipelineRunRunnerTest, OpenLoopRunsKeepTheScheduledStarts) {
  // 600 a minute for 1 s: ten runs, one every 100 ms, whatever the server does.
  auto r = Run(R"([{"mode": "PIPELINE_RUN", "runTime": "1s", "rate": 600,
                    "pipelineFileName": "sleep_chain.yaml"}])");
  EXPECT_TRUE(r.errors.empty()) << r.errors.front();
  ASSERT_GE(r.runs.size(), 9u);
  EXPECT_LE(r.runs.size(), 11u);
  std::set<WallTime> intended;
  for (const auto& run : r.runs) {
    EXPECT_NE(run.intended.time_since_epoch().count(), 0) << run.run_id;
    EXPECT_TRUE(run.StartDelay().has_value());
    EXPECT_EQ(run.state, RuntimeState::kSucceeded) << run.run_id;
    intended.insert(run.intended);
  }
  EXPECT_EQ(intended.size(), r.runs.size());  // one run per arrival
  EXPECT_NEAR(ToSeconds(*intended.rbegin() - *intended.begin()), 0.1 * (r.runs.size() - 1), 1e-3);
}

TEST_F(PipelineRunRunnerTest, AClosedLoopKeepsNumTimesRunsInFlight) {
  auto r = Run(R"([{"mode": "PIPELINE_RUN", "runTime": "500ms", "numTimes": 3,
                    "pipelineFileName": "sleep_chain.yaml"}])");
  EXPECT_TRUE(r.errors.empty()) << r.errors.front();
  ASSERT_GE(r.runs.size(), 3u);  // each of three workers started one at least
  for (const auto& run : r.runs) {
    EXPECT_EQ(run.intended.time_since_epoch().count(), 0);  // closed loop: no schedule
    EXPECT_TRUE(run.Finished()) << run.run_id;
  }
  EXPECT_EQ(Calls(r, "CreateRun"), r.runs.size());
}

}  // namespace
}  // namespace kfpbench::harness
