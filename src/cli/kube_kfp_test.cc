// The Kubernetes tier's real-KFP tests: KFP's own API server, persistence
// agent and scheduled-workflow controller (scripts/kfp, built from KFP's Go
// module) on the local stack with Argo's controller and kwok's nodes.
// `scripts/test --kube` starts them and names the API server in
// KFPBENCH_KFP_URL; without it these skip, saying so. kfpbench's own client
// and harness talk to it exactly as they would to a production KFP.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <thread>

#include <fmt/format.h>

#include "cli/cli_test_support.h"
#include "harness/e2e_support.h"
#include "http/client.h"
#include "http/url.h"
#include "kfp/client.h"
#include "util/ids.h"
#include "util/time.h"

namespace kfpbench::cli {
namespace {

using namespace kfpbench::testing;  // Kfpbench(), ScratchDirTest, ...
using nlohmann::json;
using ::testing::HasSubstr;

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

// kfpbench's v1beta1 client against KFP's v1beta1 API: a filtered list finds
// the one pipeline (the request BackendApiTest.V1beta1FiltersNameTheOperationOp
// sends to the embedded backend), KFP refuses v2beta1's word `operation`
// there as the embedded backend does, and `cleanup --benchmark-id --api
// v1beta1` deletes a benchmark's run, experiment and pipeline (whose version
// goes first: KFP's DeletePipelineV1 never cascades).
TEST_F(KubeClusterKfp, V1beta1FiltersAndCleanupFindWhatABenchmarkMade) {
  kfp::Client v1(*http_, {"", kfp::ApiVersion::kV1beta1}, nullptr);
  const std::string id = "kfpbench-" + NewUuid().substr(0, 8);
  auto pipeline = v1.UploadPipeline(id + "-chain", "chain.yaml", kV1Chain);
  ASSERT_TRUE(pipeline.ok()) << pipeline.error().message;
  kfp::ListOptions by_name;
  by_name.filter =
      json{{"predicates",
            {{{"key", "name"}, {"operation", "EQUALS"}, {"string_value", id + "-chain"}}}}}
          .dump();
  auto listed = v1.ListPipelines(by_name);
  ASSERT_TRUE(listed.ok()) << listed.error().message;
  ASSERT_EQ(listed->items.size(), 1u);
  EXPECT_EQ(listed->items[0].pipeline_id, pipeline->pipeline_id);
  EXPECT_EQ(listed->total_size, 1);
  const std::string v2_words =
      json{{"predicates", {{{"key", "name"}, {"operation", "EQUALS"}, {"string_value", "x"}}}}}
          .dump();
  auto refused = http_->Send(http::Method::kGet,
                             "/apis/v1beta1/pipelines?" + http::BuildQuery({{"filter", v2_words}}));
  ASSERT_TRUE(refused.ok()) << refused.error().message;
  EXPECT_EQ(refused->status, 400);
  EXPECT_THAT(refused->body, HasSubstr(R"(unknown field \"operation\")"));

  auto experiment = v1.CreateExperiment(id + "-e", "");
  ASSERT_TRUE(experiment.ok()) << experiment.error().message;
  auto versions = v1.ListPipelineVersions(pipeline->pipeline_id, {});
  ASSERT_TRUE(versions.ok() && versions->items.size() == 1u);
  kfp::RunCreate create;
  create.display_name = id + "-run";
  create.experiment_id = experiment->experiment_id;
  create.pipeline_id = pipeline->pipeline_id;
  create.pipeline_version_id = versions->items[0].pipeline_version_id;
  auto run = v1.CreateRun(create);
  ASSERT_TRUE(run.ok()) << run.error().message;

  auto r = Kfpbench("cleanup --benchmark-id " + id + " --api v1beta1 --host " + url_);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("deleted 0 recurring run(s), 1 run(s), 1 experiment(s) and 1 "
                                  "pipeline(s) of benchmark " +
                                  id));
  auto gone_run = client_->GetRun(run->run_id);
  ASSERT_FALSE(gone_run.ok());
  EXPECT_EQ(gone_run.error().code, 404);
  auto gone_pipeline = client_->GetPipeline(pipeline->pipeline_id);
  ASSERT_FALSE(gone_pipeline.ok());
  EXPECT_EQ(gone_pipeline.error().code, 404);
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

// KFP v2 pipelines (compiled by KFP's SDK) through the harness, and what
// is done with a history: smoke.json's PIPELINE_RUN of sleep_chain and
// EXPERIMENT of fan_out, beside SCHEDULED_RUNS of growth_tiny (recurring runs
// that KFP's scheduled-workflow controller starts), kept; `capture` reads
// them back from KFP, `run` replays the capture on KFP, `plan` answers on the
// captured workload, and `cleanup --benchmark-id` deletes what was kept. KFP
// compiles each pipeline to an Argo workflow of driver and task pods;
// kfp-driver-reporter answers for the drivers, and every run reaches
// SUCCEEDED with its tasks reported.
TEST_F(KubeClusterKfp, HarnessModesCaptureReplayPlanAndCleanupOnV2Pipelines) {
  const std::string examples = std::string(KFPBENCH_SOURCE_DIR) + "/examples";
  // KFP keeps whole seconds: the window opens a second early.
  const std::string since = FormatRfc3339(
      std::chrono::floor<std::chrono::seconds>(WallClock::now()) - std::chrono::seconds(1));
  std::string scenario = Write("s.json", R"([
    {"mode": "PIPELINE_RUN", "startTime": 0, "runTime": "20s", "numTimes": 2,
     "pipelineFileName": "pipelines/sleep_chain.yaml", "params": {"duration": "1s"}},
    {"mode": "EXPERIMENT", "startTime": "5s", "runTime": "15s", "numTimes": 1,
     "pipelineFileName": "pipelines/fan_out.yaml"},
    {"mode": "SCHEDULED_RUNS", "startTime": 0, "runTime": "20s", "numTimes": 1,
     "cron": "*/10 * * * * *", "pipelineFileName": "pipelines/growth_tiny.yaml"}
  ])");
  auto out = dir_ / "out";
  auto r = Kfpbench("run " + scenario + " --pipelines " + examples + " --host " + url_ +
                    " --drain-timeout 5m --keep --quiet --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  json results = ReadJson(out / "results.json");
  ASSERT_FALSE(results.is_discarded());
  const std::string benchmark_id = results.value("benchmark_id", "");
  // Fires every 10 s for 20 s: 2 owed, both made by KFP's controller (which
  // syncs a schedule every 10 s, so the last comes up to 10 s after the end).
  const json& schedule = results["schedules"]["2"];
  EXPECT_EQ(schedule.value("expected_fires", 0), 2) << schedule;
  EXPECT_EQ(schedule.value("observed_fires", 0), 2) << schedule;
  const int runs = static_cast<int>(results["runs"]["records"].size());
  EXPECT_EQ(runs, 5);
  EXPECT_EQ(results["created"].value("runs", 0), runs);
  EXPECT_EQ(results["created"].value("recurring_runs", 0), 1);
  EXPECT_EQ(results["runs"]["by_state"].value("SUCCEEDED", 0), runs) << results["runs"]["by_state"];
  for (const auto& record : results["runs"]["records"]) {
    EXPECT_FALSE(record["tasks"].empty()) << record.dump();
  }
  for (const char* op : {"CreateRun", "CreateExperiment", "UploadPipeline", "CreateRecurringRun"}) {
    EXPECT_EQ(results["operations"][op].value("errors", -1), 0) << op;
  }
  EXPECT_GE(results["schedules"]["trigger_lag_ms"].value("count", 0), 1) << results["schedules"];

  // The history, read back from KFP through its read API.
  const std::string until = FormatRfc3339(
      std::chrono::ceil<std::chrono::seconds>(WallClock::now()) + std::chrono::seconds(1));
  auto capture = dir_ / "capture";
  auto captured = Kfpbench("capture --host " + url_ + " --since " + since + " --until " + until +
                           " --qps 0 --out " + capture.string());
  ASSERT_EQ(captured.exit_code, 0) << captured.output;
  json manifest = ReadJson(capture / "manifest.json");
  EXPECT_EQ(manifest.value("runs", 0), runs) << manifest;
  EXPECT_EQ(manifest.value("censored", -1), 0) << manifest;
  EXPECT_EQ(manifest.value("missing_versions", -1), 0) << manifest;
  json workload = ReadJson(capture / "workload.json");
  EXPECT_EQ(workload["run_states"].value("SUCCEEDED", 0), runs) << workload["run_states"];
  EXPECT_EQ(workload["mix"].size(), 3u) << workload["mix"];

  // Replayed on KFP at its recorded offsets (a tenth of them).
  auto replayed = dir_ / "replay";
  auto replay = Kfpbench("run " + (capture / "replay.json").string() + " --host " + url_ +
                         " --time-scale 0.1 --drain-timeout 5m --quiet --out " + replayed.string());
  ASSERT_EQ(replay.exit_code, 0) << replay.output;
  json replay_results = ReadJson(replayed / "results.json");
  EXPECT_EQ(replay_results["runs"]["by_state"].value("SUCCEEDED", 0), runs)
      << replay_results["runs"]["by_state"];
  EXPECT_EQ(replay_results["deleted"], replay_results["created"])
      << replay_results["cleanup_failures"];

  // Planned on the captured mix: the stack's nodes, three times the load.
  std::string cluster = Write("cluster.yaml", R"(pools:
  - name: kwok
    cpu: 16
    memory: 56Gi
    min: 4
    max: 4
)");
  auto plan = Kfpbench("plan " + cluster + " " + (capture / "simulate" / "workload.yaml").string() +
                       " --arrival-scale 3 --within 10m --replications 20 --out " +
                       (dir_ / "plan.json").string());
  ASSERT_EQ(plan.exit_code, 0) << plan.output;
  json answer = ReadJson(dir_ / "plan.json");
  EXPECT_FALSE(answer.is_discarded()) << plan.output;

  // What the benchmark kept, deleted by its id: the recurring run, every run
  // (the fires too), the experiments and the pipelines.
  auto cleanup = Kfpbench("cleanup --benchmark-id " + benchmark_id + " --host " + url_);
  ASSERT_EQ(cleanup.exit_code, 0) << cleanup.output;
  EXPECT_THAT(cleanup.output, HasSubstr(fmt::format(
                                  "deleted 1 recurring run(s), {} run(s), {} experiment(s) and {} "
                                  "pipeline(s) of benchmark {}",
                                  runs, results["created"].value("experiments", 0),
                                  results["created"].value("pipelines", 0), benchmark_id)));
}

// The growth shape on KFP's MariaDB at a small, bounded scale: the first
// level is what KFP stores already (no fill), the second 8 runs more, filled
// through CreateRun and settled (each a workflow on kwok) before its mix is
// measured; every fill run is deleted afterwards. The figures in
// docs/history/PERFORMANCE-notes.md come from the same scenario at larger levels.
TEST_F(KubeClusterKfp, GrowthCurveOfListRunsOnMariaDb) {
  kfp::ListOptions one;
  one.page_size = 1;
  auto stored = client_->ListRuns(one);
  ASSERT_TRUE(stored.ok()) << stored.error().message;
  const int64_t now = std::max<int64_t>(1, stored->total_size);
  std::string scenario = Write("growth.json", fmt::format(R"({{"scenarios": [{{
      "mode": "PIPELINE_RUN", "runTime": "5m", "pipelineFileName": "growth_tiny.yaml",
      "shape": "growth",
      "growth": {{"levels": [{}, {}], "measureTime": "3s", "fillConcurrency": 8,
                 "measureConcurrency": 2, "runsPerExperiment": 10, "runsPerPipeline": 10,
                 "versionsPerPipeline": 1, "settleTimeout": "3m", "extrapolateTo": 0}}}}]}})",
                                                          now, now + 8));
  auto out = dir_ / "out";
  auto r = Kfpbench("run " + scenario + " --pipelines " + ExamplePipelines() + " --host " + url_ +
                    " --growth-fill " + prefix_ + " --quiet --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  json results = ReadJson(out / "results.json");
  const json& curve = results["growth"]["0"];
  ASSERT_EQ(curve["levels"].size(), 2u) << curve;
  for (const auto& level : curve["levels"]) {
    EXPECT_GE(level.value("runs_stored", 0), level.value("target_runs", 1)) << level;
  }
  EXPECT_TRUE(curve["fits"].contains("ListRuns")) << curve["fits"];
  EXPECT_TRUE(results["cleanup_failures"].empty()) << results["cleanup_failures"];
  kfp::ListOptions fill;
  fill.filter =
      json{{"predicates",
            {{{"key", "display_name"}, {"operation", "IS_SUBSTRING"}, {"string_value", prefix_}}}}}
          .dump();
  auto left = client_->ListExperiments(fill);
  ASSERT_TRUE(left.ok()) << left.error().message;
  EXPECT_EQ(left->total_size, 0);
  auto after = client_->ListRuns(one);
  ASSERT_TRUE(after.ok()) << after.error().message;
  EXPECT_EQ(after->total_size, stored->total_size);
}

}  // namespace
}  // namespace kfpbench::cli
