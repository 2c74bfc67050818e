#include "exec/limits.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/event_loop.h"
#include "exec/process_executor.h"
#include "exec/test_support.h"
#include "util/files.h"
#include "util/process.h"

namespace kfpbench::exec {
namespace {

using testing::FailedWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

engine::Resources Limits(int64_t memory_bytes, double cpu = 0) {
  engine::Resources resources;
  resources.memory_limit = memory_bytes;
  resources.cpu_limit = cpu;
  return resources;
}

int SubDirectories(const fs::path& dir) {
  int n = 0;
  for (const auto& entry : fs::directory_iterator(dir)) n += entry.is_directory() ? 1 : 0;
  return n;
}

TEST(OomKilledMessageTest, SaysTheLimitAsAQuantity) {
  EXPECT_EQ(OomKilledMessage(64 << 20), "OOMKilled: exceeded memory limit 64Mi");
  EXPECT_EQ(OomKilledMessage(1000), "OOMKilled: exceeded memory limit 1000");
  EXPECT_EQ(OomKilledMessage(0), "OOMKilled: out of memory");
}

TEST(LimiterTest, WithoutCgroupHierarchiesFallsBackAndSaysSo) {
  testing::TempDir tmp;
  LimiterOptions options;
  options.proc_self_cgroup = tmp.path() / "cgroup";
  options.proc_self_mountinfo = tmp.path() / "mountinfo";
  std::ofstream(options.proc_self_cgroup) << "0::/\n";
  std::ofstream(options.proc_self_mountinfo) << "";
  Limiter limiter(options);
  EXPECT_FALSE(limiter.memory_cgroups());
  EXPECT_FALSE(limiter.cpu_cgroups());
  EXPECT_THAT(limiter.Describe(), HasSubstr("no cgroup v1 memory hierarchy"));
}

class LimitsTest : public testing::ShellTaskTest {
 protected:
  engine::TaskLaunch Sh(const std::string& script, engine::Resources resources,
                        const std::string& task_id = "task-1") {
    engine::TaskLaunch launch = ShellTaskTest::Sh(script, {}, task_id);
    launch.resources = resources;
    return launch;
  }
};

#define SKIP_WITHOUT_CGROUPS(limiter)                          \
  if (!(limiter).memory_cgroups() || !(limiter).cpu_cgroups()) \
  GTEST_SKIP() << "cgroup v1 memory and cpu are not writable here: " << (limiter).Describe()

TEST_F(LimitsTest, StepBeyondItsMemoryLimitIsOomKilled) {
  ProcessExecutor executor(loop_);
  SKIP_WITHOUT_CGROUPS(executor.limiter());
  // dd fills its whole 256 MiB buffer from /dev/zero before writing it.
  engine::TaskResult result =
      Run(executor, Sh("exec dd if=/dev/zero of=/dev/null bs=256M count=1", Limits(64 << 20)));
  EXPECT_THAT(result, FailedWith(StartsWith("OOMKilled: exceeded memory limit 64Mi")));
  EXPECT_EQ(result.exit_code, 128 + SIGKILL);
  EXPECT_LE(result.peak_rss_bytes, 64 << 20);
}

TEST_F(LimitsTest, OomKillOfAChildFailsTheTaskEvenIfTheMainProcessSucceeds) {
  ProcessExecutor executor(loop_);
  SKIP_WITHOUT_CGROUPS(executor.limiter());
  engine::TaskResult result =
      Run(executor, Sh("dd if=/dev/zero of=/dev/null bs=256M count=1; exit 0", Limits(64 << 20)));
  EXPECT_THAT(result, FailedWith(StartsWith("OOMKilled: exceeded memory limit 64Mi")));
}

TEST_F(LimitsTest, StepWithinItsLimitSucceedsAndReportsCgroupPeak) {
  ProcessExecutor executor(loop_);
  SKIP_WITHOUT_CGROUPS(executor.limiter());
  engine::TaskResult result =
      Run(executor, Sh("exec dd if=/dev/zero of=/dev/null bs=32M count=2", Limits(256 << 20)));
  ASSERT_TRUE(result.succeeded) << result.error;
  EXPECT_GE(result.peak_rss_bytes, 32 << 20);
  EXPECT_LE(result.peak_rss_bytes, 256 << 20);
}

TEST_F(LimitsTest, CpuLimitThrottlesABusyStep) {
  ProcessExecutor executor(loop_);
  SKIP_WITHOUT_CGROUPS(executor.limiter());
  testing::DoneWaiter waiter;
  const auto start = std::chrono::steady_clock::now();
  executor.Launch(Sh("while :; do :; done", Limits(0, 0.2)), waiter.Callback());
  std::this_thread::sleep_for(2s);
  executor.Cancel("task-1");
  auto result = waiter.Wait(60s);
  ASSERT_TRUE(result);
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // A loop alone would get ~1 CPU-second per second; the quota gives 0.2.
  // Loose bound: only that throttling happened, not how exactly.
  EXPECT_GT(result->cpu_seconds, 0.0);
  EXPECT_LT(result->cpu_seconds / wall, 0.5) << result->cpu_seconds << " s over " << wall;
}

TEST_F(LimitsTest, TaskCgroupsAreRemovedAfterTheTaskAndParentsWithTheExecutor) {
  fs::path memory_parent, cpu_parent;
  {
    ProcessExecutor executor(loop_);
    SKIP_WITHOUT_CGROUPS(executor.limiter());
    memory_parent = executor.limiter().memory_parent();
    cpu_parent = executor.limiter().cpu_parent();
    ASSERT_TRUE(fs::is_directory(memory_parent));
    ASSERT_TRUE(fs::is_directory(cpu_parent));
    engine::Resources resources = Limits(64 << 20, 0.5);
    // The task's own cgroup holds it while it runs.
    auto launch = Sh("cat /proc/self/cgroup > cgroups.txt", resources);
    const fs::path cgroups_file = launch.work_dir / "cgroups.txt";
    engine::TaskResult result = Run(executor, std::move(launch));
    ASSERT_TRUE(result.succeeded) << result.error;
    EXPECT_THAT(ReadSmallFile(cgroups_file), HasSubstr(memory_parent.filename().string() + "/"));
    EXPECT_EQ(SubDirectories(memory_parent), 0);
    EXPECT_EQ(SubDirectories(cpu_parent), 0);

    // A task still running when the executor goes away is removed with it.
    testing::DoneWaiter waiter;
    executor.Launch(Sh("exec sleep 30", resources, "task-2"), waiter.Callback());
  }
  EXPECT_FALSE(fs::exists(memory_parent));
  EXPECT_FALSE(fs::exists(cpu_parent));
}

TEST_F(LimitsTest, RemoveKillsProcessesThatLeftTheGroup) {
  Limiter limiter;
  SKIP_WITHOUT_CGROUPS(limiter);
  testing::TempDir tmp;
  const fs::path pid_file = tmp.path() / "escaped.pid";
  std::string note;
  auto cgroup = limiter.Prepare("escape", Limits(64 << 20), note);
  ASSERT_TRUE(cgroup.ok()) << cgroup.error().message;
  EXPECT_TRUE(note.empty()) << note;
  // setsid-like escape: a background sleep in its own session survives the
  // group kill, but not the cgroup's.
  WrappedCommand command =
      WrapForLimits(*cgroup, "/bin/sh",
                    {"sh", "-c", "setsid sleep 30 & echo $! > " + pid_file.string() + "; wait"});
  SpawnRequest request;
  request.path = command.path;
  request.argv = command.argv;
  request.env = CurrentEnv();
  request.stdout_fd = 1;
  auto pid = Spawn(request);
  ASSERT_TRUE(pid.ok()) << pid.error().message;
  pid_t escaped = 0;
  for (int i = 0; i < 500 && escaped == 0; ++i) {
    escaped = std::atoi(ReadSmallFile(pid_file).c_str());
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_GT(escaped, 0);
  kill(-*pid, SIGKILL);
  int status;
  waitpid(*pid, &status, 0);
  limiter.Remove(*cgroup);
  EXPECT_FALSE(fs::exists(cgroup->memory));
  EXPECT_FALSE(fs::exists(cgroup->cpu));
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    std::string stat = ReadSmallFile(fmt::format("/proc/{}/stat", escaped));
    gone = stat.empty() || stat.find(") Z") != std::string::npos;
    if (!gone) std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(gone);
}

TEST_F(LimitsTest, FallbackLimitsAddressSpaceAndSaysCpuIsNotEnforced) {
  ProcessExecutorOptions options;
  options.limits.use_cgroups = false;
  ProcessExecutor executor(loop_, options);
  engine::TaskResult result =
      Run(executor, Sh("exec dd if=/dev/zero of=/dev/null bs=256M count=1", Limits(64 << 20, 0.2)));
  EXPECT_FALSE(result.succeeded);
  const std::string log = ReadSmallFile(result.log_path);
  EXPECT_THAT(log, HasSubstr("memory limit 64Mi applied as RLIMIT_AS"));
  EXPECT_THAT(log, HasSubstr("CPU limit 0.2 is not enforced"));
}

}  // namespace
}  // namespace kfpbench::exec
