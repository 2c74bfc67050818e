#include "util/call_budget.h"

#include <gtest/gtest.h>

#include <atomic>

namespace kfpbench {
namespace {

// Counts slots, not time: 11 calls at 100/s span at least 10 spacings.
TEST(CallBudget, SpacesCallsEvenly) {
  CallBudget budget(100);
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 11; ++i) ASSERT_TRUE(budget.Acquire());
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(99));
  EXPECT_GT(budget.waited(), Duration::zero());
  CallBudget none(0);
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(none.Acquire());
  EXPECT_EQ(none.waited(), Duration::zero());
}

TEST(CallBudget, ASlotAfterTheDeadlineIsNotTaken) {
  CallBudget slow(1);
  ASSERT_TRUE(slow.Acquire());
  EXPECT_FALSE(slow.Acquire(WallClock::now() + std::chrono::milliseconds(100)));
  // Nothing was reserved by the refusal: the next slot is still one second on.
  EXPECT_TRUE(slow.Acquire(WallClock::now() + std::chrono::seconds(30)));
}

TEST(CallBudget, AStopEndsTheWait) {
  CallBudget slow(0.001);  // one call in 1,000 s
  ASSERT_TRUE(slow.Acquire());
  int asked = 0;
  EXPECT_FALSE(slow.Acquire(WallTime::max(), [&] { return ++asked >= 3; }));
  EXPECT_EQ(asked, 3);
  CallBudget none(0);
  EXPECT_FALSE(none.Acquire(WallTime::max(), [] { return true; }));
}

}  // namespace
}  // namespace kfpbench
