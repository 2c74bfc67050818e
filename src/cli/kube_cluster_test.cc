// The Kubernetes tier: kfpbench's Kubernetes paths against a real control
// plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler) whose
// nodes are kwok's (scripts/stack). `scripts/test --kube` starts it and runs
// these; without it they skip, saying so. Pods never run a container: kwok's
// Stages (stack/kwok.yaml) give them the start delay, run time and exit code
// their annotations name, which is what the lifecycle test measures against.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <thread>

#include "harness/e2e_support.h"
#include "kube/manifest.h"
#include "kube/pod_reader.h"
#include "kube/pod_timeline.h"
#include "results/pod_lifecycle.h"
#include "util/ids.h"
#include "util/strings.h"
#include "util/time.h"

namespace kfpbench::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace kfpbench::testing;  // Kfpbench(), ScratchDirTest, ...
using nlohmann::json;

constexpr const char* kImage = "registry.example.com/kfpbench/kfpbench:0.1.0";

// Polls `done` every 200 ms for up to `seconds`.
template <typename F>
bool WaitUntil(F done, int seconds) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return done();
}

// Each test in a namespace of its own on the stack `scripts/test --kube` started.
class KubeCluster : public ScratchDirTest {
 protected:
  void SetUp() override {
    ScratchDirTest::SetUp();
    if (std::getenv("KFPBENCH_STACK_DIR") == nullptr || std::getenv("KUBECONFIG") == nullptr) {
      GTEST_SKIP() << "no control plane: `scripts/test --kube` starts one (scripts/stack)";
    }
    ns_ = "t-" + NewUuid().substr(0, 8);
    ASSERT_EQ(Kubectl("create namespace " + ns_).exit_code, 0);
    // Pods are refused until the namespace's ServiceAccount exists.
    ASSERT_TRUE(WaitUntil(
        [&] { return Kubectl("get serviceaccount default -n " + ns_).exit_code == 0; }, 30));
  }
  void TearDown() override {
    if (!ns_.empty()) Kubectl("delete namespace " + ns_ + " --wait=false");
    ScratchDirTest::TearDown();
  }
  static Outcome Kubectl(const std::string& args) { return Shell("kubectl " + args); }
  json GetJson(const std::string& args) {
    auto r = Shell("kubectl " + args + " -o json 2>/dev/null");
    return json::parse(r.output, nullptr, false);
  }
  std::string Config(const std::string& name, const std::string& rest) {
    return Write(name + ".yaml", "name: " + name + "\nkind: Job\nnamespace: " + ns_ +
                                     "\nimage: " + kImage +
                                     "\ncommand: [kfpbench, step, --duration, 1s]\n" + rest);
  }
  std::string JobFlags() {
    return " --driver kubernetes --poll-interval 200ms --out " + dir_.string() + "/out";
  }

  std::string ns_;
};

// config → manifest → create → wait → pods → delete, for every sweep point,
// each pod living the run time its point names.
TEST_F(KubeCluster, JobDriverRunsAPlainJobEndToEnd) {
  auto config = Config("plain",
                       "annotations: {kfpbench.dev/run-seconds: '{{secs}}'}\n"
                       "replicas: {Worker: 2}\ntimeoutSeconds: 60\nparameters: {secs: 1}\n"
                       "sweep: {grid: {secs: [1, 3]}}\n");
  auto r = Kfpbench("job " + config + JobFlags());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("plain-0 [0] secs=1: Succeeded")) << r.output;
  EXPECT_THAT(r.output, HasSubstr("plain-1 [1] secs=3: Succeeded")) << r.output;
  auto results = ReadJson(dir_ / "out" / "job_results.json");
  ASSERT_FALSE(results.is_discarded());
  const auto& runs = results["jobs"]["runs"];
  ASSERT_EQ(runs.size(), 2u) << results.dump();
  // The second point's pods ran 3 s, the first's 1 s.
  double d0 = runs[0]["durationSeconds"], d1 = runs[1]["durationSeconds"];
  EXPECT_GE(d1, 3.0);
  EXPECT_GT(d1, d0);
  // Cleaned up: the Jobs are gone (their pods follow through the garbage collector).
  EXPECT_TRUE(WaitUntil(
      [&] { return GetJson("get jobs -n " + ns_).value("items", json::array()).empty(); }, 10));
}

// A pod exiting non-zero fails its Job (backoffLimit 0): the run fails with
// the Job controller's reason, and kfpbench's exit code says so.
TEST_F(KubeCluster, JobDriverReportsAFailedJob) {
  auto config = Config("fails",
                       "annotations: {kfpbench.dev/exit-code: '3'}\nreplicas: {Worker: 1}\n"
                       "timeoutSeconds: 60\n");
  auto r = Kfpbench("job " + config + JobFlags());
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("fails-0 [0]: Failed")) << r.output;
  EXPECT_THAT(r.output, HasSubstr("Job fails-0 failed: BackoffLimitExceeded")) << r.output;
}

// A Job of the same name kept from an earlier run (--keep) is refused rather
// than read as this run's; one still being deleted is waited out.
TEST_F(KubeCluster, JobDriverRefusesAKeptJobAndWaitsOutADeletedOne) {
  auto config = Config("again", "replicas: {Worker: 1}\ntimeoutSeconds: 60\n");
  ASSERT_EQ(Kfpbench("job " + config + JobFlags() + " --keep").exit_code, 0);
  auto r = Kfpbench("job " + config + JobFlags());
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("Job again-0 exists already in namespace " + ns_)) << r.output;
  // Held by a finalizer, the kept Job is being deleted when the run starts.
  ASSERT_EQ(Kubectl("patch job again-0 -n " + ns_ +
                    " --type=merge -p '{\"metadata\":{\"finalizers\":[\"kfpbench.dev/hold\"]}}'")
                .exit_code,
            0);
  ASSERT_EQ(Kubectl("delete job again-0 -n " + ns_ + " --wait=false").exit_code, 0);
  Outcome second;
  std::thread run([&] { second = Kfpbench("job " + config + JobFlags()); });
  std::this_thread::sleep_for(std::chrono::seconds(3));
  Kubectl("patch job again-0 -n " + ns_ +
          " --type=merge -p '{\"metadata\":{\"finalizers\":null}}'");
  run.join();
  EXPECT_EQ(second.exit_code, 0) << second.output;
  EXPECT_THAT(second.output, HasSubstr("again-0 [0]: Succeeded")) << second.output;
}

// The apiserver goes away mid-run and comes back: every connection drops
// (kfpbench's, and the controllers' and kwok's watches, which relist), the
// failed reads are retried and the run still completes.
TEST_F(KubeCluster, JobDriverSurvivesAnApiserverRestart) {
  auto config = Config("restart",
                       "annotations: {kfpbench.dev/run-seconds: '8'}\nreplicas: {Worker: 1}\n"
                       "timeoutSeconds: 120\n");
  Outcome r;
  std::thread run([&] { r = Kfpbench("job " + config + JobFlags()); });
  std::this_thread::sleep_for(std::chrono::seconds(3));
  auto restarted =
      Shell(std::string(KFPBENCH_SOURCE_DIR) + "/scripts/stack restart-apiserver --dir " +
            std::getenv("KFPBENCH_STACK_DIR"));
  run.join();
  ASSERT_EQ(restarted.exit_code, 0) << restarted.output;
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("restart-0 [0]: Succeeded")) << r.output;
}

// `kube loadgen`'s set in a namespace enforcing the `restricted` Pod
// Security Standard: admitted without a warning, every index scheduled,
// run and completed, and the completed indexes read back.
TEST_F(KubeCluster, LoadgenIsAdmittedUnderRestrictedPodSecurity) {
  ASSERT_EQ(Kubectl("label namespace " + ns_ + " pod-security.kubernetes.io/enforce=restricted " +
                    "pod-security.kubernetes.io/warn=restricted")
                .exit_code,
            0);
  // Enforced: a pod without the restricted settings is refused.
  auto refused = Kubectl("run bare -n " + ns_ + " --image=" + kImage + " --restart=Never");
  EXPECT_NE(refused.exit_code, 0) << refused.output;
  EXPECT_THAT(refused.output, HasSubstr("violates PodSecurity \"restricted")) << refused.output;
  std::string set = (dir_ / "loadgen.yaml").string();
  // Manifests on stdout into the file; the notes on stderr to the test's output.
  // std::string first: GCC 12 at -O3 reports a false -Wrestrict on "(" + std::string&&.
  auto rendered = Shell(
      std::string("(") + KfpbenchBinary() + " kube loadgen " + KFPBENCH_SOURCE_DIR +
      "/examples/smoke.json --shards 3 --host http://ml-pipeline.kubeflow:8888 " + "--image " +
      kImage + " --kube-namespace " + ns_ + " --namespace team-a --start-at +10m > " + set + ")");
  ASSERT_EQ(rendered.exit_code, 0) << rendered.output;
  auto applied = Kubectl("apply -f " + set);
  ASSERT_EQ(applied.exit_code, 0) << applied.output;
  EXPECT_THAT(applied.output, Not(HasSubstr("Warning"))) << applied.output;
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto job = GetJson("get job kfpbench-loadgen -n " + ns_);
        return !job.is_discarded() && job["status"].value("succeeded", 0) == 3;
      },
      60))
      << GetJson("get pods -n " + ns_).dump(1);
  auto job = GetJson("get job kfpbench-loadgen -n " + ns_);
  EXPECT_EQ(job["status"].value("completedIndexes", ""), "0-2") << job["status"].dump();
  auto pods = GetJson("get pods -n " + ns_ + " -l job-name=kfpbench-loadgen");
  ASSERT_EQ(pods["items"].size(), 3u);
  for (const auto& pod : pods["items"]) {
    EXPECT_EQ(pod["status"]["phase"], "Succeeded") << pod["metadata"]["name"];
    // The KFP namespace reached the shard's command line, not the Job's.
    EXPECT_THAT(pod["spec"]["containers"][0]["command"][2].get<std::string>(),
                HasSubstr("--namespace 'team-a'"));
  }
}

// `job render` of every example config is accepted by the API server's
// validation (server-side dry run, the training operator's CRDs installed),
// and an applied sweep starts nothing until its points are resumed one by one.
TEST_F(KubeCluster, JobRenderIsAcceptedAndStartsNoPointByItself) {
  int configs = 0;
  bool crds = Kubectl("get crd pytorchjobs.kubeflow.org").exit_code == 0;
  for (const auto& entry :
       fs::directory_iterator(fs::path(KFPBENCH_SOURCE_DIR) / "examples" / "jobs")) {
    if (entry.path().extension() != ".yaml") continue;
    if (!crds) continue;  // the stack started without --crds (no ../shared)
    ++configs;
    auto r = Shell(KfpbenchBinary() + " job render " + entry.path().string() + " --image " +
                   kImage + " 2>/dev/null | kubectl apply --dry-run=server -f -");
    EXPECT_EQ(r.exit_code, 0) << entry.path() << "\n" << r.output;
  }
  if (crds) {
    EXPECT_GE(configs, 2);
  }
  auto config = Config("sweep",
                       "replicas: {Worker: 1}\nparameters: {b: 1}\n"
                       "sweep: {grid: {b: [1, 2, 3]}}\n");
  auto applied =
      Shell(KfpbenchBinary() + " job render " + config + " 2>/dev/null | kubectl apply -f -");
  ASSERT_EQ(applied.exit_code, 0) << applied.output;
  std::this_thread::sleep_for(std::chrono::seconds(3));
  EXPECT_TRUE(GetJson("get pods -n " + ns_)["items"].empty()) << "a suspended point started";
  ASSERT_EQ(
      Kubectl("patch job sweep-0 -n " + ns_ + " --type=merge -p '{\"spec\":{\"suspend\":false}}'")
          .exit_code,
      0);
  ASSERT_EQ(
      Kubectl("wait job/sweep-0 -n " + ns_ + " --for=condition=complete --timeout=60s").exit_code,
      0);
  auto pods = GetJson("get pods -n " + ns_);
  ASSERT_EQ(pods["items"].size(), 1u);
  EXPECT_EQ(pods["items"][0]["metadata"]["labels"]["job-name"], "sweep-0");
}

// With kwok's delays known (scheduled → started: start-seconds; started →
// finished: run-seconds), the phases read from the real pods are within a
// second of them (the API's times are whole seconds); a pod no node fits is
// reported as unschedulable, with the scheduler's reason.
TEST_F(KubeCluster, PodLifecycleMatchesKwokDelays) {
  auto pod = [&](const std::string& name, const std::string& cpu) {
    return json{{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata",
                 {{"name", name},
                  {"namespace", ns_},
                  {"annotations",
                   {{"kfpbench.dev/start-seconds", "2"}, {"kfpbench.dev/run-seconds", "3"}}}}},
                {"spec",
                 {{"restartPolicy", "Never"},
                  {"containers",
                   {{{"name", "main"},
                     {"image", kImage},
                     {"resources", {{"requests", {{"cpu", cpu}}}}}}}}}}};
  };
  std::string file = Write("pods.json", json{{"apiVersion", "v1"},
                                             {"kind", "List"},
                                             {"items", {pod("timed", "1"), pod("huge", "1000")}}}
                                            .dump());
  ASSERT_EQ(Kubectl("apply -f " + file).exit_code, 0);
  ASSERT_TRUE(WaitUntil(
      [&] {
        return GetJson("get pod timed -n " + ns_)["status"].value("phase", "") == "Succeeded";
      },
      30));
  // The scheduler's FailedScheduling event for the big one.
  WaitUntil(
      [&] {
        return Kubectl("get events -n " + ns_ + " --field-selector reason=FailedScheduling -o name")
                   .output.find("event") != std::string::npos;
      },
      10);
  kube::PodReaderOptions options;
  options.namespace_ = ns_;
  auto readout = kube::ReadPods({"timed", "huge", "gone"}, options);
  EXPECT_TRUE(readout.errors.empty()) << readout.errors.front();
  EXPECT_EQ(readout.missing, std::set<std::string>{"gone"});
  ASSERT_EQ(readout.pods.size(), 2u);
  auto timed = kube::ReadPodTimeline(readout.pods["timed"], readout.events["timed"]);
  ASSERT_TRUE(timed.ok()) << timed.error().message;
  ASSERT_TRUE(timed->scheduled && timed->ContainersStarted() && timed->Main());
  auto seconds = [](Duration d) { return std::chrono::duration<double>(d).count(); };
  EXPECT_NEAR(seconds(*timed->scheduled - timed->created), 0.0, 1.0);
  EXPECT_NEAR(seconds(*timed->ContainersStarted() - *timed->scheduled), 2.0, 1.0);
  ASSERT_TRUE(timed->Main()->started && timed->Main()->finished);
  EXPECT_NEAR(seconds(*timed->Main()->finished - *timed->Main()->started), 3.0, 1.0);
  EXPECT_EQ(timed->Main()->exit_code, 0);
  EXPECT_EQ(timed->node.rfind("kwok-node-", 0), 0u) << timed->node;
  EXPECT_TRUE(timed->unschedulable.empty());
  auto huge = kube::ReadPodTimeline(readout.pods["huge"], readout.events["huge"]);
  ASSERT_TRUE(huge.ok()) << huge.error().message;
  EXPECT_FALSE(huge->scheduled);
  EXPECT_EQ(huge->phase, "Pending");
  EXPECT_THAT(huge->unschedulable, HasSubstr("Insufficient cpu")) << huge->unschedulable;
  EXPECT_GE(huge->failed_scheduling, 1);
  // In results.json: the step counts it apart, with no latency sample.
  results::PodLifecycle section;
  section.collected = true;
  section.Add({"run-1", "train", *timed});
  section.Add({"run-1", "train", *huge});
  const auto& step = section.steps.at("train");
  EXPECT_EQ(step.pods, 2);
  EXPECT_EQ(step.unschedulable, 1);
  EXPECT_EQ(step.ms.at("scheduled").count(), 1u);
  auto back = results::PodLifecycleFromJson(results::PodLifecycleToJson(section));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->steps.at("train").unschedulable, 1);
  EXPECT_EQ(back->pods[1].pod.unschedulable, huge->unschedulable);
}

// TFJob, PyTorchJob and MPIJob through the driver against the training
// operator's CRDs (v1.9), their conditions written by kwok Stages in the
// operator's words (stack/kwok-training.yaml); no replica pods exist.
TEST_F(KubeCluster, TrainingOperatorKindsRunThroughTheDriver) {
  if (Kubectl("get crd pytorchjobs.kubeflow.org").exit_code != 0) {
    GTEST_SKIP() << "the stack was started without the training operator's CRDs (../shared absent)";
  }
  for (const auto& [kind, replicas] :
       std::vector<std::pair<std::string, std::string>>{{"TFJob", "{Worker: 2, PS: 1}"},
                                                        {"PyTorchJob", "{Master: 1, Worker: 1}"},
                                                        {"MPIJob", "{Launcher: 1, Worker: 2}"}}) {
    SCOPED_TRACE(kind);
    std::string name = "tj-" + AsciiLower(kind);
    auto config =
        Write(name + ".yaml",
              "name: " + name + "\nkind: " + kind + "\nnamespace: " + ns_ + "\nimage: " + kImage +
                  "\ncommand: [train]\nreplicas: " + replicas + "\ntimeoutSeconds: 60\n");
    auto r = Kfpbench("job " + config + JobFlags());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_THAT(r.output, HasSubstr(name + "-0 [0]: Succeeded")) << r.output;
  }
}

// Argo Workflows on the stack (scripts/argo): a KFP-shaped DAG, each step a
// template whose pod kwok times by the annotations Argo copies onto it from
// the template's metadata, with the step's resource requests.
class KubeClusterArgo : public KubeCluster {
 protected:
  void SetUp() override {
    KubeCluster::SetUp();
    if (IsSkipped()) return;
    if (Kubectl("get crd workflows.argoproj.io").exit_code != 0) {
      GTEST_SKIP() << "Argo is not running on the stack (scripts/argo start)";
    }
  }
  // A container template that runs `seconds` and exits with `exit_code`.
  static json Step(const std::string& name, int seconds, int exit_code = 0) {
    return {{"name", name},
            {"metadata",
             {{"annotations",
               {{"kfpbench.dev/start-seconds", "0"},
                {"kfpbench.dev/run-seconds", std::to_string(seconds)},
                {"kfpbench.dev/exit-code", std::to_string(exit_code)}}}}},
            {"container",
             {{"image", kImage},
              {"command", {"kfpbench", "step"}},
              {"resources", {{"requests", {{"cpu", "2"}, {"memory", "4Gi"}}}}}}}};
  }
  // Submits a workflow of `templates` whose entrypoint is a DAG of `tasks`;
  // returns it once finished (or as it is after 120 s).
  json RunWorkflow(const std::string& name, const json& tasks, json templates) {
    templates.push_back({{"name", "pipeline"}, {"dag", {{"tasks", tasks}}}});
    json workflow = {{"apiVersion", "argoproj.io/v1alpha1"},
                     {"kind", "Workflow"},
                     {"metadata", {{"name", name}, {"namespace", ns_}}},
                     {"spec", {{"entrypoint", "pipeline"}, {"templates", templates}}}};
    auto created = Kubectl("create -f " + Write(name + ".json", workflow.dump()));
    EXPECT_EQ(created.exit_code, 0) << created.output;
    json got;
    WaitUntil(
        [&] {
          got = GetJson("get workflow " + name + " -n " + ns_);
          if (got.is_discarded()) return false;
          auto phase = got["status"].value("phase", "");
          return phase == "Succeeded" || phase == "Failed" || phase == "Error";
        },
        120);
    return got;
  }
  // Seconds from one RFC 3339 time to another (-1000 if either is missing).
  static double Between(const json& from, const json& to) {
    auto start = ParseRfc3339(from.is_string() ? from.get<std::string>() : "");
    auto end = ParseRfc3339(to.is_string() ? to.get<std::string>() : "");
    if (!start.ok() || !end.ok()) return -1000;
    return std::chrono::duration<double>(*end - *start).count();
  }
  static std::map<std::string, json> ByTask(json& workflow) {
    std::map<std::string, json> by_task;
    for (const auto& [id, node] : workflow["status"]["nodes"].items()) {
      by_task[node.value("displayName", id)] = node;
    }
    return by_task;
  }
};

// A diamond (a → b, c → d) and a fan-out of four after it: every node ends
// Succeeded on a fake node, lasting the run time its template names (Argo's
// times are whole seconds: within 1 s), and the workflow Succeeded.
TEST_F(KubeClusterArgo, KfpShapedDagSucceedsWithItsStepsTimes) {
  json tasks = json::array({{{"name", "a"}, {"template", "one"}},
                            {{"name", "b"}, {"template", "three"}, {"dependencies", {"a"}}},
                            {{"name", "c"}, {"template", "two"}, {"dependencies", {"a"}}},
                            {{"name", "d"}, {"template", "one"}, {"dependencies", {"b", "c"}}},
                            {{"name", "fan"},
                             {"template", "two"},
                             {"dependencies", {"d"}},
                             {"withItems", {0, 1, 2, 3}}}});
  auto wf = RunWorkflow("diamond", tasks, {Step("one", 1), Step("two", 2), Step("three", 3)});
  ASSERT_EQ(wf["status"].value("phase", ""), "Succeeded") << wf["status"].dump(2);
  std::map<std::string, int> run_seconds{{"one", 1}, {"two", 2}, {"three", 3}};
  int pods = 0;
  for (const auto& [id, node] : wf["status"]["nodes"].items()) {
    SCOPED_TRACE(node.value("displayName", id));
    EXPECT_EQ(node.value("phase", ""), "Succeeded");
    if (node.value("type", "") != "Pod") continue;
    ++pods;
    EXPECT_EQ(node.value("hostNodeName", "").rfind("kwok-node-", 0), 0u) << node.dump();
    EXPECT_NEAR(Between(node["startedAt"], node["finishedAt"]),
                run_seconds.at(node["templateName"]), 1.0);
  }
  EXPECT_EQ(pods, 8);  // a, b, c, d and four fanned out
  // b and c ran side by side, once a had finished (Argo looks again at a
  // workflow DEFAULT_REQUEUE_TIME, 10 s, after a pod changed).
  auto by_task = ByTask(wf);
  EXPECT_NEAR(Between(by_task["b"]["startedAt"], by_task["c"]["startedAt"]), 0.0, 1.0);
  EXPECT_GE(Between(by_task["a"]["finishedAt"], by_task["b"]["startedAt"]), 0.0);
}

// A step told to exit 3 fails its node with that exit code, its dependants
// never run, and the workflow is Failed.
TEST_F(KubeClusterArgo, AFailingStepFailsTheWorkflow) {
  json tasks = json::array({{{"name", "a"}, {"template", "ok"}},
                            {{"name", "b"}, {"template", "fails"}, {"dependencies", {"a"}}},
                            {{"name", "c"}, {"template", "ok"}, {"dependencies", {"b"}}}});
  auto wf = RunWorkflow("fails", tasks, {Step("ok", 1), Step("fails", 1, 3)});
  ASSERT_EQ(wf["status"].value("phase", ""), "Failed") << wf["status"].dump(2);
  auto by_task = ByTask(wf);
  EXPECT_EQ(by_task["a"].value("phase", ""), "Succeeded");
  EXPECT_EQ(by_task["b"].value("phase", ""), "Failed");
  EXPECT_EQ(by_task["b"]["outputs"].value("exitCode", ""), "3") << by_task["b"].dump();
  EXPECT_TRUE(!by_task.contains("c") || by_task["c"].value("phase", "") == "Omitted")
      << by_task["c"].dump();
}

// A simulated workload run again on Argo (kfpbench stack-plan, argo-run-plan,
// stack-result): two runs of prepare → train, 3 s apart. Every pod lasts
// the time the simulation drew for its step, each train pod is created
// only once its prepare has ended (Argo looks again DEFAULT_REQUEUE_TIME
// later: 10 s here), and the stack's answer, in simulate's form, is the
// simulator's plus that delay per level.
TEST_F(KubeClusterArgo, SimulatedPlanRunsAsArgoWorkflows) {
  Write("pair.yaml", R"(components:
  comp-prepare: {executorLabel: exec-prepare}
  comp-train: {executorLabel: exec-train}
deploymentSpec:
  executors:
    exec-prepare:
      container: {image: example/step:1, command: [kfpbench, step], resources: {resourceCpuRequest: '1', resourceMemoryRequest: 1Gi}}
    exec-train:
      container: {image: example/step:1, command: [kfpbench, step], resources: {resourceCpuRequest: '12', resourceMemoryRequest: 8Gi}}
pipelineInfo: {name: pair}
root:
  dag:
    tasks:
      prepare: {componentRef: {name: comp-prepare}, taskInfo: {name: prepare}}
      train: {componentRef: {name: comp-train}, dependentTasks: [prepare], taskInfo: {name: train}}
schemaVersion: 2.1.0
sdkVersion: kfp-2.7.0
)");
  auto cluster = Write("cluster.yaml",
                       "pools: [{name: fixed, cpu: 16, memory: 56Gi, min: 4, max: 4}]\n"
                       "autoscaler: {enabled: false}\n");
  auto workload =
      Write("workload.yaml",
            "pipeline: pair.yaml\nruns: 2\narrivals: {kind: rate, ratePerSecond: 0.3333}\n"
            "steps: {exec-prepare: 2s, exec-train: \"uniform:2s:4s\"}\n");
  const std::string d = dir_.string();
  auto plan = Kfpbench("stack-plan " + cluster + " " + workload + " --out " + d +
                       "/plan.json --sim-out " + d + "/sim.json");
  ASSERT_EQ(plan.exit_code, 0) << plan.output;
  const std::string runner =
      std::string(std::getenv("KFPBENCH_STACK_DIR")) + "/../bin/argo-run-plan";
  auto ran = Shell(runner + " --plan " + d + "/plan.json --out " + d + "/record.json --namespace " +
                   ns_ + " --timeout 3m 2>&1");
  ASSERT_EQ(ran.exit_code, 0) << ran.output;
  auto result = Kfpbench("stack-result " + cluster + " " + d + "/plan.json " + d +
                         "/record.json --out " + d + "/stack.json");
  ASSERT_EQ(result.exit_code, 0) << result.output;

  json planned = ReadJson(dir_ / "plan.json"), record = ReadJson(dir_ / "record.json");
  ASSERT_EQ(record["runs"].size(), 2u) << record.dump();
  for (size_t i = 0; i < 2; ++i) {
    SCOPED_TRACE("run " + std::to_string(i));
    const json& run = record["runs"][i];
    EXPECT_EQ(run.value("phase", ""), "Succeeded");
    std::map<int, double> seconds;
    for (const auto& t : planned["runs"][i]["tasks"]) seconds[t["id"]] = t.value("seconds", 0.0);
    std::map<int, json> pods;
    ASSERT_EQ(run["pods"].size(), 2u) << run.dump();
    for (const auto& pod : run["pods"]) {
      pods[pod["task"]] = pod;
      // kwok's timers fire within a few hundred ms of their time (1 s: a loaded machine).
      EXPECT_NEAR(pod["finished"].get<double>() - pod["started"].get<double>(),
                  seconds[pod["task"]], 1.0)
          << pod.dump();
      EXPECT_GE(pod["scheduled"].get<double>(), pod["created"].get<double>());
    }
    const json& prepare = pods.begin()->second;  // ids in DAG order: prepare first
    const json& train = pods.rbegin()->second;
    EXPECT_GE(train["created"].get<double>(), prepare["finished"].get<double>());
    EXPECT_GE(run["finished"].get<double>(), train["finished"].get<double>());
  }
  json sim = ReadJson(dir_ / "sim.json"), stack = ReadJson(dir_ / "stack.json");
  EXPECT_EQ(stack["runs"]["succeeded"], 2);
  EXPECT_EQ(stack["peak_nodes"], 4);
  // The simulator has no control plane: no wait on 4 free nodes. Argo's
  // second level comes a requeue (10 s) after the first pod's events.
  EXPECT_EQ(sim["task_pending_seconds"]["max"], 0.0);
  EXPECT_GE(stack["task_pending_seconds"]["max"].get<double>(), 3.0);
  EXPECT_GT(stack["makespan_seconds"].get<double>(), sim["makespan_seconds"].get<double>() + 8);
}

}  // namespace
}  // namespace kfpbench::cli
