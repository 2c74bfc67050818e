// The two ways a mode sends load: closed-loop workers each numbering their
// turns, and open-loop arrivals whose intended times are the schedule's, not
// the server's pace.
#include "harness/load_loops.h"

#include <atomic>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/test_support.h"

namespace kfpbench::harness {
namespace {

class LoadLoopsTest : public testing::EmbeddedTargetTest {
 protected:
  void SetUp() override {
    EmbeddedTargetTest::SetUp();
    options_ = Options();
    context_ = std::make_unique<Context>(session_->client(), runs_, options_, WallClock::now());
  }
  results::RunLog runs_;
  HarnessOptions options_;
  std::unique_ptr<Context> context_;
};

TEST_F(LoadLoopsTest, ClosedLoopWorkersNumberTheirTurnsAndStopAtTheEnd) {
  std::mutex mu;
  std::map<int, std::vector<int>> turns;  // worker -> its n, in order
  const WallTime end = WallClock::now() + std::chrono::milliseconds(500);
  DriveClosedLoop(*context_, 3, end, [&](int worker, int n) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::lock_guard lock(mu);
    turns[worker].push_back(n);
    return true;
  });
  EXPECT_GE(WallClock::now(), end);
  ASSERT_EQ(turns.size(), 3u);
  for (const auto& [worker, ns] : turns) {
    for (size_t i = 0; i < ns.size(); ++i) EXPECT_EQ(ns[i], static_cast<int>(i)) << worker;
  }
  // Returned: no worker is left running.
  size_t total = 0;
  for (const auto& [worker, ns] : turns) total += ns.size();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  size_t after = 0;
  for (const auto& [worker, ns] : turns) after += ns.size();
  EXPECT_EQ(after, total);
}

TEST_F(LoadLoopsTest, AFailedTurnIsFollowedByAPollIntervalsPause) {
  std::atomic<int> calls{0};
  // A poll interval longer than the loop: a worker whose turn fails waits it
  // out instead of hammering the server, so it makes one turn at most.
  options_.poll_interval = std::chrono::seconds(2);
  Context slow(session_->client(), runs_, options_, WallClock::now());
  DriveClosedLoop(slow, 2, WallClock::now() + std::chrono::milliseconds(500), [&](int, int) {
    ++calls;
    return false;
  });
  EXPECT_GE(calls.load(), 1);
  EXPECT_LE(calls.load(), 2);
}

TEST_F(LoadLoopsTest, OpenLoopArrivalsKeepTheScheduleWhateverTheSendersDo) {
  Scenario scenario;
  scenario.rate_per_minute = 1200;  // one every 50 ms
  std::mutex mu;
  std::map<int, WallTime> intended;
  DriveOpenLoop(*context_, scenario, 2, WallClock::now() + std::chrono::milliseconds(500),
                [&](int n, WallTime at) {
                  // Slow senders: the schedule does not wait for them.
                  std::this_thread::sleep_for(std::chrono::milliseconds(80));
                  std::lock_guard lock(mu);
                  intended[n] = at;
                });
  // Ten arrivals due before the end, each sent once although the senders
  // fell behind, and each intended 50 ms after the last.
  ASSERT_GE(intended.size(), 9u);
  EXPECT_LE(intended.size(), 11u);
  int expected = 0;
  for (const auto& [n, at] : intended) {
    EXPECT_EQ(n, expected++);
    if (n > 0) {
      EXPECT_NEAR(ToSeconds(at - intended.at(n - 1)), 0.05, 1e-6) << n;
    }
  }
}

}  // namespace
}  // namespace kfpbench::harness
