#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "kube/driver.h"
#include "kube/job_runner.h"
#include "kube/process.h"
#include "util/files.h"

namespace kfpbench::kube {
namespace {

using ::testing::HasSubstr;

std::string Env(const LocalReplica& r, const std::string& key) {
  std::string v;
  for (const auto& [k, val] : r.env) {
    if (k == key) v = val;  // the last one wins, as in a pod
  }
  return v;
}

JobConfig Config(const std::string& body) {
  auto c = ParseJobConfig(body);
  EXPECT_TRUE(c.ok()) << c.error().message;
  return *c;
}

TEST(LocalDriver, PyTorchEnvironmentLikeTheOperator) {
  auto c = Config(
      "name: t\nkind: PyTorchJob\nimage: i\ncommand: [x]\nreplicas: {Master: 1, Worker: 2}\n");
  auto plan = PlanLocalReplicas(c, ExpandSweep(c)[0], {29500}, "/tmp");
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_EQ(plan->size(), 3u);
  EXPECT_EQ((*plan)[0].name, "t-0-master-0");
  EXPECT_TRUE((*plan)[0].decides);
  EXPECT_FALSE((*plan)[1].decides);
  EXPECT_EQ(Env((*plan)[0], "RANK"), "0");
  EXPECT_EQ(Env((*plan)[2], "RANK"), "2");  // worker 1 is rank 2
  EXPECT_EQ(Env((*plan)[2], "WORLD_SIZE"), "3");
  EXPECT_EQ(Env((*plan)[1], "MASTER_ADDR"), "127.0.0.1");
  EXPECT_EQ(Env((*plan)[1], "MASTER_PORT"), "29500");
  EXPECT_EQ(Env((*plan)[1], "PYTHONUNBUFFERED"), "1");
}

TEST(LocalDriver, TfConfigLikeTheOperator) {
  auto c = Config("name: t\nkind: TFJob\nimage: i\ncommand: [x]\nreplicas: {PS: 1, Worker: 2}\n");
  auto plan = PlanLocalReplicas(c, ExpandSweep(c)[0], {1001, 1002, 1003}, "/tmp");
  ASSERT_TRUE(plan.ok());
  auto tf = nlohmann::json::parse(Env((*plan)[2], "TF_CONFIG"));
  EXPECT_EQ(tf["cluster"]["ps"], nlohmann::json({"localhost:1001"}));
  EXPECT_EQ(tf["cluster"]["worker"], nlohmann::json({"localhost:1002", "localhost:1003"}));
  EXPECT_EQ(tf["task"], nlohmann::json({{"type", "worker"}, {"index", 1}}));
  EXPECT_FALSE((*plan)[0].decides);  // no chief: workers decide, PS never exits
  EXPECT_TRUE((*plan)[1].decides);
  auto single = Config("name: t\nkind: TFJob\nimage: i\ncommand: [x]\nreplicas: {Worker: 1}\n");
  auto one = PlanLocalReplicas(single, ExpandSweep(single)[0], {1}, "/tmp");
  EXPECT_EQ(Env((*one)[0], "TF_CONFIG"), "");  // not distributed: no TF_CONFIG
}

TEST(LocalDriver, MpiHostfileAndLauncherOnly) {
  auto dir = std::filesystem::temp_directory_path() / "kfpbench-mpi-plan";
  std::filesystem::create_directories(dir);
  auto c = Config(
      "name: t\nkind: MPIJob\nimage: i\ncommand: [mpirun, x]\nreplicas: {Launcher: 1, Worker: "
      "3}\n");
  auto plan = PlanLocalReplicas(c, ExpandSweep(c)[0], {}, dir);
  ASSERT_TRUE(plan.ok());
  EXPECT_TRUE((*plan)[0].started);
  EXPECT_FALSE((*plan)[1].started);
  EXPECT_EQ(Env((*plan)[0], "OMPI_MCA_orte_default_hostfile"), (dir / "hostfile").string());
  EXPECT_EQ(ReadSmallFile(dir / "hostfile"), "localhost slots=3\n");
  std::filesystem::remove_all(dir);
}

// A shell "training script": each replica prints its rank and a rate that
// depends on the swept batch size.
const char* kShellJob = R"(
name: sh
kind: PyTorchJob
image: none
command: [sh, -c, 'echo "rank $RANK of $WORLD_SIZE"; echo "{\"samples_per_sec\": $(( {{batch_size}} * (RANK + 1) ))}"; {{extra}}']
replicas: {Master: 1, Worker: 1}
parameters: {extra: 'true'}
timeoutSeconds: 20
sweep: {grid: {batch_size: [10, 20]}}
metrics:
  samples_per_sec: {jsonl: samples_per_sec, across: sum}
  rank: {regex: 'rank (?<value>\d+) of', across: max}
)";

TEST(LocalDriver, RunsSweepAndReadsMetrics) {
  auto c = Config(kShellJob);
  LocalDriver driver({});
  auto result = RunSweep(c, driver);
  ASSERT_TRUE(result.ok()) << result.error().message;
  ASSERT_EQ(result->runs.size(), 2u);
  for (const auto& run : result->runs) EXPECT_TRUE(run.succeeded) << run.error;
  EXPECT_EQ(result->runs[0].metrics.at("samples_per_sec"), 30.0);  // 10*1 + 10*2
  EXPECT_EQ(result->runs[1].metrics.at("samples_per_sec"), 60.0);
  EXPECT_EQ(result->runs[1].metrics.at("rank"), 1.0);
  EXPECT_EQ(result->runs[1].params.at("batch_size"), "20");
}

TEST(LocalDriver, FailedReplicaFailsTheJobWithItsLogTail) {
  std::string body = kShellJob;
  body.replace(body.find("extra: 'true'"), 13,
               "extra: 'if [ $RANK = 1 ]; then echo boom-on-worker; exit 3; fi; sleep 30'");
  auto c = Config(body);
  LocalDriver driver({});
  auto point = ExpandSweep(c)[0];
  auto outcome = driver.Run(c, point);
  EXPECT_FALSE(outcome.succeeded);
  EXPECT_THAT(outcome.error, HasSubstr("replica sh-0-worker-0 exited with code 3"))
      << outcome.error;
  EXPECT_THAT(outcome.error, HasSubstr("boom-on-worker")) << outcome.error;
  EXPECT_LT(outcome.duration_seconds, 20);  // the sleeping master was killed, not waited for
}

TEST(LocalDriver, TimeoutAndMissingProgram) {
  std::string body = kShellJob;
  body.replace(body.find("extra: 'true'"), 13, "extra: 'sleep 30'");
  body.replace(body.find("timeoutSeconds: 20"), 18, "timeoutSeconds: 1");
  auto c = Config(body);
  LocalDriver driver({});
  auto outcome = driver.Run(c, ExpandSweep(c)[0]);
  EXPECT_FALSE(outcome.succeeded);
  EXPECT_THAT(outcome.error, HasSubstr("timed out after 1 s")) << outcome.error;

  auto missing =
      Config("name: m\nkind: Job\nimage: i\ncommand: [/nonexistent/prog]\nreplicas: {Worker: 1}\n");
  auto o2 = driver.Run(missing, ExpandSweep(missing)[0]);
  EXPECT_FALSE(o2.succeeded);
  EXPECT_THAT(o2.error, HasSubstr("cannot run '/nonexistent/prog': No such file")) << o2.error;
}

// Debian's Open MPI: mpirun reads the hostfile the driver wrote and starts
// the ranks here. Skipped without openmpi-bin.
TEST(LocalDriver, MpiJobRunsMpirun) {
  auto probe = RunCapture({"sh", "-c", "command -v mpirun"}, std::chrono::seconds(5));
  if (!probe.ok() || probe->exit_code != 0) GTEST_SKIP() << "mpirun (openmpi-bin) not installed";
  auto c = Config(R"(
name: mpi
kind: MPIJob
image: i
command: [mpirun, -np, "3", sh, -c, 'echo "rank $OMPI_COMM_WORLD_RANK size $OMPI_COMM_WORLD_SIZE"']
replicas: {Launcher: 1, Worker: 3}
timeoutSeconds: 30
metrics:
  size: {regex: 'size (?<value>\d+)', across: max}
  ranks: {regex: 'rank (?<value>\d+)', per_replica: sum}
)");
  LocalDriver driver({});
  auto result = RunSweep(c, driver);
  ASSERT_TRUE(result.ok());
  ASSERT_TRUE(result->runs[0].succeeded) << result->runs[0].error;
  EXPECT_EQ(result->runs[0].metrics.at("size"), 3.0);
  EXPECT_EQ(result->runs[0].metrics.at("ranks"), 3.0);  // 0 + 1 + 2: every rank ran
}

// A stand-in interpreter: imports `have`, fails on anything else as python does.
std::filesystem::path FakePython(const std::string& dir_name, const std::string& have) {
  auto dir = std::filesystem::temp_directory_path() / dir_name;
  std::filesystem::create_directories(dir);
  auto python = dir / "python3";
  std::ofstream(python) << "#!/bin/sh\n"
                        << "case \"$2\" in \"import " << have << "\") exit 0;; esac\n"
                        << "echo 'Traceback (most recent call last):' >&2\n"
                        << "echo \"ModuleNotFoundError: No module named '${2#import }'\" >&2\n"
                        << "exit 1\n";
  std::filesystem::permissions(python, std::filesystem::perms::owner_all);
  return python;
}

TEST(LocalDriver, InterpreterWithoutTheFrameworkNamedBeforeAnyReplica) {
  auto python = FakePython("kfpbench-fake-python", "numpy");
  auto status = CheckInterpreterImports(python.string(), "torch");
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.error().message, HasSubstr(python.string() + " cannot import torch"))
      << status.error().message;
  EXPECT_THAT(status.error().message, HasSubstr("No module named 'torch'"));
  EXPECT_THAT(status.error().message, HasSubstr("--set python="));
  EXPECT_TRUE(CheckInterpreterImports(python.string(), "numpy").ok());
  EXPECT_TRUE(CheckInterpreterImports("/bin/sh", "torch").ok());   // not Python: not checked
  EXPECT_TRUE(CheckInterpreterImports(python.string(), "").ok());  // the kind needs nothing
  auto missing = CheckInterpreterImports("python-kfpbench-missing", "torch");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr("not on PATH"));

  // Through a sweep: one clear error, and no replica starts.
  auto c = Config("name: t\nkind: PyTorchJob\nimage: i\ncommand: [" + python.string() +
                  ", train.py]\nreplicas: {Master: 1, Worker: 1}\nsweep: {grid: {b: [1, 2]}}\n");
  auto work = std::filesystem::temp_directory_path() / "kfpbench-preflight-work";
  std::filesystem::remove_all(work);
  LocalDriver driver({work, true});
  auto result = RunSweep(c, driver);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.error().message, HasSubstr("cannot import torch"));
  EXPECT_FALSE(std::filesystem::exists(work / "t-0"));
  EXPECT_EQ(KindInfo(JobKind::kTFJob).framework_module, "tensorflow");
  EXPECT_EQ(KindInfo(JobKind::kMPIJob).framework_module, "");
}

TEST(LocalDriver, SuggestsTheSystemInterpreterWhenItHasTheFramework) {
  auto system = RunCapture({"/usr/bin/python3", "-c", "import torch"}, std::chrono::seconds(60));
  if (!system.ok() || system->exit_code != 0) GTEST_SKIP() << "/usr/bin/python3 lacks torch";
  auto python = FakePython("kfpbench-fake-python-2", "numpy");
  auto status = CheckInterpreterImports(python.string(), "torch");
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.error().message,
              HasSubstr("/usr/bin/python3 can: pass --set python=/usr/bin/python3"))
      << status.error().message;
}

TEST(Process, Tail) {
  EXPECT_EQ(Tail("a\nb\nc\n", 2), "b\nc");
  EXPECT_EQ(Tail("a\nb", 5), "a\nb");
  EXPECT_EQ(Tail("", 3), "");
}

TEST(Process, SpawnLoggedAppendsBothStreamsToTheLogWithTheEnvironment) {
  auto dir =
      std::filesystem::temp_directory_path() / ("kfpbench-spawn-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  auto log = dir / "replica.log";
  auto pid = SpawnLogged(
      {{"sh", "-c", "echo \"out $RANK $(pwd)\"; echo err >&2; exit 3"}, {{"RANK", "2"}}, dir, log});
  ASSERT_TRUE(pid.ok()) << pid.error().message;
  std::optional<int> code;
  for (int i = 0; i < 500 && !(code = PollExit(*pid)); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(code, 3);
  EXPECT_EQ(ReadSmallFile(log), "out 2 " + dir.string() + "\nerr\n");
  auto missing = SpawnLogged({{"no-such-program-kfpbench"}, {}, dir, log});
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr("command not found: 'no-such-program-kfpbench'"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kfpbench::kube
