#include "exec/step_workload.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "exec/test_support.h"
#include "util/files.h"

namespace kfpbench::exec {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

TEST(ParseStepArgsTest, DefaultsToNothing) {
  auto options = ParseStepArgs({});
  ASSERT_TRUE(options.ok());
  EXPECT_EQ(options->duration, Duration(0));
  EXPECT_EQ(options->cpu, 0);
  EXPECT_EQ(options->memory_bytes, 0);
  EXPECT_TRUE(options->output_params.empty());
  EXPECT_EQ(options->exit_code, 0);
}

TEST(ParseStepArgsTest, ParsesEveryFlag) {
  auto options =
      ParseStepArgs({"--duration", "2s", "--cpu", "0.5", "--memory", "256Mi", "--output-param",
                     "/tmp/a/data=x=y", "--output-param=/tmp/b=", "--fail-with", "3"});
  ASSERT_TRUE(options.ok()) << options.error().message;
  EXPECT_EQ(options->duration, 2s);
  EXPECT_DOUBLE_EQ(options->cpu, 0.5);
  EXPECT_EQ(options->memory_bytes, 256LL << 20);
  using P = std::pair<std::string, std::string>;
  EXPECT_THAT(options->output_params,
              ::testing::ElementsAre(P{"/tmp/a/data", "x=y"}, P{"/tmp/b", ""}));
  EXPECT_EQ(options->exit_code, 3);
}

TEST(ParseStepArgsTest, AcceptsEqualsFormsBareSecondsAndMillicores) {
  auto options = ParseStepArgs({"--duration=1.5", "--cpu=250m", "--memory=1000", "--fail-with=0"});
  ASSERT_TRUE(options.ok()) << options.error().message;
  EXPECT_EQ(options->duration, 1500ms);
  EXPECT_DOUBLE_EQ(options->cpu, 0.25);
  EXPECT_EQ(options->memory_bytes, 1000);
  EXPECT_EQ(options->exit_code, 0);
}

TEST(ParseStepArgsTest, ErrorsNameTheFlag) {
  struct Case {
    std::vector<std::string> args;
    std::string flag;
  };
  const Case cases[] = {
      {{"--bogus", "1"}, "--bogus"},
      {{"--bogus=1"}, "--bogus"},
      {{"positional"}, "positional"},
      {{"-d", "1s"}, "-d"},
      {{"--duration"}, "--duration"},
      {{"--duration", "abc"}, "--duration"},
      {{"--duration", "-1s"}, "--duration"},
      {{"--duration="}, "--duration"},
      {{"--cpu", "abc"}, "--cpu"},
      {{"--cpu", "-1"}, "--cpu"},
      {{"--cpu", "100000"}, "--cpu"},
      {{"--memory", "12Xi"}, "--memory"},
      {{"--memory", "-5"}, "--memory"},
      {{"--memory"}, "--memory"},
      {{"--output-param", "novalue"}, "--output-param"},
      {{"--output-param", "=value"}, "--output-param"},
      {{"--output-param"}, "--output-param"},
      {{"--fail-with", "abc"}, "--fail-with"},
      {{"--fail-with", "256"}, "--fail-with"},
      {{"--fail-with", "-1"}, "--fail-with"},
      {{"--fail-with", "1x"}, "--fail-with"},
      {{"--fail-with", ""}, "--fail-with"},
  };
  for (const auto& c : cases) {
    auto options = ParseStepArgs(c.args);
    ASSERT_FALSE(options.ok()) << ::testing::PrintToString(c.args);
    EXPECT_THAT(options.error().message, HasSubstr(c.flag)) << ::testing::PrintToString(c.args);
  }
}

TEST(RunStepTest, WritesOutputParametersWithoutNewline) {
  testing::TempDir tmp;
  StepOptions options;
  options.output_params = {{(tmp.path() / "a" / "b" / "data").string(), "hello"},
                           {(tmp.path() / "n").string(), "42"}};
  EXPECT_EQ(RunStep(options), 0);
  EXPECT_EQ(ReadSmallFile(tmp.path() / "a" / "b" / "data"), "hello");
  EXPECT_EQ(ReadSmallFile(tmp.path() / "n"), "42");
}

TEST(RunStepTest, UnwritableOutputFails) {
  testing::TempDir tmp;
  std::ofstream(tmp.path() / "file") << "x";
  StepOptions options;
  options.output_params = {{(tmp.path() / "file" / "data").string(), "v"}};
  EXPECT_NE(RunStep(options), 0);
}

TEST(RunStepTest, LastsAtLeastTheDurationAndExitsWithTheFailCode) {
  StepOptions options;
  options.duration = 200ms;
  options.exit_code = 7;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(RunStep(options), 7);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 200ms);
}

// Runs the step in a forked child (so usage is the step's alone) and returns
// its rusage; the test process has no other threads at this point.
rusage RunStepInChild(const StepOptions& options, int* exit_code) {
  pid_t pid = fork();
  if (pid == 0) _exit(RunStep(options));
  int status = 0;
  rusage usage{};
  EXPECT_EQ(wait4(pid, &status, 0, &usage), pid);
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return usage;
}

double CpuSeconds(const rusage& usage) {
  return usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec +
         usage.ru_stime.tv_usec / 1e6;
}

TEST(RunStepTest, HoldsTheMemory) {
  StepOptions options;
  options.duration = 50ms;
  options.memory_bytes = 64LL << 20;
  int code = -1;
  rusage usage = RunStepInChild(options, &code);
  EXPECT_EQ(code, 0);
  EXPECT_GE(usage.ru_maxrss * 1024, 64LL << 20);
}

TEST(RunStepTest, BurnsCpu) {
  StepOptions options;
  options.duration = 300ms;
  options.cpu = 1;
  int code = -1;
  rusage usage = RunStepInChild(options, &code);
  EXPECT_EQ(code, 0);
  // Lower bound only, and a loose one: the two shared cores may be busy with
  // other work. A step that only slept would use well under a millisecond.
  EXPECT_GT(CpuSeconds(usage), 0.01);
}

TEST(RunStepTest, FractionalCpuIdlesPartOfTheTime) {
  StepOptions options;
  options.duration = 400ms;
  options.cpu = 0.25;
  int code = -1;
  rusage usage = RunStepInChild(options, &code);
  EXPECT_EQ(code, 0);
  // 0.25 cores for 0.4s is 0.1s; a full core would be 0.4s. Load can only
  // lower it, so an upper bound is safe.
  const double cpu = CpuSeconds(usage);
  EXPECT_LT(cpu, 0.25);
  EXPECT_GT(cpu, 0.0);
}

}  // namespace
}  // namespace kfpbench::exec
