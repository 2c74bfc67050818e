#include "report/failures.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kfpbench::report {
namespace {

using ::testing::HasSubstr;

results::RunRecord Record(std::string id, RuntimeState state, std::string error = "") {
  results::RunRecord r;
  r.run_id = std::move(id);
  r.state = state;
  r.error = std::move(error);
  return r;
}

void Calls(results::BenchmarkResults& r, const std::string& op, int ok, int failed,
           const std::string& message = "") {
  auto& stats = r.operations[op];
  for (int i = 0; i < ok + failed; ++i) stats.latency_us.Record(1000);
  stats.errors += failed;
  for (int i = 0; i < failed && !message.empty(); ++i) stats.AddErrorMessage(message);
}

TEST(Failures, NothingWrongIsNoFailure) {
  results::BenchmarkResults r;
  Calls(r, "CreateRun", 3, 0);
  Calls(r, "GetRun", 30, 2, "HTTP 503: busy");  // some calls failed: that is measured, not fatal
  Calls(r, "GetHealthz", 0, 1);                 // some servers lack healthz
  for (int i = 0; i < 3; ++i) r.runs.push_back(Record(std::to_string(i), RuntimeState::kSucceeded));
  EXPECT_TRUE(FailureReasons(r, {}).empty());
}

TEST(Failures, EveryRefusedCreateRunFailsWithTheServersReason) {
  results::BenchmarkResults r;
  Calls(r, "CreateRun", 0, 6, "HTTP 400: unknown parameter 'durtion'");
  for (int i = 0; i < 6; ++i)
    r.runs.push_back(Record("", RuntimeState::kUnspecified, "CreateRun: HTTP 400"));
  auto reasons = FailureReasons(r, {});
  ASSERT_EQ(reasons.size(), 2u);
  EXPECT_EQ(reasons[0],
            "every CreateRun call failed (6 of 6): HTTP 400: unknown parameter 'durtion'");
  EXPECT_THAT(reasons[1], HasSubstr("6 of 6 runs did not succeed (6 not created;")) << reasons[1];
  EXPECT_TRUE(NotCreated(r.runs[0]));
}

TEST(Failures, FailedRunsBeyondTheTolerance) {
  results::BenchmarkResults r;
  Calls(r, "CreateRun", 4, 0);
  r.runs = {Record("a", RuntimeState::kSucceeded), Record("b", RuntimeState::kSucceeded),
            Record("c", RuntimeState::kSucceeded),
            Record("d", RuntimeState::kFailed, "step x: exit 1")};
  auto reasons = FailureReasons(r, {});
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_EQ(reasons[0],
            "1 of 4 runs did not succeed (1 FAILED; 0% allowed by --max-failed-runs): step x: "
            "exit 1 (x1)");
  EXPECT_TRUE(FailureReasons(r, {0.25}).empty());  // 25% may fail: exactly at the limit
  EXPECT_EQ(FailureReasons(r, {0.2}).size(), 1u);
  r.runs.push_back(Record("e", RuntimeState::kRunning));  // still running when the drain ended
  reasons = FailureReasons(r, {0.25});
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_THAT(reasons[0], HasSubstr("2 of 5 runs did not succeed (1 FAILED, 1 unfinished;"))
      << reasons[0];
}

TEST(Failures, ScenarioErrorsAndAWrongPath) {
  results::BenchmarkResults r;
  r.errors = {"RANDOM_GETS: mix: GetRun needs a run on the target"};
  for (const char* op : {"ListPipelines", "ListExperiments", "ListRuns"}) {
    Calls(r, op, 0, 50, "HTTP 404: Not Found");
  }
  auto reasons = FailureReasons(r, {});
  ASSERT_EQ(reasons.size(), 4u);
  EXPECT_EQ(reasons[0], "scenario error: RANDOM_GETS: mix: GetRun needs a run on the target");
  EXPECT_EQ(reasons[1], "every ListExperiments call failed (50 of 50): HTTP 404: Not Found");
  // A healthz that failed the same way is named last, as the first clue.
  Calls(r, "GetHealthz", 0, 1, "HTTP 404: Not Found");
  reasons = FailureReasons(r, {});
  ASSERT_EQ(reasons.size(), 5u);
  EXPECT_EQ(reasons.back(),
            "GetHealthz failed too (1 of 1): HTTP 404: Not Found: is the target KFP's API at this "
            "URL?");
}

TEST(Failures, ErrorMessagesAreCappedAndCounted) {
  metrics::OperationStats op;
  for (char c = '0'; c <= '9'; ++c) op.AddErrorMessage(std::string("m") + c);
  op.AddErrorMessage("m0", 4);
  EXPECT_EQ(op.error_messages.size(), metrics::OperationStats::kMaxErrorMessages);
  EXPECT_EQ(op.error_messages.at("m0"), 5u);
  EXPECT_EQ(op.error_messages.count("m9"), 0u);
}

}  // namespace
}  // namespace kfpbench::report
