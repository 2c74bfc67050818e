// The Kubernetes driver against a fake `kubectl` on PATH that replays
// responses shaped like real kubectl output (training-operator v1.9 status,
// pod lists). No cluster is reachable from the tests.
#include "kube/kubectl_driver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "kube/job_runner.h"
#include "kube/process.h"
#include "util/files.h"

namespace kfpbench::kube {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

namespace fs = std::filesystem;
using nlohmann::json;

const char* kFakeKubectl = R"(#!/bin/sh
d=$(dirname "$0")
echo "$*" >> "$d/calls.log"
case "$1" in --context=*) shift;; esac
case "$1" in
  apply|create)
    if [ -f "$d/apply_fails" ]; then cat "$d/apply_fails" >&2; exit 1; fi
    if [ "$1" = create ] && [ -f "$d/exists" ]; then
      rm -f "$d/exists"
      echo 'Error from server (AlreadyExists): error when creating "/tmp/m": pytorchjobs.kubeflow.org "ddp-0" already exists' >&2
      exit 1
    fi
    cat "$3" >> "$d/applied.yaml"; echo "pytorchjob.kubeflow.org/ddp-0 created";;
  get)
    if [ "$8" = --ignore-not-found ]; then cat "$d/existing.json"; exit 0; fi
    if [ "$2" = pods ]; then cat "$d/pods.json"; exit 0; fi
    n=$(cat "$d/count" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "$d/count"
    f="$d/job-$n.json"; [ -f "$f" ] || f="$d/job-final.json"; cat "$f";;
  logs) cat "$d/logs/$4.log";;
  delete) echo "pytorchjob.kubeflow.org \"$3\" deleted";;
  *) echo "error: unknown command \"$1\" for \"kubectl\"" >&2; exit 1;;
esac
)";

json Condition(const std::string& type, const std::string& status, const std::string& reason,
               const std::string& message) {
  return {{"type", type},
          {"status", status},
          {"reason", reason},
          {"message", message},
          {"lastUpdateTime", "2025-03-01T10:00:05Z"},
          {"lastTransitionTime", "2025-03-01T10:00:05Z"}};
}

json Job(std::vector<json> conditions) {
  return {{"apiVersion", "kubeflow.org/v1"},
          {"kind", "PyTorchJob"},
          {"metadata",
           {{"name", "ddp-0"},
            {"namespace", "bench"},
            {"uid", "0b9c1c7e-5a52-4f0e-9d3c-2f1b7d0c2a11"},
            {"resourceVersion", "48213"},
            {"generation", 1},
            {"creationTimestamp", "2025-03-01T10:00:00Z"}}},
          {"spec", json::object()},
          {"status",
           {{"conditions", conditions},
            {"replicaStatuses",
             {{"Master", {{"active", 1}, {"selector", "training.kubeflow.org/job-name=ddp-0"}}},
              {"Worker", {{"active", 1}, {"selector", "training.kubeflow.org/job-name=ddp-0"}}}}},
            {"startTime", "2025-03-01T10:00:01Z"}}}};
}

json Pod(const std::string& name, const std::string& type, int index, const std::string& phase) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", name},
            {"namespace", "bench"},
            {"labels",
             {{"training.kubeflow.org/job-name", "ddp-0"},
              {"training.kubeflow.org/operator-name", "pytorchjob-controller"},
              {"training.kubeflow.org/replica-type", type},
              {"training.kubeflow.org/replica-index", std::to_string(index)}}}}},
          {"status", {{"phase", phase}}}};
}

class KubectlDriverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kfpbench-fake-kubectl-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "logs");
    std::ofstream(dir_ / "kubectl") << kFakeKubectl;
    fs::permissions(dir_ / "kubectl", fs::perms::owner_all);
    old_path_ = std::getenv("PATH");
    ::setenv("PATH", (dir_.string() + ":" + old_path_).c_str(), 1);
    auto c = ParseJobConfig(R"(
name: ddp
kind: PyTorchJob
namespace: bench
image: kfpbench:latest
command: [python3, train.py, "--batch-size={{batch_size}}"]
replicas: {Master: 1, Worker: 1}
timeoutSeconds: 5
parameters: {batch_size: 16}
metrics:
  samples_per_sec: {jsonl: samples_per_sec, across: sum}
)");
    ASSERT_TRUE(c.ok()) << c.error().message;
    config_ = *c;
    Write("pods.json", json{{"apiVersion", "v1"},
                            {"kind", "List"},
                            {"items",
                             {Pod("ddp-0-master-0", "master", 0, "Succeeded"),
                              Pod("ddp-0-worker-0", "worker", 0, "Succeeded")}},
                            {"metadata", {{"resourceVersion", ""}}}}
                           .dump(4));
    Write("logs/ddp-0-master-0.log", "starting\n{\"samples_per_sec\": 120.5}\n");
    Write("logs/ddp-0-worker-0.log", "{\"samples_per_sec\": 119.5}\n");
  }
  void TearDown() override {
    ::setenv("PATH", old_path_.c_str(), 1);
    fs::remove_all(dir_);
  }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
  }
  std::vector<std::string> Calls() {
    std::vector<std::string> out;
    std::ifstream in(dir_ / "calls.log");
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }
  KubectlDriver Driver() { return KubectlDriver({"kubectl", "", std::chrono::milliseconds(10)}); }

  fs::path dir_;
  std::string old_path_;
  JobConfig config_;
};

TEST_F(KubectlDriverTest, AppliesWaitsReadsLogsDeletes) {
  Write("job-1.json",
        Job({Condition("Created", "True", "PyTorchJobCreated", "PyTorchJob ddp-0 is created.")})
            .dump());
  Write(
      "job-2.json",
      Job({Condition("Created", "True", "PyTorchJobCreated", "PyTorchJob ddp-0 is created."),
           Condition("Running", "True", "PyTorchJobRunning", "PyTorchJob bench/ddp-0 is running.")})
          .dump());
  Write(
      "job-final.json",
      Job({Condition("Created", "True", "PyTorchJobCreated", "PyTorchJob ddp-0 is created."),
           Condition("Running", "False", "PyTorchJobRunning", "PyTorchJob bench/ddp-0 is running."),
           Condition("Succeeded", "True", "PyTorchJobSucceeded",
                     "PyTorchJob bench/ddp-0 successfully completed.")})
          .dump());
  auto driver = Driver();
  auto result = RunSweep(config_, driver);
  ASSERT_TRUE(result.ok());
  ASSERT_EQ(result->runs.size(), 1u);
  const auto& run = result->runs[0];
  EXPECT_TRUE(run.succeeded) << run.error;
  EXPECT_EQ(run.metrics.at("samples_per_sec"), 240.0);
  auto calls = Calls();
  ASSERT_EQ(calls.size(), 8u);
  EXPECT_EQ(calls[0].substr(0, 10), "create -f ");
  EXPECT_EQ(calls[1], "get pytorchjobs.kubeflow.org ddp-0 -n bench -o json");
  EXPECT_EQ(calls[3], calls[1]);
  EXPECT_EQ(calls[4], "get pods -n bench -l training.kubeflow.org/job-name=ddp-0 -o json");
  EXPECT_EQ(calls[5], "logs -n bench ddp-0-master-0 -c pytorch");
  EXPECT_EQ(calls[6], "logs -n bench ddp-0-worker-0 -c pytorch");
  EXPECT_EQ(calls[7],
            "delete pytorchjobs.kubeflow.org ddp-0 -n bench --ignore-not-found --wait=false");
  // What was applied is the rendered manifest.
  EXPECT_THAT(ReadSmallFile(dir_ / "applied.yaml"), HasSubstr("--batch-size=16"));
}

// The script {{config_dir}} names reaches the pods in a ConfigMap applied
// with the job and deleted with it; no path of this machine is applied.
TEST_F(KubectlDriverTest, ShipsTheScriptTheCommandNames) {
  Write("train.py", "print('train')\n");
  auto c = ParseJobConfig(R"(
name: ddp
kind: PyTorchJob
namespace: bench
image: kfpbench:latest
command: [python3, "{{config_dir}}/train.py"]
replicas: {Master: 1, Worker: 1}
timeoutSeconds: 5
)",
                          dir_);
  ASSERT_TRUE(c.ok()) << c.error().message;
  Write("job-final.json",
        Job({Condition("Succeeded", "True", "PyTorchJobSucceeded", "done")}).dump());
  auto outcome = Driver().Run(*c, ExpandSweep(*c)[0]);
  EXPECT_TRUE(outcome.succeeded) << outcome.error;
  std::string applied = ReadSmallFile(dir_ / "applied.yaml");
  EXPECT_THAT(applied, HasSubstr("kind: ConfigMap")) << applied;
  EXPECT_THAT(applied, HasSubstr("name: ddp-files")) << applied;
  EXPECT_THAT(applied, HasSubstr("/etc/kfpbench/job/train.py")) << applied;
  EXPECT_THAT(applied, Not(HasSubstr(dir_.string()))) << applied;
  EXPECT_EQ(Calls().back(), "delete configmap ddp-files -n bench --ignore-not-found --wait=false");
}

TEST_F(KubectlDriverTest, FailedConditionFailsWithReasonAndLogTail) {
  Write("job-final.json",
        Job({Condition("Created", "True", "PyTorchJobCreated", "PyTorchJob ddp-0 is created."),
             Condition("Running", "False", "PyTorchJobFailed",
                       "PyTorchJob bench/ddp-0 is failed because 1 Worker replica(s) failed."),
             Condition("Failed", "True", "PyTorchJobFailed",
                       "PyTorchJob bench/ddp-0 is failed because 1 Worker replica(s) failed.")})
            .dump());
  Write("pods.json", json{{"kind", "List"},
                          {"items",
                           {Pod("ddp-0-master-0", "master", 0, "Running"),
                            Pod("ddp-0-worker-0", "worker", 0, "Failed")}}}
                         .dump());
  Write("logs/ddp-0-worker-0.log",
        "Traceback (most recent call last):\nRuntimeError: gloo connect timed out\n");
  auto outcome = Driver().Run(config_, ExpandSweep(config_)[0]);
  EXPECT_FALSE(outcome.succeeded);
  EXPECT_THAT(
      outcome.error,
      HasSubstr(
          "PyTorchJob ddp-0 failed: PyTorchJobFailed (PyTorchJob bench/ddp-0 is failed because 1 "
          "Worker replica(s) failed.)"))
      << outcome.error;
  EXPECT_THAT(outcome.error, HasSubstr("last lines of pod ddp-0-worker-0:\nTraceback"))
      << outcome.error;
  EXPECT_THAT(outcome.error, HasSubstr("RuntimeError: gloo connect timed out"));
  EXPECT_EQ(Calls().back().substr(0, 6), "delete");
}

TEST_F(KubectlDriverTest, TimeoutStillCleansUp) {
  config_.timeout_seconds = 1;
  Write(
      "job-final.json",
      Job({Condition("Running", "True", "PyTorchJobRunning", "PyTorchJob bench/ddp-0 is running.")})
          .dump());
  auto outcome = Driver().Run(config_, ExpandSweep(config_)[0]);
  EXPECT_FALSE(outcome.succeeded);
  EXPECT_THAT(outcome.error, HasSubstr("timed out after 1 s waiting for ddp-0")) << outcome.error;
  EXPECT_EQ(Calls().back().substr(0, 6), "delete");
}

TEST_F(KubectlDriverTest, ApplyErrorIsReported) {
  Write("apply_fails",
        "error: resource mapping not found for name: \"ddp-0\" namespace: \"bench\" from "
        "\"/tmp/m\": no matches for "
        "kind \"PyTorchJob\" in version \"kubeflow.org/v1\"\nensure CRDs are installed first\n");
  auto outcome = Driver().Run(config_, ExpandSweep(config_)[0]);
  EXPECT_FALSE(outcome.succeeded);
  EXPECT_THAT(outcome.error, HasSubstr("kubectl create failed (exit 1)")) << outcome.error;
  EXPECT_THAT(outcome.error, HasSubstr("ensure CRDs are installed first"));
  EXPECT_EQ(Calls().size(), 1u);  // nothing to wait for or delete
}

// A job of the same name left in the cluster is never taken for this run's:
// one kept by --keep is refused, naming the command that removes it.
TEST_F(KubectlDriverTest, AnEarlierJobOfTheSameNameIsRefused) {
  Write("exists", "");
  Write("existing.json",
        Job({Condition("Succeeded", "True", "PyTorchJobSucceeded", "old")}).dump());
  auto outcome = Driver().Run(config_, ExpandSweep(config_)[0]);
  EXPECT_FALSE(outcome.succeeded);
  EXPECT_THAT(outcome.error, HasSubstr("PyTorchJob ddp-0 exists already in namespace bench"))
      << outcome.error;
  EXPECT_THAT(outcome.error, HasSubstr("kubectl delete pytorchjobs.kubeflow.org ddp-0 -n bench"));
  auto calls = Calls();
  ASSERT_EQ(calls.size(), 2u);  // create, get; nothing waited for or deleted
  EXPECT_EQ(calls[1], "get pytorchjobs.kubeflow.org ddp-0 -n bench -o json --ignore-not-found");
}

// One still being deleted (an earlier run's clean-up) is waited out, then
// this run's is created.
TEST_F(KubectlDriverTest, AJobBeingDeletedIsWaitedOut) {
  Write("exists", "");
  auto old = Job({Condition("Succeeded", "True", "PyTorchJobSucceeded", "old")});
  old["metadata"]["deletionTimestamp"] = "2025-03-01T10:00:09Z";
  Write("existing.json", old.dump());
  Write("job-final.json",
        Job({Condition("Succeeded", "True", "PyTorchJobSucceeded", "new")}).dump());
  auto outcome = Driver().Run(config_, ExpandSweep(config_)[0]);
  EXPECT_TRUE(outcome.succeeded) << outcome.error;
  auto calls = Calls();
  ASSERT_GE(calls.size(), 3u);
  EXPECT_EQ(calls[0].substr(0, 10), "create -f ");
  EXPECT_EQ(calls[2].substr(0, 10), "create -f ");
}

TEST(JobState, BatchJobConditions) {
  auto complete = json::parse(R"({"status":{"conditions":[
    {"type":"SuccessCriteriaMet","status":"True","reason":"CompletionsReached","message":"Reached expected number of succeeded pods"},
    {"type":"Complete","status":"True","reason":"CompletionsReached","message":"Reached expected number of succeeded pods"}],
    "succeeded":2,"completedIndexes":"0-1"}})");
  auto s = ReadJobState(JobKind::kJob, complete);
  EXPECT_TRUE(s.finished);
  EXPECT_TRUE(s.succeeded);
  auto failed = json::parse(R"({"status":{"conditions":[
    {"type":"FailureTarget","status":"True","reason":"BackoffLimitExceeded","message":"Job has reached the specified backoff limit"},
    {"type":"Failed","status":"True","reason":"BackoffLimitExceeded","message":"Job has reached the specified backoff limit"}]}})");
  s = ReadJobState(JobKind::kJob, failed);
  EXPECT_TRUE(s.finished);
  EXPECT_FALSE(s.succeeded);
  EXPECT_EQ(s.reason, "BackoffLimitExceeded");
  EXPECT_FALSE(ReadJobState(JobKind::kJob, json::parse(R"({"status":{"active":1}})")).finished);
  // A TO job's "Succeeded" is not batch/v1's "Complete".
  EXPECT_FALSE(ReadJobState(JobKind::kPyTorchJob, complete).finished);
  EXPECT_EQ(PodSelector(JobKind::kJob, "a-0"), "job-name=a-0");
}

}  // namespace
}  // namespace kfpbench::kube
