#include "sim/virtual_loop.h"

#include <string>
#include <vector>

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

}  // namespace
}  // namespace kfpbench::sim
