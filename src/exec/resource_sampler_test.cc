#include "exec/resource_sampler.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "util/process.h"
#include "util/sanitizers.h"
#include "util/units.h"

namespace kfpbench::exec {
namespace {

std::string KfpbenchBinary() { return std::string(KFPBENCH_BINARY_DIR) + "/kfpbench"; }

pid_t SpawnShell(const std::string& script) {
  SpawnRequest request;
  request.path = "/bin/sh";
  request.argv = {"sh", "-c", script};
  request.env = CurrentEnv();
  request.cwd = std::filesystem::temp_directory_path();
  auto pid = Spawn(request);
  return pid.ok() ? *pid : -1;
}

// Waits for the child; its CPU time (and its waited-for descendants') goes to
// `cpu_seconds` when given.
int WaitFor(pid_t pid, double* cpu_seconds = nullptr) {
  int status = 0;
  rusage usage{};
  while (wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  if (cpu_seconds != nullptr) {
    *cpu_seconds = usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec +
                   usage.ru_stime.tv_usec / 1e6;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A step made of two processes in one group: one burns a core, the other
// holds 200 MiB. The sampler must see the group as a whole.
TEST(ResourceSamplerTest, SumsCpuAndMemoryOverTheWholeProcessGroup) {
  if (!std::filesystem::exists(KfpbenchBinary())) GTEST_SKIP() << "no kfpbench binary";
  ResourceSamplerOptions options;
  options.discover_children_of = -1;  // only what the test tracks
  ResourceSampler sampler(options);
  const std::string bin = KfpbenchBinary();
  pid_t pid = SpawnShell(bin + " step --duration 3s --memory 200Mi & " + bin +
                         " step --duration 3s --cpu 1; wait");
  ASSERT_GT(pid, 0);
  sampler.Track(pid);
  double kernel_cpu_seconds = 0;
  ASSERT_EQ(WaitFor(pid, &kernel_cpu_seconds), 0);
  sampler.Stop();

  auto profile = sampler.Profile(pid);
  ASSERT_TRUE(profile.has_value());
  // About 30 samples at 100 ms; a loaded machine may stretch the intervals.
  ASSERT_GE(profile->samples.size(), 10u);
  double cpu_peak = 0;
  int64_t memory_peak = 0;
  for (const auto& s : profile->samples) {
    cpu_peak = std::max(cpu_peak, s.cpu_cores);
    memory_peak = std::max(memory_peak, s.memory_bytes);
  }
  // One busy thread, so about a core most of the time; but while the other
  // process touches its 200 MiB both use CPU, so the peak is bounded only by
  // the machine's cores. How much CPU the group got depends on the machine's
  // load, so the total is checked against what the kernel says it used: the
  // sampler misses at most the last interval.
  std::vector<double> cores;
  for (const auto& s : profile->samples) cores.push_back(s.cpu_cores);
  std::nth_element(cores.begin(), cores.begin() + cores.size() / 2, cores.end());
  EXPECT_GT(kernel_cpu_seconds, 0.1);
  EXPECT_GT(cpu_peak, 0.02);
  EXPECT_LT(cores[cores.size() / 2], 1.3);
  // One interval can read above the cores: /proc counts CPU in 10 ms ticks
  // per process, and on a loaded machine an interval's CPU can be charged
  // just after its end (2.36 seen on 2 cores at a load average of 7). A
  // process counted twice would read twice the cores.
  EXPECT_LT(cpu_peak, 1.5 * std::thread::hardware_concurrency());
  EXPECT_GE(profile->cpu_seconds, 0.6 * kernel_cpu_seconds);
  EXPECT_LE(profile->cpu_seconds, kernel_cpu_seconds + 0.05);
  // 200 MiB touched, plus two small processes and a shell (each far larger
  // under AddressSanitizer).
  EXPECT_GE(memory_peak, 190 * kMi);
  EXPECT_LT(memory_peak, (kUnderAddressSanitizer ? 1000 : 400) * kMi);
  EXPECT_TRUE(profile->task_id.empty());
}

TEST(ResourceSamplerTest, IdleStepUsesLittleCpuAndAGoneGroupReadsAsNothing) {
  if (!std::filesystem::exists(KfpbenchBinary())) GTEST_SKIP() << "no kfpbench binary";
  ResourceSamplerOptions options;
  options.discover_children_of = -1;
  ResourceSampler sampler(options);
  pid_t pid = SpawnShell("exec " + KfpbenchBinary() + " step --duration 1500ms");
  ASSERT_GT(pid, 0);
  sampler.Track(pid);
  ASSERT_EQ(WaitFor(pid), 0);
  sampler.Stop();
  auto profile = sampler.Profile(pid);
  ASSERT_TRUE(profile.has_value());
  ASSERT_FALSE(profile->samples.empty());
  std::vector<double> cpu;
  for (const auto& s : profile->samples) cpu.push_back(s.cpu_cores);
  std::sort(cpu.begin(), cpu.end());
  EXPECT_LT(cpu[cpu.size() / 2], 0.2);  // the median sample of a sleeping step
  EXPECT_FALSE(ReadGroupUsage(pid).has_value());
}

// Discovery: children of this process that lead their own group and carry
// KFP_TASK_ID are sampled without being told, and named by that id.
TEST(ResourceSamplerTest, DiscoversTaskProcessesByTheirEnvironment) {
  ResourceSampler sampler;  // children of this process
  SpawnRequest request;
  request.path = "/bin/sh";
  request.argv = {"sh", "-c", "sleep 1"};
  request.env = MergeEnv(CurrentEnv(), {{"KFP_TASK_ID", "task-42"}, {"KFP_RUN_ID", "run-7"}});
  request.cwd = std::filesystem::temp_directory_path();
  auto task = Spawn(request);
  ASSERT_TRUE(task.ok());
  request.env = CurrentEnv();  // no task id: not a task, not sampled
  auto other = Spawn(request);
  ASSERT_TRUE(other.ok());
  WaitFor(*task);
  WaitFor(*other);
  sampler.Stop();
  auto profile = sampler.Profile(*task);
  ASSERT_TRUE(profile.has_value());
  EXPECT_EQ(profile->task_id, "task-42");
  EXPECT_EQ(profile->run_id, "run-7");
  EXPECT_FALSE(profile->samples.empty());
  EXPECT_FALSE(sampler.Profile(*other).has_value());
}

}  // namespace
}  // namespace kfpbench::exec
