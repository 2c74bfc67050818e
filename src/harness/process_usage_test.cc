// kfpbench's own CPU and memory over a stretch of time: CPU spent in between
// is counted, memory is the process's as it stands.
#include "harness/process_usage.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <thread>

namespace kfpbench::harness {
namespace {

TEST(ProcessUsage, CountsTheCpuSpentSinceTheSample) {
  const ProcessSample start = SampleProcess();
  // Busy for at least 50 ms of CPU time on this thread.
  volatile double sink = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
  while (std::chrono::steady_clock::now() < until) sink = sink + std::sqrt(sink + 1);
  const results::HarnessUsage u = UsageSince(start);
  EXPECT_TRUE(u.Measured());
  EXPECT_GE(u.wall_s, 0.2);
  EXPECT_GT(u.cpu_user_s + u.cpu_system_s, 0);
  EXPECT_GT(u.CpuCores(), 0);
  EXPECT_GT(u.rss_bytes, 0);
  EXPECT_GE(u.peak_rss_bytes, u.rss_bytes);  // the high-water mark is never below
  EXPECT_GE(u.threads, 1);
}

TEST(ProcessUsage, AStretchWithNoWorkUsesLittleCpu) {
  const ProcessSample start = SampleProcess();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const results::HarnessUsage u = UsageSince(start);
  EXPECT_GE(u.wall_s, 0.1);
  EXPECT_GE(u.cpu_user_s, 0);
  EXPECT_GE(u.cpu_system_s, 0);
}

}  // namespace
}  // namespace kfpbench::harness
