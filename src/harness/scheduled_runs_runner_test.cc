// SCHEDULED_RUNS against the embedded backend: the schedules' fires are
// counted and their runs followed; a cron KFP cannot read, or a target that
// refuses the recurring run, fails the scenario with the reason.
#include "harness/scheduled_runs_runner.h"

#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/modes.h"
#include "harness/test_support.h"

namespace kfpbench::harness {
namespace {

using ::testing::HasSubstr;

class ScheduledRunsRunnerTest : public testing::EmbeddedTargetTest {};

TEST_F(ScheduledRunsRunnerTest, CountsTheFiresAndFollowsTheirRuns) {
  auto r = Run(R"([{"mode": "SCHEDULED_RUNS", "runTime": "3s", "numTimes": 2,
                    "cron": "*/1 * * * * *", "pipelineFileName": "sleep_chain.yaml"}])");
  EXPECT_TRUE(r.errors.empty()) << r.errors.front();
  ASSERT_EQ(r.schedules.size(), 1u);
  const results::ScheduleSummary& s = r.schedules[0];
  EXPECT_EQ(s.scenario, 0u);
  EXPECT_EQ(s.recurring_runs, 2);
  EXPECT_EQ(s.expected_fires, 6);  // two schedules, a fire a second for 3 s
  // A loaded machine may miss a fire at the edges, never invent one.
  EXPECT_GE(s.observed_fires, 2);
  EXPECT_LE(s.observed_fires, s.expected_fires);
  EXPECT_EQ(s.Missed(), s.expected_fires - s.observed_fires);
  std::set<std::string> run_ids;
  for (const auto& run : r.runs) {
    EXPECT_EQ(run.scenario, 0u);
    run_ids.insert(run.run_id);
  }
  EXPECT_EQ(run_ids.size(), static_cast<size_t>(s.observed_fires));
  EXPECT_EQ(Calls(r, "CreateRecurringRun"), 2u);
}

TEST_F(ScheduledRunsRunnerTest, ACronKfpCannotReadFailsTheScenarioBeforeAnySchedule) {
  auto r = Run(R"([{"mode": "SCHEDULED_RUNS", "runTime": "1s", "cron": "every minute",
                    "pipelineFileName": "sleep_chain.yaml"}])");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_THAT(r.errors[0], HasSubstr("cron 'every minute'"));
  EXPECT_EQ(Calls(r, "CreateRecurringRun"), 0u);
  EXPECT_TRUE(r.schedules.empty());
}

// A target that takes the pipeline and the experiment but refuses schedules.
TEST(ScheduledRunsRunnerRefused, ATargetRefusingTheScheduleFailsTheScenarioWithItsReason) {
  testing::ScriptedTarget target([](const http::Request& r) {
    if (r.path.ends_with("/pipelines/upload")) {
      return http::Response::Json(200, R"({"pipeline_id": "p-1"})");
    }
    if (r.path.ends_with("/experiments")) {
      return http::Response::Json(200, R"({"experiment_id": "e-1"})");
    }
    return http::Response::Json(403, R"({"message": "schedules are off here"})");
  });
  ASSERT_TRUE(target.started());
  LoadOptions load;
  load.pipeline_dirs = {std::filesystem::path(KFPBENCH_SOURCE_DIR) / "examples/pipelines"};
  auto file = ParseScenarios(R"([{"mode": "SCHEDULED_RUNS", "runTime": "1s", "cron": "0 * * * *",
                                 "pipelineFileName": "sleep_chain.yaml"}])",
                             "/nonexistent/s.json", load);
  ASSERT_TRUE(file.ok()) << file.error().message;
  results::RunLog runs;
  HarnessOptions options;
  Context context(target.client(), runs, options, WallClock::now());
  auto runner = FindMode("SCHEDULED_RUNS")->make_runner();
  Status s = runner->Run(file->scenarios[0], context);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr("cannot create a recurring run"));
  EXPECT_THAT(s.error().message, HasSubstr("schedules are off here"));
  EXPECT_EQ(context.created().recurring_runs, 0);
  EXPECT_EQ(context.created().experiments, 1);  // for the clean-up to delete
}

}  // namespace
}  // namespace kfpbench::harness
