#include "exec/process_executor.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "exec/test_support.h"
#include "util/files.h"

namespace kfpbench::exec {
namespace {

using testing::FailedWith;
using ::testing::HasSubstr;
using ::testing::Not;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

// Alive and not a zombie: an orphan whose reaper (init in a container) does
// not reap still counts as dead.
bool IsAlive(pid_t pid) {
  std::string stat = ReadSmallFile(fmt::format("/proc/{}/stat", pid));
  if (stat.empty()) return false;
  size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z';
}

bool EventuallyDead(pid_t pid) {
  for (int i = 0; i < 200 && IsAlive(pid); ++i) std::this_thread::sleep_for(10ms);
  return !IsAlive(pid);
}

// Polls for a file the step writes (e.g. a pid), returning its contents.
std::string WaitForFile(const fs::path& path) {
  for (int i = 0; i < 200; ++i) {
    std::string text = ReadSmallFile(path);
    if (!text.empty() && text.back() == '\n') return text;
    std::this_thread::sleep_for(10ms);
  }
  return "";
}

class ProcessExecutorTest : public testing::ShellTaskTest {};

TEST_F(ProcessExecutorTest, SucceedsAndReadsOutputParameters) {
  ProcessExecutor executor(loop_);
  auto launch = Sh(R"(printf 42 > "$1"; printf 'two words' > "$2"; echo hello)");
  // Parent directories do not exist yet: the executor creates them, like
  // KFP's launcher does.
  const fs::path a = launch.work_dir / "outputs" / "a" / "data";
  const fs::path b = launch.work_dir / "outputs" / "b" / "data";
  launch.argv.push_back(a);
  launch.argv.push_back(b);
  launch.output_parameter_files = {{"a", a}, {"b", b}};
  const fs::path work_dir = launch.work_dir;

  engine::TaskResult result = Run(executor, std::move(launch));
  EXPECT_TRUE(result.succeeded) << result.error;
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.error, "");
  EXPECT_THAT(result.output_parameters, ::testing::ElementsAre(::testing::Pair("a", "42"),
                                                               ::testing::Pair("b", "two words")));
  EXPECT_EQ(result.log_path, (work_dir / "log.txt").string());
  EXPECT_EQ(ReadSmallFile(result.log_path), "hello\n");
  EXPECT_EQ(executor.running(), 0u);
}

TEST_F(ProcessExecutorTest, DoneRunsOnTheLoopThread) {
  ProcessExecutor executor(loop_);
  testing::DoneWaiter loop_thread;
  loop_.Post([cb = loop_thread.Callback()] { cb({}); });
  ASSERT_TRUE(loop_thread.Wait());

  testing::DoneWaiter waiter;
  executor.Launch(Sh("true"), waiter.Callback());
  ASSERT_TRUE(waiter.Wait());
  EXPECT_EQ(waiter.thread(), loop_thread.thread());
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(waiter.calls(), 1);
}

TEST_F(ProcessExecutorTest, NonZeroExitReportsCodeAndLogTail) {
  ProcessExecutor executor(loop_);
  engine::TaskResult result = Run(executor, Sh("echo first line; echo 'went wrong' >&2; exit 3"));
  EXPECT_FALSE(result.succeeded);
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_EQ(result.error, "exit code 3; last log lines:\nfirst line\nwent wrong");
}

TEST_F(ProcessExecutorTest, LogTailIsBoundedAndStartsAtALine) {
  ProcessExecutor executor(loop_);
  engine::TaskResult result =
      Run(executor, Sh("i=0; while [ $i -lt 3000 ]; do echo line $i; i=$((i+1)); done; exit 1"));
  EXPECT_FALSE(result.succeeded);
  EXPECT_LE(result.error.size(), 2048u + 64);
  EXPECT_THAT(result.error, HasSubstr("last log lines:\nline "));
  EXPECT_TRUE(result.error.ends_with("\nline 2999")) << result.error;
}

TEST_F(ProcessExecutorTest, EmptyLogIsSaid) {
  ProcessExecutor executor(loop_);
  engine::TaskResult result = Run(executor, Sh("exit 2"));
  EXPECT_EQ(result.error, "exit code 2; the log is empty");
}

TEST_F(ProcessExecutorTest, MissingOutputFileFailsTheTask) {
  ProcessExecutor executor(loop_);
  auto launch = Sh("true");
  const fs::path out = launch.work_dir / "outputs" / "x" / "data";
  launch.output_parameter_files = {{"x", out}};
  engine::TaskResult result = Run(executor, std::move(launch));
  EXPECT_FALSE(result.succeeded);
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.error, "step did not write output parameter 'x' to " + out.string());
}

// A parameter is a protobuf string on KFP, so its launcher fails a step
// whose output parameter is not UTF-8; here such bytes also ended the server
// (nlohmann::json throws when it writes them).
TEST_F(ProcessExecutorTest, AnOutputParameterThatIsNotUtf8FailsTheTask) {
  ProcessExecutor executor(loop_);
  auto launch = Sh(R"(printf '\377\310' > "$1")");
  const fs::path out = launch.work_dir / "outputs" / "x" / "data";
  launch.argv.push_back(out);
  launch.output_parameter_files = {{"x", out}};
  engine::TaskResult result = Run(executor, std::move(launch));
  EXPECT_FALSE(result.succeeded);
  EXPECT_EQ(result.error, "output parameter 'x' at " + out.string() + " is not valid UTF-8");
  EXPECT_TRUE(result.output_parameters.empty());
}

// A log is shown, not refused: what is not UTF-8 in its tail (binary output,
// a character the cut split) becomes U+FFFD in the task's error.
TEST_F(ProcessExecutorTest, ALogTailThatIsNotUtf8IsShownWithReplacementCharacters) {
  ProcessExecutor executor(loop_);
  engine::TaskResult result = Run(executor, Sh(R"(printf 'bad \377 bytes' >&2; exit 3)"));
  EXPECT_FALSE(result.succeeded);
  EXPECT_EQ(result.error, "exit code 3; last log lines:\nbad \xEF\xBF\xBD bytes");
}

TEST_F(ProcessExecutorTest, StaleOutputFileFromAnEarlierAttemptDoesNotCount) {
  ProcessExecutor executor(loop_);
  auto launch = Sh("true");
  const fs::path out = launch.work_dir / "x";
  std::ofstream(out) << "old";
  launch.output_parameter_files = {{"x", out}};
  engine::TaskResult result = Run(executor, std::move(launch));
  EXPECT_THAT(result, FailedWith(HasSubstr("did not write output parameter 'x'")));
}

TEST_F(ProcessExecutorTest, CommandNotFoundFailsCleanly) {
  ProcessExecutor executor(loop_);
  auto launch = Sh("");
  launch.argv = {"kfpbench-no-such-command", "arg"};
  engine::TaskResult result = Run(executor, launch);
  EXPECT_THAT(result, FailedWith(HasSubstr("command not found: 'kfpbench-no-such-command'")));
  EXPECT_THAT(ReadSmallFile(result.log_path), HasSubstr("command not found"));

  launch.argv = {"/no/such/binary"};
  result = Run(executor, launch);
  EXPECT_THAT(result,
              FailedWith(HasSubstr("cannot run '/no/such/binary': No such file or directory")));

  launch.argv = {};
  result = Run(executor, launch);
  EXPECT_THAT(result, FailedWith(::testing::Eq("empty command")));
}

// exec would end each string at its first NUL: the step would run with an
// argument cut short, and succeed.
TEST_F(ProcessExecutorTest, ANulInAnArgumentOrVariableFailsTheStepBeforeItStarts) {
  ProcessExecutor executor(loop_);
  auto launch = Sh("echo \"$1\"", {std::string("a\0b", 3)});
  engine::TaskResult result = Run(executor, launch);
  EXPECT_THAT(result, FailedWith(::testing::ContainsRegex("argument [0-9]+ holds a NUL byte")));
  launch = Sh("true");
  launch.env.emplace_back("SECRET", std::string("to\0ken", 6));
  result = Run(executor, launch);
  EXPECT_THAT(result, FailedWith(HasSubstr("environment variable SECRET holds a NUL byte")));
  EXPECT_THAT(result.error, ::testing::Not(HasSubstr("ken")));  // values may be secrets
}

TEST_F(ProcessExecutorTest, MissingWorkDirFailsCleanly) {
  ProcessExecutor executor(loop_);
  auto launch = Sh("true");
  launch.work_dir = tmp_.path() / "does-not-exist";
  engine::TaskResult result = Run(executor, std::move(launch));
  EXPECT_THAT(result, FailedWith(HasSubstr("does not exist")));
}

TEST_F(ProcessExecutorTest, SearchesPathForBareCommands) {
  ProcessExecutor executor(loop_);
  auto launch = Sh("");
  launch.argv = {"sh", "-c", "printf found > \"$1\"", "sh", (launch.work_dir / "out").string()};
  launch.output_parameter_files = {{"out", launch.work_dir / "out"}};
  engine::TaskResult result = Run(executor, std::move(launch));
  EXPECT_TRUE(result.succeeded) << result.error;
  EXPECT_EQ(result.output_parameters["out"], "found");
}

TEST_F(ProcessExecutorTest, KilledBySignalNamesTheSignal) {
  ProcessExecutor executor(loop_);
  engine::TaskResult result = Run(executor, Sh("echo about to die; kill -KILL $$"));
  EXPECT_FALSE(result.succeeded);
  EXPECT_EQ(result.exit_code, 128 + SIGKILL);
  EXPECT_THAT(result.error, HasSubstr("killed by signal SIGKILL (9)"));
  EXPECT_THAT(result.error, HasSubstr("about to die"));
}

TEST_F(ProcessExecutorTest, SetsEnvAndWorkDir) {
  ASSERT_EQ(setenv("KFPBENCH_EXEC_TEST_PARENT", "inherited", 1), 0);
  ProcessExecutor executor(loop_);
  auto launch = Sh(R"(pwd -P > "$1"; printf '%s|%s|%s|%s|%s|%s' "$FOO" "$KFP_TASK_ID" )"
                   R"("$KFP_RUN_ID" "$KFP_POD_NAME" "$KFPBENCH_EXEC_TEST_PARENT" "$HOME" > "$2")");
  const fs::path cwd_file = launch.work_dir / "cwd";
  const fs::path env_file = launch.work_dir / "env";
  launch.argv.push_back(cwd_file);
  launch.argv.push_back(env_file);
  launch.env = {{"FOO", "bar baz"}, {"HOME", "/overridden"}};
  launch.output_parameter_files = {{"cwd", cwd_file}, {"env", env_file}};
  const fs::path work_dir = fs::canonical(launch.work_dir);

  engine::TaskResult result = Run(executor, std::move(launch));
  ASSERT_TRUE(result.succeeded) << result.error;
  EXPECT_EQ(result.output_parameters["cwd"], work_dir.string() + "\n");
  EXPECT_EQ(result.output_parameters["env"],
            "bar baz|task-1|run-1|pod-task-1|inherited|/overridden");
}

TEST_F(ProcessExecutorTest, StdinIsDevNull) {
  ProcessExecutor executor(loop_);
  // Would block forever on an inherited terminal or pipe.
  engine::TaskResult result = Run(executor, Sh("cat; echo read-all"));
  EXPECT_TRUE(result.succeeded) << result.error;
}

TEST_F(ProcessExecutorTest, RunsInItsOwnProcessGroup) {
  ProcessExecutor executor(loop_);
  auto launch = Sh(R"sh(printf '%s %s' $$ "$(cut -d' ' -f5 /proc/$$/stat)" > "$1")sh");
  launch.argv.push_back(launch.work_dir / "ids");
  launch.output_parameter_files = {{"ids", launch.work_dir / "ids"}};
  engine::TaskResult result = Run(executor, std::move(launch));
  ASSERT_TRUE(result.succeeded) << result.error;
  std::istringstream ids(result.output_parameters["ids"]);
  pid_t pid = 0, pgid = 0;
  ids >> pid >> pgid;
  EXPECT_GT(pid, 0);
  EXPECT_EQ(pid, pgid);
  EXPECT_NE(pgid, getpgrp());
}

TEST_F(ProcessExecutorTest, CancelTerminatesTheWholeGroup) {
  ProcessExecutor executor(loop_);
  // The grandchild is a separate process (not the shell itself) in the group.
  auto launch = Sh("sleep 30 & echo $! > gc.pid; wait");
  const fs::path pid_file = launch.work_dir / "gc.pid";
  testing::DoneWaiter waiter;
  const auto start = std::chrono::steady_clock::now();
  executor.Launch(std::move(launch), waiter.Callback());
  const pid_t grandchild = std::atoi(WaitForFile(pid_file).c_str());
  ASSERT_GT(grandchild, 0);
  ASSERT_TRUE(IsAlive(grandchild));

  executor.Cancel("task-1");
  auto result = waiter.Wait();
  ASSERT_TRUE(result);
  EXPECT_FALSE(result->succeeded);
  EXPECT_EQ(result->error, "canceled");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);  // SIGTERM, not the 5s grace
  EXPECT_TRUE(EventuallyDead(grandchild));
  executor.Cancel("task-1");  // finished: a no-op
  EXPECT_EQ(waiter.calls(), 1);
}

TEST_F(ProcessExecutorTest, CancelEscalatesToSigkillAfterGrace) {
  ProcessExecutorOptions options;
  options.kill_grace = 200ms;
  ProcessExecutor executor(loop_, options);
  // Everyone ignores SIGTERM (the ignored disposition survives exec).
  auto launch = Sh("trap '' TERM; sleep 30 & echo $! > gc.pid; wait; wait");
  const fs::path pid_file = launch.work_dir / "gc.pid";
  testing::DoneWaiter waiter;
  executor.Launch(std::move(launch), waiter.Callback());
  const pid_t grandchild = std::atoi(WaitForFile(pid_file).c_str());
  ASSERT_GT(grandchild, 0);

  const auto cancel_time = std::chrono::steady_clock::now();
  executor.Cancel("task-1");
  auto result = waiter.Wait();
  ASSERT_TRUE(result);
  EXPECT_GE(std::chrono::steady_clock::now() - cancel_time, 200ms);
  EXPECT_EQ(result->error, "canceled");
  EXPECT_EQ(result->exit_code, 128 + SIGKILL);
  EXPECT_TRUE(EventuallyDead(grandchild));
}

TEST_F(ProcessExecutorTest, CancelOfUnknownTaskIsANoOp) {
  ProcessExecutor executor(loop_);
  executor.Cancel("nope");
  EXPECT_EQ(executor.running(), 0u);
}

TEST_F(ProcessExecutorTest, BackgroundProcessesDieWithTheMainOne) {
  ProcessExecutor executor(loop_);
  // Like a pod: once the main process exits, nothing else in it keeps running.
  auto launch = Sh("sleep 30 & echo $! > gc.pid");
  const fs::path pid_file = launch.work_dir / "gc.pid";
  engine::TaskResult result = Run(executor, std::move(launch));
  EXPECT_TRUE(result.succeeded) << result.error;
  const pid_t grandchild = std::atoi(ReadSmallFile(pid_file).c_str());
  ASSERT_GT(grandchild, 0);
  EXPECT_TRUE(EventuallyDead(grandchild));
}

TEST_F(ProcessExecutorTest, ReportsCpuSecondsAndPeakRss) {
  ProcessExecutor executor(loop_);
  engine::TaskResult result =
      Run(executor, Sh("i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"));
  ASSERT_TRUE(result.succeeded) << result.error;
  EXPECT_GT(result.cpu_seconds, 0.02);
  EXPECT_GT(result.peak_rss_bytes, 100 << 10);
}

TEST_F(ProcessExecutorTest, MeasuresABigChildsPeakRss) {
  ProcessExecutor executor(loop_);
  // dd holds its 48 MiB buffer while blocked writing to a pipe nobody reads.
  engine::TaskResult result =
      Run(executor, Sh("dd if=/dev/zero bs=48M count=1 2>/dev/null | sleep 0.3"));
  ASSERT_TRUE(result.succeeded) << result.error;
  EXPECT_GE(result.peak_rss_bytes, 40 << 20);
  EXPECT_LT(result.peak_rss_bytes, 200 << 20);
}

TEST_F(ProcessExecutorTest, SmallChildIsNotChargedForOurMemory) {
  // Raise this process's high-water RSS well above any small step's.
  constexpr size_t kBig = 128 << 20;
  {
    std::vector<char> big(kBig, 1);
    ASSERT_EQ(big[kBig / 2], 1);
  }
  ProcessExecutor executor(loop_);
  engine::TaskResult result = Run(executor, Sh("sleep 0.3"));
  ASSERT_TRUE(result.succeeded) << result.error;
  EXPECT_GT(result.peak_rss_bytes, 0);
  EXPECT_LT(result.peak_rss_bytes, 64 << 20);
}

TEST_F(ProcessExecutorTest, KfpbenchCommandRunsSelfBinary) {
  ProcessExecutorOptions options;
  options.self_binary = "/bin/echo";
  ProcessExecutor executor(loop_, options);
  auto launch = Sh("");
  launch.argv = {"kfpbench", "step", "--duration", "1s"};
  engine::TaskResult result = Run(executor, std::move(launch));
  ASSERT_TRUE(result.succeeded) << result.error;
  EXPECT_EQ(ReadSmallFile(result.log_path), "step --duration 1s\n");
}

TEST_F(ProcessExecutorTest, DefaultSelfBinaryIsThisProgram) {
  ProcessExecutor executor(loop_);
  auto launch = Sh("");
  // This test binary, asked to list one test, prints it: proves argv[0] was
  // replaced by the resolved /proc/self/exe.
  launch.argv = {"kfpbench", "--gtest_list_tests", "--gtest_filter=ProcessExecutorTest.Default*"};
  engine::TaskResult result = Run(executor, std::move(launch));
  ASSERT_TRUE(result.succeeded) << result.error;
  EXPECT_THAT(ReadSmallFile(result.log_path), HasSubstr("DefaultSelfBinaryIsThisProgram"));
}

TEST_F(ProcessExecutorTest, RunsManyTasksConcurrently) {
  ProcessExecutor executor(loop_);
  constexpr int kTasks = 16;
  std::vector<testing::DoneWaiter> waiters(kTasks);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kTasks; ++i) {
    auto launch = Sh(R"(sleep 0.3; printf '%s' "$KFP_TASK_ID" > out)", {}, fmt::format("t{}", i));
    launch.output_parameter_files = {{"out", launch.work_dir / "out"}};
    executor.Launch(std::move(launch), waiters[i].Callback());
  }
  EXPECT_EQ(executor.running(), static_cast<size_t>(kTasks));
  for (int i = 0; i < kTasks; ++i) {
    auto result = waiters[i].Wait();
    ASSERT_TRUE(result);
    EXPECT_TRUE(result->succeeded) << result->error;
    EXPECT_EQ(result->output_parameters["out"], fmt::format("t{}", i));
  }
  // In parallel, not one after another.
  EXPECT_LT(std::chrono::steady_clock::now() - start, kTasks * 300ms);
  EXPECT_EQ(executor.running(), 0u);
}

TEST_F(ProcessExecutorTest, DestructorKillsWhatIsStillRunning) {
  testing::DoneWaiter waiter;
  pid_t pid = 0;
  {
    ProcessExecutor executor(loop_);
    auto launch = Sh("echo $$ > main.pid; exec sleep 30");
    const fs::path pid_file = launch.work_dir / "main.pid";
    executor.Launch(std::move(launch), waiter.Callback());
    pid = std::atoi(WaitForFile(pid_file).c_str());
    ASSERT_GT(pid, 0);
  }
  // Killed and reaped by us, so gone from the process table entirely.
  EXPECT_FALSE(IsAlive(pid));
  EXPECT_NE(kill(pid, 0), 0);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(waiter.calls(), 0);
}

}  // namespace
}  // namespace kfpbench::exec
