// The run followers' calls: recorded apart from the workload's, failed ones
// included, under one budget; how each run's end was found and how late.
#include "harness/follower_calls.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/test_support.h"

namespace kfpbench::harness {
namespace {

using namespace std::chrono_literals;

// A loopback target that lists no runs and knows no run by id.
class FollowerCallsTest : public ::testing::Test {
 protected:
  testing::ScriptedTarget target_{[](const http::Request& r) {
    if (r.path.ends_with("/runs")) return http::Response::Json(200, R"({"runs": []})");
    return http::Response::Json(404, R"({"message": "no such run"})");
  }};
};

TEST_F(FollowerCallsTest, ItsCallsAreRecordedApartFromTheWorkloadsFailedOnesIncluded) {
  ASSERT_TRUE(target_.started());
  FollowerCalls calls(target_.client(), /*qps=*/0, 250ms);
  ASSERT_TRUE(target_.client().ListRuns({}).ok());  // the workload's own: not the observer's
  EXPECT_TRUE(calls.CallCounts().empty());

  ASSERT_TRUE(calls.client().ListRuns({}).ok());
  ASSERT_TRUE(calls.client().ListRuns({}).ok());
  EXPECT_FALSE(calls.client().GetRun("r-404").ok());
  EXPECT_EQ(calls.CallCounts(), (std::map<std::string, uint64_t>{{"GetRun", 1}, {"ListRuns", 2}}));

  results::ObserverSummary s = calls.Summary();
  EXPECT_EQ(s.operations.at("GetRun").errors, 1u);
  EXPECT_EQ(s.operations.at("ListRuns").errors, 0u);
  EXPECT_EQ(s.Calls(), 3u);
  EXPECT_EQ(s.poll_interval, 250ms);
  EXPECT_EQ(s.qps_budget, 0);
}

TEST_F(FollowerCallsTest, CountsHowEachEndWasFoundAndHowLateItWasSeen) {
  FollowerCalls calls(target_.client(), /*qps=*/5, 1s);
  const WallTime end = WallClock::now();
  results::RunRecord listed;
  listed.state = RuntimeState::kSucceeded;
  listed.finished = end;
  listed.observed = end + 1500ms;
  calls.CountEnded(listed, /*by_listing=*/true);
  results::RunRecord polled = listed;
  polled.observed = end - 2s;  // a clock that disagrees: no negative lag
  calls.CountEnded(polled, /*by_listing=*/false);
  results::RunRecord never_seen = listed;
  never_seen.observed = WallTime{};  // its end was never observed: no lag at all
  calls.CountEnded(never_seen, /*by_listing=*/false);
  calls.CountSweep();
  calls.CountSweep();

  results::ObserverSummary s = calls.Summary();
  EXPECT_EQ(s.runs_by_listing, 1u);
  EXPECT_EQ(s.runs_by_polling, 2u);
  EXPECT_EQ(s.list_sweeps, 2u);
  EXPECT_EQ(s.qps_budget, 5);
  ASSERT_EQ(s.observe_lag_ms.count(), 2u);
  EXPECT_EQ(s.observe_lag_ms.min(), 0);
  EXPECT_GE(s.observe_lag_ms.max(), 1490);
  EXPECT_LE(s.observe_lag_ms.max(), 1510);
  EXPECT_TRUE(s.Used());
}

TEST_F(FollowerCallsTest, ThePollingReasonIsTheFirstGiven) {
  FollowerCalls calls(target_.client(), 0, 1s);
  EXPECT_TRUE(calls.Summary().polling_reason.empty());
  EXPECT_FALSE(calls.Summary().Used());
  calls.NotePolling("the target ignores the run filter");
  calls.NotePolling("a later reason");
  EXPECT_EQ(calls.Summary().polling_reason, "the target ignores the run filter");
}

TEST_F(FollowerCallsTest, TheBudgetIsSharedByEveryFollower) {
  FollowerCalls calls(target_.client(), /*qps=*/1, 1s);
  EXPECT_EQ(&calls.budget(), &calls.budget());
  EXPECT_EQ(calls.budget().qps(), 1);
  // One call a second: a second slot is not free within the next 100 ms.
  EXPECT_TRUE(calls.budget().Acquire(WallClock::now() + 100ms));
  EXPECT_FALSE(calls.budget().Acquire(WallClock::now() + 100ms));
}

}  // namespace
}  // namespace kfpbench::harness
