#include "sim/virtual_loop.h"

#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace kfpbench::sim {
namespace {

using namespace std::chrono_literals;

TEST(VirtualLoop, RunsInTimeThenPostOrder) {
  VirtualLoop loop;
  const WallTime t0 = loop.Now();
  std::vector<std::string> order;
  loop.After(2s, [&] { order.push_back("b@2"); });
  loop.After(1s, [&] { order.push_back("a@1"); });
  loop.After(2s, [&] { order.push_back("c@2"); });
  loop.Post([&] {
    order.push_back("now");
    loop.After(1s, [&] { order.push_back("d@1"); });  // after a@1: posted later
  });
  loop.RunUntilIdle();
  EXPECT_EQ(order, (std::vector<std::string>{"now", "a@1", "d@1", "b@2", "c@2"}));
  EXPECT_EQ(loop.Now(), t0 + 2s);
  EXPECT_EQ(loop.events_run(), 5u);
  EXPECT_EQ(loop.pending(), 0u);
}

TEST(VirtualLoop, CancelAndStaleIds) {
  VirtualLoop loop;
  int fired = 0;
  auto id = loop.After(1s, [&] { ++fired; });
  loop.Cancel(id);
  loop.Cancel(id);         // twice: harmless
  loop.Cancel(987654321);  // never issued
  EXPECT_EQ(loop.pending(), 0u);
  loop.RunUntilIdle();
  EXPECT_EQ(fired, 0);
  // The slot is reused; the old id must not cancel the new timer.
  auto id2 = loop.After(1s, [&] { ++fired; });
  EXPECT_NE(id, id2);
  loop.Cancel(id);
  loop.RunUntilIdle();
  EXPECT_EQ(fired, 1);
}

TEST(VirtualLoop, RunUntilStopsAtTheLimitAndNegativeDelaysMeanNow) {
  VirtualLoop loop;
  const WallTime t0 = loop.Now();
  int fired = 0;
  loop.After(5s, [&] { ++fired; });
  loop.After(-3s, [&] { ++fired; });
  loop.RunUntil(t0 + 4s);
  EXPECT_EQ(fired, 1);
  EXPECT_EQ(loop.Now(), t0 + 4s);
  loop.RunUntil(t0 + 5s);
  EXPECT_EQ(fired, 2);
}

TEST(VirtualLoop, ManyEventsStayOrdered) {
  VirtualLoop loop;
  WallTime last = loop.Now();
  bool ordered = true;
  int count = 0;
  for (int i = 0; i < 10000; ++i) {
    loop.After(std::chrono::milliseconds((i * 7919) % 1000), [&] {
      ordered = ordered && loop.Now() >= last;
      last = loop.Now();
      ++count;
    });
  }
  loop.RunUntilIdle();
  EXPECT_TRUE(ordered);
  EXPECT_EQ(count, 10000);
}

// Records what fires; keys in `canceled` report themselves canceled.
class RecordingTarget : public TimerTarget {
 public:
  explicit RecordingTarget(VirtualLoop& loop, std::vector<std::string>& order)
      : loop_(loop), order_(order) {}
  bool Fire(uint32_t key, uint32_t generation) override {
    if (canceled.count(key) != 0) return false;
    order_.push_back(fmt::format("k{}/{}@{}", key, generation,
                                 (loop_.Now() - VirtualLoop::DefaultEpoch()) / 1s));
    return true;
  }
  std::set<uint32_t> canceled;

 private:
  VirtualLoop& loop_;
  std::vector<std::string>& order_;
};

TEST(VirtualLoop, KeyedTimersRunInTimeThenPostOrderWithTheRest) {
  VirtualLoop loop;
  std::vector<std::string> order;
  RecordingTarget target(loop, order);
  loop.SetTimerTarget(&target);
  loop.After(2s, [&] { order.push_back("b@2"); });
  loop.AfterKeyed(1s, 7, 3);
  loop.AfterKeyed(2s, 0x7fffffff, 1);  // the largest key
  loop.After(1s, [&] { order.push_back("a@1"); });
  loop.AfterKeyed(-1s, 1, 1);  // negative: now
  EXPECT_EQ(loop.pending(), 5u);
  loop.RunUntilIdle();
  EXPECT_EQ(order, (std::vector<std::string>{"k1/1@0", "k7/3@1", "a@1", "b@2", "k2147483647/1@2"}));
  EXPECT_EQ(loop.events_run(), 5u);
  EXPECT_EQ(loop.pending(), 0u);
}

TEST(VirtualLoop, AKeyedTimerItsTargetCanceledNeitherCountsNorMovesTheClock) {
  VirtualLoop loop;
  std::vector<std::string> order;
  RecordingTarget target(loop, order);
  loop.SetTimerTarget(&target);
  const WallTime t0 = loop.Now();
  loop.After(1s, [&] { order.push_back("a@1"); });
  loop.AfterKeyed(5s, 9, 1);
  target.canceled.insert(9);
  loop.RunUntilIdle();
  EXPECT_EQ(order, (std::vector<std::string>{"a@1"}));
  EXPECT_EQ(loop.Now(), t0 + 1s);
  EXPECT_EQ(loop.events_run(), 1u);
  EXPECT_EQ(loop.pending(), 0u);
  // With no target (it is gone), keyed timers are dropped when due.
  loop.SetTimerTarget(nullptr);
  loop.AfterKeyed(1s, 2, 1);
  loop.RunUntilIdle();
  EXPECT_EQ(order.size(), 1u);
  EXPECT_EQ(loop.Now(), t0 + 1s);
}

}  // namespace
}  // namespace kfpbench::sim
