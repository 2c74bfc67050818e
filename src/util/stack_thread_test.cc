#include "util/stack_thread.h"

#include <gtest/gtest.h>

#include <atomic>

namespace kfpbench {
namespace {

// Recurses `depth` times with a 1 KiB frame each; the volatile keeps the
// frames from being folded away. Returns depth + 1.
int Deep(int depth) {
  volatile char frame[1024];
  frame[0] = 1;
  if (depth == 0) return frame[0];
  return Deep(depth - 1) + frame[0];
}

TEST(StackThread, RunsItsBodyWithTheStackItAskedFor) {
  // 32 MiB of frames: past the 8 MiB a std::thread gets.
  std::atomic<int> result{-1};
  StackThread t([&] { result = Deep(32 * 1024); }, size_t{64} << 20);
  EXPECT_TRUE(t.joinable());
  t.join();
  EXPECT_FALSE(t.joinable());
  EXPECT_EQ(result.load(), 32 * 1024 + 1);
}

TEST(StackThread, KnowsWhetherTheCallerRunsOnIt) {
  std::atomic<bool> inside{false};
  StackThread t;
  EXPECT_FALSE(t.joinable());
  std::atomic<bool> go{false};
  t = StackThread([&] {
    while (!go) {
    }
    inside = t.IsCurrent();
  });
  EXPECT_FALSE(t.IsCurrent());
  go = true;
  t.join();
  EXPECT_TRUE(inside.load());
}

}  // namespace
}  // namespace kfpbench
