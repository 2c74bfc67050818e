// The Kubernetes tier's real-KFP tests: KFP's own API server, persistence
// agent and scheduled-workflow controller (scripts/kfp, built from KFP's Go
// module) on the local stack with Argo's controller and kwok's nodes.
// `scripts/test --kube` starts them and names the API server in
// KFPBENCH_KFP_URL; without it these skip, saying so. kfpbench's own client
// and harness talk to it exactly as they would to a production KFP.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <thread>

#include "cli/cli_test_support.h"
#include "harness/e2e_support.h"
#include "http/client.h"
#include "kfp/client.h"
#include "util/ids.h"
#include "util/time.h"

namespace kfpbench::cli {
namespace {

using namespace kfpbench::testing;  // Kfpbench(), ScratchDirTest, ...
using nlohmann::json;

// A v1 pipeline (KFP's Argo Workflow YAML form): a → b, each step timed by
// the stack's kwok Stages (kfpbench.dev/run-seconds).
constexpr const char* kV1Chain = R"(apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: kfpbench-chain-
spec:
  entrypoint: pipeline
  templates:
  - name: pipeline
    dag:
      tasks:
      - {name: a, template: step}
      - {name: b, template: step, dependencies: [a]}
  - name: step
    metadata:
      annotations: {kfpbench.dev/start-seconds: "0", kfpbench.dev/run-seconds: "2"}
    container:
      image: registry.example.com/kfpbench/kfpbench:0.1.0
      command: [kfpbench, step]
)";

class KubeClusterKfp : public ScratchDirTest {
 protected:
  void SetUp() override {
    ScratchDirTest::SetUp();
    const char* url = std::getenv("KFPBENCH_KFP_URL");
    if (url == nullptr || std::getenv("KUBECONFIG") == nullptr) {
      GTEST_SKIP() << "no KFP on the stack: `scripts/test --kube` starts one (scripts/kfp)";
    }
    url_ = url;
    http::ClientOptions o;
    o.base = *http::ParseUrl(url_);
    o.request_timeout = std::chrono::seconds(30);
    http_ = std::make_unique<http::Client>(o);
    client_ = std::make_unique<kfp::Client>(*http_, kfp::ClientConfig{}, nullptr);
    prefix_ = "t-" + NewUuid().substr(0, 8);
  }
  // Uploads kV1Chain as a new pipeline; returns its id and its one version's.
  std::pair<std::string, std::string> UploadChain(const std::string& name) {
    auto p = client_->UploadPipeline(name, "chain.yaml", kV1Chain);
    EXPECT_TRUE(p.ok()) << p.error().message;
    if (!p.ok()) return {};
    auto versions = client_->ListPipelineVersions(p->pipeline_id, {});
    EXPECT_TRUE(versions.ok()) << versions.error().message;
    if (!versions.ok() || versions->items.size() != 1) return {p->pipeline_id, ""};
    return {p->pipeline_id, versions->items[0].pipeline_version_id};
  }
  json GetJson(const std::string& args) {
    auto r = Shell("kubectl " + args + " -o json 2>/dev/null");
    return json::parse(r.output, nullptr, false);
  }
  // Seconds from one RFC 3339 time to another (-1000 if either is missing).
  static double Between(const json& from, const json& to) {
    auto start = ParseRfc3339(from.is_string() ? from.get<std::string>() : "");
    auto end = ParseRfc3339(to.is_string() ? to.get<std::string>() : "");
    if (!start.ok() || !end.ok()) return -1000;
    return std::chrono::duration<double>(*end - *start).count();
  }

  std::string url_, prefix_;
  std::unique_ptr<http::Client> http_;
  std::unique_ptr<kfp::Client> client_;
};

// The API server answers kfpbench's client: health, an upload, the list that
// finds it, and KFP's own refusals of a name taken and of a file that is no
// pipeline.
TEST_F(KubeClusterKfp, ApiServerAnswersTheClientAndRefusesWhatKfpRefuses) {
  auto health = client_->GetHealthz();
  ASSERT_TRUE(health.ok()) << health.error().message;
  EXPECT_FALSE(health->multi_user);

  auto [pipeline_id, version_id] = UploadChain(prefix_ + "-chain");
  ASSERT_FALSE(pipeline_id.empty());
  EXPECT_FALSE(version_id.empty());
  kfp::ListOptions by_name;
  by_name.filter =
      json{{"predicates",
            {{{"key", "name"}, {"operation", "EQUALS"}, {"string_value", prefix_ + "-chain"}}}}}
          .dump();
  auto listed = client_->ListPipelines(by_name);
  ASSERT_TRUE(listed.ok()) << listed.error().message;
  ASSERT_EQ(listed->items.size(), 1u);
  EXPECT_EQ(listed->items[0].pipeline_id, pipeline_id);
  EXPECT_EQ(listed->total_size, 1);

  // KFP 2.0.5 answers both with 500 and its reason; 2.14 and later with 409
  // and 400, as the embedded backend does (docs/COMPATIBILITY.md).
  auto taken = client_->UploadPipeline(prefix_ + "-chain", "chain.yaml", kV1Chain);
  ASSERT_FALSE(taken.ok());
  EXPECT_TRUE(taken.error().code == 409 ||
              (taken.error().code == 500 &&
               taken.error().message.find("already exists") != std::string::npos))
      << taken.error().code << " " << taken.error().message;
  auto no_pipeline = client_->UploadPipeline(prefix_ + "-none", "n.yaml", "kind: Nothing\n");
  ASSERT_FALSE(no_pipeline.ok());
  EXPECT_TRUE(no_pipeline.error().code == 400 ||
              (no_pipeline.error().code == 500 &&
               no_pipeline.error().message.find("unknown template format") != std::string::npos))
      << no_pipeline.error().code << " " << no_pipeline.error().message;
  auto missing = client_->GetPipeline("00000000-0000-0000-0000-000000000000");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, 404) << missing.error().message;
}

// A v1 pipeline's run: KFP's API server creates the Workflow, Argo runs its
// pods on kwok's nodes, the persistence agent reports it back, and the run
// reaches SUCCEEDED through PENDING and RUNNING; each step lasted its
// run-seconds (Argo's times are whole seconds: within 1 s), b after a.
TEST_F(KubeClusterKfp, V1ArgoPipelineRunSucceedsWithItsStepsTimes) {
  auto [pipeline_id, version_id] = UploadChain(prefix_ + "-run");
  ASSERT_FALSE(version_id.empty());
  kfp::RunCreate create;
  create.display_name = prefix_ + "-run";
  create.pipeline_id = pipeline_id;
  create.pipeline_version_id = version_id;
  auto run = client_->CreateRun(create);
  ASSERT_TRUE(run.ok()) << run.error().message;

  kfp::Run got;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(180);
  while (std::chrono::steady_clock::now() < deadline) {
    auto r = client_->GetRun(run->run_id);
    ASSERT_TRUE(r.ok()) << r.error().message;
    got = *r;
    if (got.state == RuntimeState::kSucceeded || got.state == RuntimeState::kFailed) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  ASSERT_EQ(got.state, RuntimeState::kSucceeded);
  std::vector<RuntimeState> states;
  for (const auto& s : got.state_history) states.push_back(s.state);
  EXPECT_EQ(states.front(), RuntimeState::kPending);
  EXPECT_EQ(states.back(), RuntimeState::kSucceeded);
  EXPECT_GT(got.finished_at, got.created_at);

  // KFP labels the workflow it made with the run's id.
  json workflows = GetJson("get workflows -n kubeflow -l pipeline/runid=" + run->run_id);
  ASSERT_FALSE(workflows.is_discarded());
  ASSERT_EQ(workflows["items"].size(), 1u) << workflows.dump();
  json& wf = workflows["items"][0];
  EXPECT_EQ(wf["status"].value("phase", ""), "Succeeded");
  std::map<std::string, json> by_task;
  for (const auto& [id, node] : wf["status"]["nodes"].items()) {
    if (node.value("type", "") == "Pod") by_task[node.value("displayName", id)] = node;
  }
  ASSERT_EQ(by_task.size(), 2u);
  for (auto& [task, node] : by_task) {
    EXPECT_EQ(node.value("phase", ""), "Succeeded") << task;
    EXPECT_NEAR(Between(node["startedAt"], node["finishedAt"]), 2, 1.01) << task;
  }
  EXPECT_GE(Between(by_task["a"]["finishedAt"], by_task["b"]["startedAt"]), 0);
}

// kfpbench's harness against it: PIPELINE_UPLOAD and RANDOM_GETS (KFP's
// perf-tests modes that need no pipeline to run), every call answered 200 by
// KFP's API server on MariaDB, and everything it made deleted afterwards.
TEST_F(KubeClusterKfp, UploadAndRandomGetsModesRunWithoutErrors) {
  std::string scenario = Write("s.json", R"([
    {"mode": "PIPELINE_UPLOAD", "startTime": 0, "runTime": "3s", "numTimes": 1,
     "pipelineFileName": "sleep_chain.yaml"},
    {"mode": "RANDOM_GETS", "startTime": 0, "runTime": "3s", "numTimes": 2}
  ])");
  auto out = dir_ / "out";
  auto r = Kfpbench("run " + scenario + " --pipelines " + ExamplePipelines() + " --host " + url_ +
                    " --quiet --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(out / "results.json");
  json results = json::parse(in, nullptr, false);
  ASSERT_FALSE(results.is_discarded());
  for (const char* op : {"UploadPipeline", "UploadPipelineVersion", "ListPipelines", "ListRuns",
                         "ListExperiments", "GetHealthz"}) {
    ASSERT_TRUE(results["operations"].contains(op)) << op;
    EXPECT_GT(results["operations"][op].value("count", 0), 0) << op;
    EXPECT_EQ(results["operations"][op].value("errors", -1), 0)
        << op << ": " << results["operations"][op]["error_messages"].dump();
  }
  // Cleaned up, though KFP 2.0.5 has no DeletePipeline cascade: the client
  // deletes the versions first.
  EXPECT_GT(results["created"].value("pipelines", 0), 0);
  EXPECT_EQ(results["deleted"], results["created"]) << results["cleanup_failures"];
}

// KFP v2 pipelines (compiled by KFP's SDK) through the harness: smoke.json's
// PIPELINE_RUN of sleep_chain and EXPERIMENT of fan_out. KFP compiles each to
// an Argo workflow of driver and task pods; kfp-driver-reporter answers for
// the drivers, and every run reaches SUCCEEDED with its tasks reported.
TEST_F(KubeClusterKfp, PipelineRunAndExperimentModesRunV2PipelinesToSucceeded) {
  auto out = dir_ / "out";
  const std::string examples = std::string(KFPBENCH_SOURCE_DIR) + "/examples";
  auto r = Kfpbench("run " + examples + "/smoke.json --pipelines " + examples + " --host " + url_ +
                    " --drain-timeout 5m --quiet --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(out / "results.json");
  json results = json::parse(in, nullptr, false);
  ASSERT_FALSE(results.is_discarded());
  EXPECT_EQ(results["created"].value("runs", 0), 3);
  EXPECT_EQ(results["created"].value("experiments", 0), 1);
  EXPECT_EQ(results["runs"]["by_state"].value("SUCCEEDED", 0), 3) << results["runs"]["by_state"];
  for (const auto& record : results["runs"]["records"]) {
    EXPECT_FALSE(record["tasks"].empty()) << record.dump();
  }
  for (const char* op : {"CreateRun", "CreateExperiment", "UploadPipeline"}) {
    EXPECT_EQ(results["operations"][op].value("errors", -1), 0) << op;
  }
  EXPECT_EQ(results["deleted"], results["created"]) << results["cleanup_failures"];
}

}  // namespace
}  // namespace kfpbench::cli
