#include "engine/event_loop.h"

#include <condition_variable>
#include <mutex>
#include <vector>

#include <gtest/gtest.h>

namespace kfpbench::engine {
namespace {

TEST(RealTimeLoop, RunsPostsAndTimersInOrderAndCancels) {
  RealTimeLoop loop;
  loop.Start();
  std::mutex mu;
  std::condition_variable cv;
  std::vector<int> seen;
  auto record = [&](int v) {
    std::lock_guard lock(mu);
    seen.push_back(v);
    cv.notify_all();
  };
  TimerId cancelled = loop.After(std::chrono::milliseconds(20), [&] { record(99); });
  loop.After(std::chrono::milliseconds(40), [&] { record(2); });
  loop.Post([&] { record(1); });
  loop.Cancel(cancelled);
  std::unique_lock lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(5), [&] { return seen.size() >= 2; }));
  EXPECT_EQ(seen, (std::vector<int>{1, 2}));
  lock.unlock();
  loop.Stop();
}

}  // namespace
}  // namespace kfpbench::engine
