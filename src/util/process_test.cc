#include "util/process.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <thread>

namespace kfpbench {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;

TEST(MergeEnv, OverridesWinAndOrderIsKept) {
  auto env = MergeEnv({"A=1", "B=2", "malformed", "A=3"}, {{"B", "x"}, {"C", "y"}, {"C", "z"}});
  EXPECT_EQ(env, (std::vector<std::string>{"A=3", "B=x", "C=z"}));
}

TEST(FindExecutable, SearchesTheChildsPath) {
  EXPECT_EQ(*FindExecutable("sh", {"PATH=/nonexistent:/bin"}, "/"), "/bin/sh");
  EXPECT_EQ(*FindExecutable("./x", {}, "/"), "./x");  // a path is taken as it is
  auto missing = FindExecutable("sh", {"PATH=/nonexistent"}, "/");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "command not found: 'sh' (PATH=/nonexistent)");
  EXPECT_FALSE(FindExecutable("", {}, "/").ok());
}

TEST(RunCapture, KeepsStdoutAndStderrApartWithTheExitCode) {
  auto r = RunCapture({"sh", "-c", "echo out; echo err >&2; exit 4"}, seconds(5));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->exit_code, 4);
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err, "err\n");
}

TEST(RunCapture, AddsTheEnvironmentAndTakesLargeOutput) {
  auto r = Capture({{"sh", "-c", "echo \"$PHASE\"; head -c 3000000 /dev/zero"},
                    {{"PHASE", "start; rm -rf /"}},
                    seconds(10)});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(r->out.size(), 16 + 3000000u);
  EXPECT_EQ(r->out.substr(0, 16), "start; rm -rf /\n");
}

TEST(RunCapture, SignalsAreReportedAs128Plus) {
  auto r = RunCapture({"sh", "-c", "kill -TERM $$"}, seconds(5));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->exit_code, 128 + SIGTERM);
}

TEST(RunCapture, ErrorsNameTheCommand) {
  auto start = std::chrono::steady_clock::now();
  auto slow = RunCapture({"sleep", "5"}, milliseconds(100));
  ASSERT_FALSE(slow.ok());
  EXPECT_EQ(slow.error().message, "sleep did not finish within 100 ms");
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(3));
  auto partial = Capture({{"sh", "-c", "echo started; exec sleep 5"}, {}, milliseconds(200)});
  ASSERT_TRUE(partial.ok()) << partial.error().message;
  EXPECT_TRUE(partial->timed_out);
  EXPECT_EQ(partial->out, "started\n");
  auto missing = RunCapture({"no-such-program-kfpbench"}, seconds(5));
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr("command not found: 'no-such-program-kfpbench'"));
  auto unrunnable = RunCapture({"/nonexistent/prog"}, seconds(5));
  ASSERT_FALSE(unrunnable.ok());
  EXPECT_EQ(unrunnable.error().message,
            "cannot run '/nonexistent/prog': No such file or directory");
  EXPECT_FALSE(RunCapture({}, seconds(5)).ok());
}

TEST(KillGroup, EndsTheLeaderAndWhatItStarted) {
  SpawnRequest request;
  request.path = "/bin/sh";
  request.argv = {"sh", "-c", "trap '' TERM; sleep 30 & wait"};  // ignores SIGTERM
  request.env = CurrentEnv();
  auto pid = Spawn(request);
  ASSERT_TRUE(pid.ok()) << pid.error().message;
  EXPECT_EQ(PollExit(*pid), std::nullopt);
  auto start = std::chrono::steady_clock::now();
  KillGroup(*pid, milliseconds(200));
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(5));
  bool gone = false;  // the orphaned sleep is reaped by init, soon
  for (int i = 0; i < 300 && !gone; ++i) {
    gone = ::kill(-*pid, 0) != 0;
    if (!gone) std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_TRUE(gone);
  EXPECT_EQ(PollExit(*pid), 255);  // already reaped
}

}  // namespace
}  // namespace kfpbench
