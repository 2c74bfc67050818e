// End-to-end tests of the real kfpbench binary: bad input and a small run.
#include <signal.h>
#include <sys/wait.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "cli/cli_test_support.h"
#include "cli/common.h"
#include "harness/benchmark.h"
#include "http/server.h"
#include "util/ids.h"

namespace kfpbench::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace kfpbench::testing;  // Kfpbench(), ScratchDirTest, ReadJson, ...

using CliTest = ScratchDirTest;

TEST_F(CliTest, BadScenarioFilesExitTwoWithOneLineNamingTheProblem) {
  struct Case {
    std::string text;
    std::string fragment;
  };
  std::vector<Case> cases = {
      {"[{", "malformed JSON"},
      {R"([{"mode":"FLY","runTime":1}])", "[0].mode: unknown mode 'FLY'"},
      {R"([{"runTime":1}])", "[0].mode: missing"},
      {R"([{"mode":"PIPELINE_RUN","runTime":-1,"pipelineFileName":"sleep_chain.yaml"}])",
       "[0].runTime: must not be negative"},
      {R"([{"mode":"PIPELINE_RUN","runTime":1,"pipelineFileName":"absent.yaml"}])",
       "pipeline file 'absent.yaml' not found"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    std::string file = Write("bad" + std::to_string(i) + ".json", cases[i].text);
    auto r = Kfpbench("run " + file + " --pipelines " + ExamplePipelines() + " --out " +
                      (dir_ / "out").string());
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_THAT(r.output, HasSubstr(cases[i].fragment)) << r.output;
    EXPECT_THAT(r.output, HasSubstr(file)) << r.output;
    EXPECT_FALSE(fs::exists(dir_ / "out" / "results.json"));
  }
  auto missing = Kfpbench("run " + (dir_ / "nope.json").string());
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.output, HasSubstr("nope.json: No such file")) << missing.output;
}

TEST_F(CliTest, MalformedPipelineYamlIsRefusedBeforeAnyLoad) {
  Write("broken.yaml", "components: [unclosed\n");
  std::string file =
      Write("s.json", R"([{"mode":"PIPELINE_RUN","runTime":1,"pipelineFileName":"broken.yaml"}])");
  auto r = Kfpbench("run " + file + " --out " + (dir_ / "out").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("broken.yaml")) << r.output;
}

TEST_F(CliTest, UnreachableHostExitsTwoNamingTheUrl) {
  std::string file =
      Write("s.json",
            R"([{"mode":"PIPELINE_RUN","runTime":"1s","pipelineFileName":"sleep_chain.yaml"}])");
  auto r = Kfpbench("run " + file + " --pipelines " + ExamplePipelines() +
                    " --host http://127.0.0.1:1 --token s3cr3t-t0ken-value --out " +
                    (dir_ / "out").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("http://127.0.0.1:1")) << r.output;
  EXPECT_THAT(r.output, Not(HasSubstr("s3cr3t-t0ken-value"))) << r.output;
}

TEST_F(CliTest, SmallScenarioRunsEndToEndAndWritesResults) {
  std::string file = Write("s.json", R"([
    {"mode": "PIPELINE_RUN", "startTime": 0, "runTime": "3s", "numTimes": 2,
     "pipelineFileName": "sleep_chain.yaml", "params": {"duration": "200ms"}}
  ])");
  fs::path out = dir_ / "out";
  auto r = Kfpbench("run " + file + " --pipelines " + ExamplePipelines() +
                    " --poll-interval 100ms" + " --token s3cr3t-t0ken-value --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("CreateRun")) << r.output;
  EXPECT_THAT(r.output, Not(HasSubstr("s3cr3t-t0ken-value")));
  auto j = nlohmann::json::parse(ReadText(out / "results.json"));
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_FALSE(j["partial"].get<bool>());
  EXPECT_TRUE(j["target"]["embedded"].get<bool>());
  EXPECT_GT(j["operations"]["CreateRun"]["count"].get<int>(), 0);
  // Following the runs is the observer's, recorded apart from the workload.
  EXPECT_GT(j["observer"]["operations"]["GetRun"]["count"].get<int>(), 0);
  EXPECT_FALSE(j["operations"].contains("GetRun"));
  EXPECT_EQ(j["operations"]["CreateRun"]["errors"], 0);
  int runs = j["runs"]["count"];
  EXPECT_GE(runs, 2);
  EXPECT_EQ(j["runs"]["by_state"].value("SUCCEEDED", 0), runs) << j["runs"].dump(2);
  for (const auto& run : j["runs"]["records"]) {
    EXPECT_TRUE(run.contains("duration_ms")) << run;
    EXPECT_GT(run["duration_ms"].get<double>(), 0);
    EXPECT_EQ(run["tasks"].size() >= 3, true) << run;
  }
  EXPECT_THAT(j.dump(), Not(HasSubstr("s3cr3t-t0ken-value")));
}

TEST_F(CliTest, FailingServerTripsMaxErrorRateAndResultsArePartial) {
  // A real HTTP server that is healthy but fails every API call.
  http::ServerOptions so;
  so.handler = [](const http::Request& r) {
    if (r.path == "/apis/v2beta1/healthz") return http::Response::Json(200, "{}");
    return http::Response::Json(503, R"({"code":14,"message":"overloaded","details":[]})");
  };
  http::Server server(so);
  ASSERT_TRUE(server.Start().ok());
  std::string file = Write("s.json", R"([{"mode":"RANDOM_GETS","runTime":"60s","concurrency":2}])");
  fs::path out = dir_ / "out";
  auto r = Kfpbench("run " + file + " --host http://127.0.0.1:" + std::to_string(server.port()) +
                    " --max-error-rate 10% --poll-interval 50ms --out " + out.string());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  auto j = nlohmann::json::parse(ReadText(out / "results.json"));
  EXPECT_TRUE(j["partial"].get<bool>());
  EXPECT_THAT(j["partial_reason"].get<std::string>(), HasSubstr("max-error-rate"));
  EXPECT_GT(j["operations"]["ListPipelines"]["by_status"]["503"].get<int>(), 0);
  EXPECT_LT(j["elapsed_s"].get<double>(), 30);  // stopped early, not after runTime
  server.Stop();
}

TEST_F(CliTest, OpenLoopRunsAreTimedFromTheirIntendedStart) {
  std::string file = Write("s.json", R"([
    {"mode": "PIPELINE_RUN", "runTime": "3s", "rate": 120, "arrival": "poisson", "seed": 3,
     "pipelineFileName": "sleep_chain.yaml", "params": {"duration": "100ms"}}
  ])");
  fs::path out = dir_ / "out";
  auto r = Kfpbench("run " + file + " --pipelines " + ExamplePipelines() +
                    " --executor stub --poll-interval 50ms --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(ReadText(out / "results.json"));
  int runs = j["runs"]["count"];
  EXPECT_GT(runs, 0);
  EXPECT_EQ(j["runs"]["start_delay_ms"]["count"], runs);
  for (const auto& run : j["runs"]["records"]) {
    EXPECT_FALSE(run["intended_at"].get<std::string>().empty());
    EXPECT_GE(run["latency_from_intended_ms"].get<double>(), run["duration_ms"].get<double>() - 5);
  }
}

TEST_F(CliTest, RandomGetsAndUploadModesRecordTheirOperations) {
  std::string file = Write("s.json", R"([
    {"mode": "PIPELINE_UPLOAD", "runTime": "2s", "concurrency": 1,
     "pipelineFileName": "sleep_chain.yaml"},
    {"mode": "RANDOM_GETS", "startTime": "1s", "runTime": "1s", "concurrency": 2}
  ])");
  fs::path out = dir_ / "out";
  auto r = Kfpbench("run " + file + " --pipelines " + ExamplePipelines() +
                    " --executor stub --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(ReadText(out / "results.json"));
  for (const char* op : {"UploadPipeline", "UploadPipelineVersion", "ListPipelines",
                         "ListPipelineVersions", "ListExperiments", "ListRuns"}) {
    ASSERT_TRUE(j["operations"].contains(op)) << op;
    EXPECT_GT(j["operations"][op]["count"].get<int>(), 0) << op;
    EXPECT_EQ(j["operations"][op]["errors"].get<int>(), 0) << op << " " << j["operations"][op];
  }
  EXPECT_TRUE(j["cleanup_failures"].empty()) << j["cleanup_failures"];
}

TEST_F(CliTest, RandomGetsMixDrawsOnlyTheWeightedCalls) {
  // Runs to read first; then GetRun drawn about nine times as often as
  // ListPipelines, and none of the chain's other calls.
  std::string file = Write("s.json", R"([
    {"mode": "PIPELINE_RUN", "runTime": "1s", "numTimes": 2, "pipelineFileName": "sleep_chain.yaml"},
    {"mode": "RANDOM_GETS", "startTime": "2s", "runTime": "2s", "concurrency": 2,
     "mix": {"GetRun": 9, "ListPipelines": 1}}
  ])");
  fs::path out = dir_ / "out";
  auto r = Kfpbench("run " + file + " --pipelines " + ExamplePipelines() +
                    " --executor stub --poll-interval 100ms --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(ReadText(out / "results.json"));
  const auto& ops = j["operations"];
  ASSERT_TRUE(ops.contains("GetRun") && ops.contains("ListPipelines")) << ops;
  EXPECT_FALSE(ops.contains("ListPipelineVersions")) << ops;
  EXPECT_FALSE(ops.contains("ListExperiments")) << ops;
  int get_run = ops["GetRun"]["count"].get<int>();
  int list_pipelines = ops["ListPipelines"]["count"].get<int>();
  EXPECT_EQ(ops["GetRun"]["errors"].get<int>(), 0);
  // Hundreds of draws at p = 0.9: the share is far from 0.5 or 1.
  ASSERT_GT(get_run + list_pipelines, 100);
  double share = static_cast<double>(get_run) / (get_run + list_pipelines);
  EXPECT_GT(share, 0.8);
  EXPECT_LT(share, 0.97);
}

TEST_F(CliTest, RandomGetsMixOnAnEmptyTargetSaysWhatIsMissing) {
  std::string file = Write("s.json", R"([
    {"mode": "RANDOM_GETS", "runTime": "1s", "concurrency": 1, "mix": {"GetRun": 1}}
  ])");
  auto r = Kfpbench("run " + file + " --executor stub --out " + (dir_ / "out").string());
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("GetRun needs a run on the target")) << r.output;
}

TEST_F(CliTest, LargeDatasetReportsArtifactThroughputPerStep) {
  std::string file = Write("s.json", R"([
    {"mode": "LARGE_DATASET", "runTime": "1s", "numTimes": 1,
     "pipelineFileName": "large_dataset.yaml", "params": {"size": "4Mi"}}
  ])");
  fs::path out = dir_ / "out";
  auto r = Kfpbench("run " + file + " --pipelines " + ExamplePipelines() +
                    " --poll-interval 100ms --artifact-root " + (dir_ / "artifacts").string() +
                    " --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("Artifact throughput per step")) << r.output;
  auto j = nlohmann::json::parse(ReadText(out / "results.json"));
  EXPECT_EQ(j["runs"]["by_state"].value("SUCCEEDED", 0), j["runs"]["count"]) << j["runs"];
  for (const char* step : {"write-dataset", "read-dataset", "read-dataset-2"}) {
    ASSERT_TRUE(j["artifacts"].contains(step)) << j["artifacts"];
    EXPECT_EQ(j["artifacts"][step]["artifact_bytes"], 4 << 20);
    EXPECT_GT(j["artifacts"][step]["mib_per_s"]["p50"].get<double>(), 0);
  }
}

// A pipeline of one `kfpbench step --duration D` asking for `cpu` (none if empty).
std::string OneStepPipeline(const std::string& duration, const std::string& cpu) {
  return fmt::format(
      R"(components:
  comp-work:
    executorLabel: exec-work
deploymentSpec:
  executors:
    exec-work:
      container:
        image: kfpbench
        command: [kfpbench, step, --duration, {}]{}
pipelineInfo:
  name: one-step
root:
  dag:
    tasks:
      work:
        componentRef:
          name: comp-work
        taskInfo:
          name: work
schemaVersion: 2.1.0
)",
      duration,
      cpu.empty() ? ""
                  : fmt::format("\n        resources:\n          resourceCpuRequest: '{}'", cpu));
}

TEST_F(CliTest, StressShapeFindsTheHighestRateThatHeldTheSlo) {
  // On a one-node cluster of 1 CPU, steps asking 1 CPU for 1 s each run one
  // at a time: 60 runs a minute is capacity. 15 a minute holds a 3 s SLO;
  // 120 a minute is twice capacity, so the queue grows and latency from the
  // intended start breaks it.
  std::string file = Write("s.json", R"([
    {"mode": "PIPELINE_RUN", "runTime": "30s", "rate": 15, "pipelineFileName": "one_cpu_step.yaml",
     "shape": "stress",
     "stress": {"stepTime": "4s", "rateFactor": 8, "slo": {"p95": "3s", "errorRate": "0%"}}}
  ])");
  Write("one_cpu_step.yaml", OneStepPipeline("1s", "1"));
  fs::path out = dir_ / "out";
  auto r = Kfpbench("run " + file + " --executor stub --stub-duration constant:1s --nodes 1 " +
                    "--node-cpu 1 --node-memory 1Gi --poll-interval 50ms --drain-timeout 60s " +
                    "--out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(ReadText(out / "results.json"));
  const auto& stress = j["stress"]["0"];
  ASSERT_GE(stress["steps"].size(), 2u) << stress;
  EXPECT_TRUE(stress["steps"][0]["held"].get<bool>()) << stress;
  EXPECT_FALSE(stress["steps"].back()["held"].get<bool>()) << stress;
  EXPECT_DOUBLE_EQ(stress["peak_rate_per_minute"].get<double>(), 15) << stress;
  EXPECT_EQ(stress["stopped"], "slo_broken");
  EXPECT_EQ(stress["stopped_because"].get<std::string>().rfind("the SLO broke at 120/min: ", 0), 0u)
      << stress;
  EXPECT_THAT(r.output, HasSubstr("Peak: 15 runs/min.")) << r.output;
}

TEST_F(CliTest, ClusterFileGivesTheEmbeddedBackendItsNodesAndRefusesMixedFlags) {
  std::string cluster = Write("cluster.yaml", R"(pools:
- {name: gpu, cpu: 8, memory: 32Gi, max: 2, taints: [{key: gpu, effect: NoExecute}]}
)");
  auto mixed = Kfpbench("serve --port 0 --cluster " + cluster + " --nodes 2");
  EXPECT_EQ(mixed.exit_code, 2) << mixed.output;
  EXPECT_THAT(mixed.output, HasSubstr("--cluster replaces --nodes")) << mixed.output;
  std::string bad = Write("bad.yaml", "pools: [{cpu: 8, memory: 32Gi, max: 1, taints: [x]}]\n");
  auto broken = Kfpbench("serve --port 0 --cluster " + bad);
  EXPECT_EQ(broken.exit_code, 2) << broken.output;
  EXPECT_THAT(broken.output, HasSubstr("bad.yaml: cluster.pools[0].taints[0]: expected a mapping"))
      << broken.output;
}

TEST_F(CliTest, StressSaysWhenItStoppedAtMaxRateRatherThanAtTheSlo) {
  std::string file = Write("s.json", R"([
    {"mode": "PIPELINE_RUN", "runTime": "20s", "rate": 60, "pipelineFileName": "one_step.yaml",
     "shape": "stress",
     "stress": {"stepTime": "2s", "rateFactor": 2, "maxRate": 100,
                "slo": {"p95": "30s", "errorRate": "0%"}}}
  ])");
  Write("one_step.yaml", OneStepPipeline("10ms", ""));
  fs::path out = dir_ / "out";
  auto r = Kfpbench("run " + file + " --executor stub --stub-duration constant:10ms " +
                    "--poll-interval 50ms --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = ReadJson(out / "results.json");
  const auto& stress = j["stress"]["0"];
  ASSERT_EQ(stress["steps"].size(), 1u) << stress;
  EXPECT_TRUE(stress["steps"][0]["held"].get<bool>()) << stress;
  EXPECT_EQ(stress["stopped"], "max_rate_reached") << stress;
  EXPECT_EQ(stress["stopped_because"], "the next step, 120/min, is above maxRate 100/min");
  EXPECT_THAT(r.output,
              HasSubstr("Held up to 60 runs/min; the peak is higher than the search went."))
      << r.output;
}

TEST_F(CliTest, ScheduledRunsCountFiresAndTriggerLag) {
  std::string file = Write("s.json", R"([
    {"mode": "SCHEDULED_RUNS", "runTime": "4s", "numTimes": 2, "cron": "*/1 * * * * *",
     "pipelineFileName": "sleep_chain.yaml", "params": {"duration": "50ms"}}
  ])");
  fs::path out = dir_ / "out";
  std::string collector = Write("collector.json", R"({"site": "lab"})");
  auto r = Kfpbench("run " + file + " --pipelines " + ExamplePipelines() +
                    " --executor stub --stub-duration constant:50ms --poll-interval 50ms" +
                    " --collector 'cat " + collector + "' --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(ReadText(out / "results.json"));
  const auto& s = j["schedules"]["0"];
  EXPECT_EQ(s["recurring_runs"], 2);
  EXPECT_EQ(s["expected_fires"], 8);                  // two schedules, a fire a second for 4 s
  EXPECT_GE(s["observed_fires"].get<int>(), 6) << s;  // the scheduler may miss one at the edges
  EXPECT_EQ(s["missed_fires"].get<int>(), 8 - s["observed_fires"].get<int>());
  EXPECT_EQ(j["schedules"]["trigger_lag_ms"]["count"], s["observed_fires"]);
  // The schedules' runs are found by the observer, not by the workload's client.
  EXPECT_FALSE(j["operations"].contains("ListRuns")) << j["operations"];
  EXPECT_TRUE(j["observer"]["operations"].contains("ListRuns")) << j["observer"];
  for (const auto& run : j["runs"]["records"]) {
    EXPECT_FALSE(run["recurring_run_id"].get<std::string>().empty());
    EXPECT_GE(run["trigger_lag_ms"].get<double>(), 0);
  }
  ASSERT_EQ(j["collectors"].size(), 2u);
  EXPECT_EQ(j["collectors"][0]["phase"], "start");
  EXPECT_EQ(j["collectors"][1]["output"]["site"], "lab") << j["collectors"];
  EXPECT_TRUE(j["cleanup_failures"].empty()) << j["cleanup_failures"];
}

TEST_F(CliTest, ThresholdsGateTheExitCodeAndReportsAreWritten) {
  std::string file = Write("s.json", R"({
    "thresholds": {"GetRun": ["p99 < 1ms", "error_rate < 1%"], "run_duration": ["p95 < 10m"]},
    "scenarios": [{"mode": "PIPELINE_RUN", "runTime": "1s", "numTimes": 1,
                   "pipelineFileName": "sleep_chain.yaml", "params": {"duration": "10ms"}}]
  })");
  fs::path out = dir_ / "out";
  auto r = Kfpbench("run " + file + " --pipelines " + ExamplePipelines() +
                    " --executor stub --poll-interval 20ms --out " + out.string());
  // A 1 ms p99 for GetRun through HTTP with a run in flight is not guaranteed
  // to fail, so either outcome is accepted as long as the code matches it.
  bool failed = r.output.find("FAIL ") != std::string::npos;
  EXPECT_EQ(r.exit_code, failed ? 99 : 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("run_duration")) << r.output;
  EXPECT_TRUE(fs::exists(out / "report.html"));

  std::string impossible = Write("t.json", R"({
    "thresholds": {"CreateRun": ["count > 1000000"]},
    "scenarios": [{"mode": "RANDOM_GETS", "runTime": "1s"}]})");
  auto t = Kfpbench("run " + impossible + " --executor stub --out " + (dir_ / "o2").string());
  EXPECT_EQ(t.exit_code, 99) << t.output;
  EXPECT_THAT(t.output, HasSubstr("FAIL")) << t.output;

  std::string typo = Write("u.json", R"({
    "thresholds": {"CreateRun": ["p95 < fast"]},
    "scenarios": [{"mode": "RANDOM_GETS", "runTime": "1s"}]})");
  auto u = Kfpbench("run " + typo + " --out " + (dir_ / "o3").string());
  EXPECT_EQ(u.exit_code, 2) << u.output;
  EXPECT_THAT(u.output, HasSubstr("thresholds.CreateRun")) << u.output;
  EXPECT_FALSE(fs::exists(dir_ / "o3" / "results.json"));
}

TEST_F(CliTest, ABenchmarkInWhichNothingWorkedExitsOneAndSaysWhy) {
  // A parameter typo: every CreateRun would be refused, so neither run nor
  // validate lets it start (exit 2, the server's words, no results).
  std::string typo = Write("typo.json", R"([{"mode": "PIPELINE_RUN", "runTime": "1s",
    "numTimes": 2, "pipelineFileName": "sleep_chain.yaml", "params": {"durtion": "1s"}}])");
  for (const std::string command : {"run", "validate"}) {
    auto r = Kfpbench(command + " " + typo + " --pipelines " + ExamplePipelines() +
                      (command == "run" ? " --executor stub --quiet --out " + (dir_ / "o1").string()
                                        : std::string()));
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_THAT(r.output,
                HasSubstr("[0].params: unknown parameter 'durtion' (pipeline inputs: duration)"))
        << r.output;
  }
  EXPECT_FALSE(fs::exists(dir_ / "o1" / "results.json"));

  // Runs that fail: exit 1, unless --max-failed-runs allows them.
  std::string failing = Write("fail.json", R"([{"mode": "PIPELINE_RUN", "runTime": "1s",
    "numTimes": 1, "pipelineFileName": "fail_step.yaml", "params": {"duration": "10ms"}}])");
  auto f = Kfpbench("run " + failing + " --pipelines " + ExamplePipelines() +
                    " --quiet --poll-interval 50ms --out " + (dir_ / "o2").string());
  EXPECT_EQ(f.exit_code, 1) << f.output;
  EXPECT_THAT(f.output, HasSubstr("runs did not succeed")) << f.output;
  auto allowed = Kfpbench("run " + failing + " --pipelines " + ExamplePipelines() +
                          " --quiet --poll-interval 50ms --max-failed-runs 100% --out " +
                          (dir_ / "o3").string());
  EXPECT_EQ(allowed.exit_code, 0) << allowed.output;
  auto bad_flag = Kfpbench("run " + failing + " --max-failed-runs lots");
  EXPECT_EQ(bad_flag.exit_code, 2) << bad_flag.output;

  // A wrong path on the host: every call answers 404.
  http::ServerOptions so;
  so.handler = [](const http::Request& req) {
    if (req.path.starts_with("/wrong/apis/v2beta1/healthz")) return http::Response::Json(200, "{}");
    return http::Response::Json(404, R"({"code":5,"message":"Not Found","details":[]})");
  };
  http::Server server(so);
  ASSERT_TRUE(server.Start().ok());
  std::string gets = Write("gets.json", R"([{"mode":"RANDOM_GETS","runTime":"1s"}])");
  auto w =
      Kfpbench("run " + gets + " --quiet --host http://127.0.0.1:" + std::to_string(server.port()) +
               "/wrong --out " + (dir_ / "o4").string());
  EXPECT_EQ(w.exit_code, 1) << w.output;
  EXPECT_THAT(w.output, HasSubstr("every ListRuns call failed")) << w.output;
  EXPECT_THAT(w.output, HasSubstr("HTTP 404: Not Found")) << w.output;
  EXPECT_THAT(w.output, HasSubstr("ListRuns x")) << w.output;  // why, in the summary
  std::ifstream in(dir_ / "o4" / "results.json");
  auto j = nlohmann::json::parse(in);
  EXPECT_GT(j["operations"]["ListRuns"]["error_messages"].size(), 0u) << j["operations"];
  server.Stop();

  // report --thresholds judges like run: a failed threshold exits 99.
  std::string thresholds = Write("th.json", R"({"GetRun": ["count > 1000000"]})");
  auto t = Kfpbench("report " + (dir_ / "o2").string() + " --thresholds " + thresholds + " --html");
  EXPECT_EQ(t.exit_code, 99) << t.output;
  EXPECT_TRUE(fs::exists(dir_ / "o2" / "report.html"));
}

// Issue 29: a --host answering 404 to everything, healthz included, under a
// file with thresholds. The work failed and the thresholds (no data) failed:
// one precedence (docs/RESULTS.md, "Exit codes"): the failed work, exit 1,
// with the healthz named beside it; never 99.
TEST_F(CliTest, WorkThatFailedOutranksTheThresholdsItMadeFail) {
  http::ServerOptions so;
  so.handler = [](const http::Request&) {
    return http::Response::Json(404, R"({"code":5,"message":"Not Found","details":[]})");
  };
  http::Server server(so);
  ASSERT_TRUE(server.Start().ok());
  std::string file = Write("th.json", R"({"thresholds": {"run_duration": ["p95 < 10m"]},
    "scenarios": [{"mode": "RANDOM_GETS", "runTime": "1s"}]})");
  auto r =
      Kfpbench("run " + file + " --quiet --host http://127.0.0.1:" + std::to_string(server.port()) +
               " --out " + (dir_ / "o").string());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("every ListRuns call failed")) << r.output;
  EXPECT_THAT(r.output, HasSubstr("FAIL run_duration")) << r.output;  // no data
  EXPECT_THAT(r.output, HasSubstr("GetHealthz failed too")) << r.output;
  server.Stop();
  // The precedence itself: interrupted, then failed work, then thresholds.
  using harness::Outcome;
  EXPECT_EQ(harness::OutcomeOf(true, true, true), Outcome::kInterrupted);
  EXPECT_EQ(harness::OutcomeOf(false, true, true), Outcome::kFailed);
  EXPECT_EQ(harness::OutcomeOf(false, false, true), Outcome::kThresholdsFailed);
  EXPECT_EQ(harness::OutcomeOf(false, false, false), Outcome::kOk);
  EXPECT_EQ(ExitCode(harness::OutcomeOf(false, true, true)), kExitFailed);
}

TEST_F(CliTest, FourShardsMergeIntoTheSumOfTheirParts) {
  // One embedded backend, four load-generator processes, one merged result.
  std::string log = (dir_ / "serve.log").string();
  std::string pid_file = (dir_ / "serve.pid").string();
  ASSERT_EQ(std::system((std::string(KFPBENCH_BINARY_DIR) +
                         "/kfpbench serve --port 0 --executor "
                         "stub --stub-duration constant:50ms > " +
                         log + " 2>&1 & echo $! > " + pid_file)
                            .c_str()),
            0);
  std::string url;
  for (int i = 0; i < 100 && url.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::ifstream in(log);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto at = text.find("http://");
    if (at != std::string::npos) url = text.substr(at, text.find("/apis", at) - at);
  }
  ASSERT_FALSE(url.empty());
  std::string file = Write("s.json", R"({
    "thresholds": {"CreateRun": ["count > 0"]},
    "scenarios": [{"mode": "PIPELINE_RUN", "runTime": "2s", "numTimes": 4,
                   "pipelineFileName": "sleep_chain.yaml", "params": {"duration": "10ms"}}]})");
  std::string shard_dirs;
  uint64_t created = 0, gets = 0;
  size_t runs = 0;
  for (int i = 0; i < 4; ++i) {
    fs::path out = dir_ / ("shard" + std::to_string(i));
    auto r = Kfpbench("run " + file + " --pipelines " + ExamplePipelines() + " --host " + url +
                      " --shard " + std::to_string(i) + "/4 --quiet --poll-interval 50ms --out " +
                      out.string());
    ASSERT_EQ(r.exit_code, 0) << r.output;
    auto j = nlohmann::json::parse(ReadText(out / "results.json"));
    EXPECT_EQ(j["shard"]["count"], 4);
    created += j["operations"]["CreateRun"]["count"].get<uint64_t>();
    gets += j["observer"]["operations"]["GetRun"]["count"].get<uint64_t>();
    runs += j["runs"]["records"].size();
    // Appended in two steps: GCC 12 warns (-Wrestrict, a known false
    // positive) on `" " + std::string` here.
    shard_dirs += ' ';
    shard_dirs += out.string();
  }
  std::ifstream pid_in(pid_file);
  int pid = 0;
  pid_in >> pid;
  if (pid > 0) kill(pid, SIGTERM);

  fs::path merged = dir_ / "merged";
  auto m = Kfpbench("merge" + shard_dirs + " --out " + merged.string());
  ASSERT_EQ(m.exit_code, 0) << m.output;
  std::ifstream in(merged / "results.json");
  auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["operations"]["CreateRun"]["count"].get<uint64_t>(), created);
  EXPECT_EQ(j["observer"]["operations"]["GetRun"]["count"].get<uint64_t>(), gets);
  EXPECT_EQ(j["runs"]["records"].size(), runs);
  EXPECT_EQ(j["observer"]["operations"]["GetRun"]["histogram"]["count"].get<uint64_t>(), gets);
  // Thresholds judge the merged histograms.
  auto t = Kfpbench("report " + merged.string() + " --junit " + (dir_ / "junit.xml").string());
  EXPECT_EQ(t.exit_code, 0) << t.output;
  std::ifstream junit(dir_ / "junit.xml");
  std::string xml((std::istreambuf_iterator<char>(junit)), std::istreambuf_iterator<char>());
  EXPECT_THAT(xml, HasSubstr("CreateRun")) << xml;
  EXPECT_THAT(xml, Not(HasSubstr("<failure"))) << xml;
}

TEST_F(CliTest, PerfTestsSmokeFileRunsAsWritten) {
  // KFP's own perf-tests scenario, unchanged, on the default target: 10
  // minutes of scenarios scaled to 30 s, against real compiled KFP pipelines
  // of SDK Python components, which the embedded backend runs as timed stubs
  // (no images here) and says so before the load and in the results.
  fs::path shared = fs::path(KFPBENCH_SOURCE_DIR) / ".." / "shared" / "kfp";
  if (!fs::exists(shared / "scenarios" / "perf-tests-smoke.json")) {
    GTEST_SKIP() << "../shared is not available";
  }
  fs::path out = dir_ / "out";
  auto r = Kfpbench("run " + (shared / "scenarios" / "perf-tests-smoke.json").string() +
                    " --pipelines " + (shared / "pipelines").string() +
                    " --time-scale 0.05 --quiet --poll-interval 200ms --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("the embedded backend's executor is stub: add_numbers.yaml, "
                                  "pipeline_with_large_datasets.yaml cannot run as processes"))
      << r.output;
  EXPECT_THAT(r.output, HasSubstr("Steps ran as timed stubs")) << r.output;
  auto j = nlohmann::json::parse(ReadText(out / "results.json"));
  EXPECT_EQ(j["target"]["executor"], "stub");
  EXPECT_THAT(j["target"]["executor_reason"].get<std::string>(), HasSubstr("Python component"));
  EXPECT_THAT(j["target"]["origin"].get<std::string>(), HasSubstr("embedded backend"));
  // Repeated runs of the same inputs are KFP's cache's: counted, and said.
  EXPECT_GT(j["runs"]["fully_cached"].get<int>(), 0) << j["runs"]["by_state"];
  EXPECT_GT(j["runs"]["cached_tasks"].get<int>(), 0);
  EXPECT_THAT(r.output, HasSubstr("answered entirely from KFP's cache")) << r.output;
  for (const char* op : {"CreateRun", "GetRun", "CreateExperiment", "ListRuns", "ListPipelines"}) {
    EXPECT_GT(j["operations"][op]["count"].get<int>(), 0) << op;
  }
  int runs = j["runs"]["count"];
  EXPECT_GT(runs, 0);
  EXPECT_EQ(j["runs"]["by_state"].value("SUCCEEDED", 0), runs) << j["runs"]["by_state"];
  EXPECT_LT(j["elapsed_s"].get<double>(), 60);
}

// "cache": false uploads the pipeline with caching off, as KFP's SDK does
// for enable_caching=False: no run is answered from the cache.
TEST_F(CliTest, CacheFalseRunsEveryStep) {
  fs::path shared = fs::path(KFPBENCH_SOURCE_DIR) / ".." / "shared" / "kfp";
  if (!fs::exists(shared / "pipelines" / "add_numbers.yaml")) {
    GTEST_SKIP() << "../shared is not available";
  }
  for (bool cache : {true, false}) {
    std::string scenario = Write("c.json", R"([{"mode": "PIPELINE_RUN", "runTime": "2s",
      "numTimes": 2, "pipelineFileName": "add_numbers.yaml", "params": {"a": 4, "b": 5},
      "cache": )" + std::string(cache ? "true" : "false") +
                                               "}]");
    fs::path out = dir_ / (cache ? "cached" : "uncached");
    auto r = Kfpbench("run " + scenario + " --pipelines " + (shared / "pipelines").string() +
                      " --stub-duration constant:50ms --quiet --poll-interval 50ms --out " +
                      out.string());
    ASSERT_EQ(r.exit_code, 0) << r.output;
    auto j = ReadJson(out / "results.json");
    EXPECT_GT(j["runs"]["count"].get<int>(), 2);
    if (cache) {
      EXPECT_GT(j["runs"]["fully_cached"].get<int>(), 0) << cache;
    } else {
      EXPECT_EQ(j["runs"]["fully_cached"].get<int>(), 0);
      EXPECT_EQ(j["runs"]["cached_tasks"].get<int>(), 0);
    }
  }
  std::string bad = Write("b.json", R"([{"mode": "RANDOM_GETS", "runTime": "1s", "cache": "no"}])");
  auto refused = Kfpbench("validate " + bad);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.output, HasSubstr("[0].cache: must be true or false"));
}

// validate says what run does on every perf-tests file as shipped: a file
// validate refuses (the README examples name pipelines perf-tests does not
// ship, or leave out required parameters) run refuses before any load in the
// same words; smoke.json, which validate accepts, runs
// (PerfTestsSmokeFileRunsAsWritten). With --executor process both refuse the
// SDK-component pipelines, in the same words.
TEST_F(CliTest, ValidateAgreesWithRunOnEveryPerfTestsFile) {
  fs::path shared = fs::path(KFPBENCH_SOURCE_DIR) / ".." / "shared" / "kfp";
  if (!fs::exists(shared / "scenarios")) GTEST_SKIP() << "../shared is not available";
  const std::string pipelines = " --pipelines " + (shared / "pipelines").string();
  int files = 0;
  for (const auto& entry : fs::directory_iterator(shared / "scenarios")) {
    if (entry.path().extension() != ".json") continue;
    ++files;
    auto v = Kfpbench("validate " + entry.path().string() + pipelines);
    if (entry.path().filename() == "perf-tests-smoke.json") {
      EXPECT_EQ(v.exit_code, 0) << v.output;
      continue;
    }
    fs::path out = dir_ / ("run-" + entry.path().stem().string());
    auto run =
        Kfpbench("run " + entry.path().string() + pipelines + " --quiet --out " + out.string());
    EXPECT_EQ(run.exit_code, v.exit_code) << entry.path() << v.output << run.output;
    if (v.exit_code == 2) {
      std::string first = v.output.substr(0, v.output.find('\n'));
      EXPECT_THAT(run.output, HasSubstr(first)) << first << "\n" << run.output;
      EXPECT_FALSE(fs::exists(out / "results.json"));
    }
  }
  EXPECT_GT(files, 0);
  const std::string smoke = (shared / "scenarios" / "perf-tests-smoke.json").string();
  auto validate = Kfpbench("validate " + smoke + pipelines + " --executor process");
  EXPECT_EQ(validate.exit_code, 2) << validate.output;
  const std::string words =
      "[0].pipelineFileName: executor 'exec-add-numbers' (image python:3.9) is a Python "
      "component of KFP's SDK";
  EXPECT_THAT(validate.output, HasSubstr(words)) << validate.output;
  fs::path out = dir_ / "refused";
  auto run =
      Kfpbench("run " + smoke + pipelines + " --executor process --quiet --out " + out.string());
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_THAT(run.output, HasSubstr(words)) << run.output;
  EXPECT_FALSE(fs::exists(out / "results.json"));
  // A real KFP runs them in their images: nothing to refuse.
  EXPECT_EQ(
      Kfpbench("validate " + smoke + pipelines + " --executor process --host http://127.0.0.1:9")
          .exit_code,
      0);
}

TEST_F(CliTest, StepCommandWritesOutputParameters) {
  fs::path param = dir_ / "outputs" / "Output";
  auto r = Kfpbench("step --duration 10ms --memory 1Mi --output-param " + param.string() + "=42");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(param);
  std::string value((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(value, "42");
  EXPECT_EQ(Kfpbench("step --duration banana").exit_code, 2);
}

TEST_F(CliTest, AnUnknownCommandIsNamedWithTheNearestOne) {
  auto r = Kfpbench("rn x");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("unknown command 'rn' (did you mean 'run'?)")) << r.output;
  auto far = Kfpbench("--log-level warn frobnicate");
  EXPECT_EQ(far.exit_code, 2);
  EXPECT_THAT(far.output, HasSubstr("unknown command 'frobnicate'; see kfpbench --help"))
      << far.output;
}

// One vocabulary: --log-level before or after the command; the job command
// takes run's names for the same ideas (the old ones still work).
TEST_F(CliTest, FlagsMeanTheSameWhereverTheyAreWritten) {
  std::string good = Write("good.json", R"([{"mode":"RANDOM_GETS","runTime":"1s"}])");
  EXPECT_EQ(Kfpbench("validate " + good + " --log-level debug").exit_code, 0);
  EXPECT_EQ(Kfpbench("--log-level debug validate " + good).exit_code, 0);
  auto loud = Kfpbench("validate " + good + " --log-level loud");
  EXPECT_EQ(loud.exit_code, 2) << loud.output;
  std::string config =
      (std::filesystem::path(KFPBENCH_SOURCE_DIR) / "examples" / "jobs" / "pytorch-ddp-cpu.yaml")
          .string();
  // Both spellings parse (kubectl then fails: /bin/false is no cluster).
  for (const char* flags :
       {"--kube-context c --poll-interval 1s", "--context c --poll-seconds 1"}) {
    auto r = Kfpbench("job " + config + " --driver kubernetes --kubectl /bin/false --out " +
                      (dir_ / "job").string() + " " + flags);
    EXPECT_THAT(r.output, Not(HasSubstr("was not expected"))) << flags << ": " << r.output;
    EXPECT_THAT(r.output, Not(HasSubstr("--poll"))) << flags << ": " << r.output;
  }
  // After a nested command too.
  auto render = Kfpbench("job render " + config + " --log-level warn");
  EXPECT_EQ(render.exit_code, 0) << render.output;
  EXPECT_THAT(render.output, HasSubstr("kind:")) << render.output;
  auto bad = Kfpbench("job " + config + " --poll-seconds 0");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_THAT(bad.output, HasSubstr("expected a number of seconds above 0")) << bad.output;
}

TEST_F(CliTest, ValidateNamesProblems) {
  std::string good = Write("good.json", R"([{"mode":"RANDOM_GETS","runTime":1}])");
  std::string bad = Write("bad.json", R"([{"mode":"RANDOM_GETS","runTime":1,"extra":true}])");
  EXPECT_EQ(Kfpbench("validate " + good).exit_code, 0);
  auto r = Kfpbench("validate " + bad);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("[0].extra: unknown field")) << r.output;
}

TEST_F(CliTest, TimeScaleMustBeAboveZero) {
  std::string good = Write("good.json", R"([{"mode":"RANDOM_GETS","runTime":1}])");
  for (const char* scale : {"0", "-1", "fast"}) {
    auto r = Kfpbench("run " + good + " --time-scale " + scale);
    EXPECT_EQ(r.exit_code, 2) << scale << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr("--time-scale: must be")) << r.output;
  }
}

TEST_F(CliTest, ValidateNamesEveryProblemAndRefusesWhatRunRefuses) {
  std::string file = Write("many.json", R"({
    "target": {"host": "http://127.0.0.1:1", "hots": "typo"},
    "thresholds": {"GetRuns": ["p95 < 1s"], "CreateRun": ["p95 < -1"]},
    "scenarios": [
      {"mode": "RANDOM_GETS", "runTme": "1m", "concurency": 2},
      {"mode": "RANDOM_GETS", "runTime": "1m", "rte": 3}]})");
  auto v = Kfpbench("validate " + file);
  EXPECT_EQ(v.exit_code, 2) << v.output;
  for (const char* problem :
       {"scenarios[0].runTme: unknown field", "scenarios[0].concurency: unknown field",
        "scenarios[1].rte: unknown field"}) {
    EXPECT_THAT(v.output, HasSubstr(problem)) << problem << "\n" << v.output;
  }
  // Once the scenarios read, the checks run shares with validate name the rest.
  std::string fixed = Write("fixed.json", R"({
    "target": {"host": "http://127.0.0.1:1", "hots": "typo"},
    "thresholds": {"GetRuns": ["p95 < 1s"], "CreateRun": ["p95 < -1"]},
    "scenarios": [{"mode": "RANDOM_GETS", "runTime": 1}]})");
  auto f = Kfpbench("validate " + fixed);
  auto r = Kfpbench("run " + fixed + " --out " + (dir_ / "o").string());
  for (const auto& out : {f, r}) {
    EXPECT_EQ(out.exit_code, 2) << out.output;
    for (const char* problem : {"thresholds.GetRuns: no such metric",
                                "thresholds.CreateRun: \"p95 < -1\"", "target.hots: unknown key"}) {
      EXPECT_THAT(out.output, HasSubstr(problem)) << problem << "\n" << out.output;
    }
  }
  EXPECT_THAT(f.output, HasSubstr("runTime [0] 1 is minutes")) << f.output;
  EXPECT_FALSE(fs::exists(dir_ / "o" / "results.json"));
}

TEST_F(CliTest, OneBareScenarioObjectIsAOneScenarioFile) {
  // As perf-tests' docs show a scenario.
  std::string file =
      Write("one.json", R"({"mode": "RANDOM_GETS", "startTime": 0, "runTime": "1s"})");
  auto v = Kfpbench("validate " + file);
  EXPECT_EQ(v.exit_code, 0) << v.output;
  auto r = Kfpbench("run " + file + " --quiet --out " + (dir_ / "o").string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(dir_ / "o" / "results.json"));
}

TEST_F(CliTest, TheScenarioFilesTargetIsWhereItRunsUnlessAFlagSaysOtherwise) {
  std::atomic<int> served{0};  // counted on the server's threads
  http::ServerOptions so;
  so.handler = [&served](const http::Request& req) {
    ++served;
    if (req.path == "/apis/v2beta1/healthz") return http::Response::Json(200, "{}");
    return http::Response::Json(200, "{}");  // empty lists
  };
  http::Server server(so);
  ASSERT_TRUE(server.Start().ok());
  std::string file = Write(
      "t.json", R"({"target": {"host": "http://127.0.0.1:)" + std::to_string(server.port()) + R"("},
    "scenarios": [{"mode": "RANDOM_GETS", "runTime": "1s", "concurrency": 1}]})");
  auto r = Kfpbench("run " + file + " --quiet --out " + (dir_ / "o1").string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(dir_ / "o1" / "results.json");
  auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["target"]["url"], "http://127.0.0.1:" + std::to_string(server.port()));
  EXPECT_GT(served, 0);
  // --host wins over the file's target.
  int before = served.load();
  auto embedded = Kfpbench("run " + file + " --quiet --host http://127.0.0.1:1 --out " +
                           (dir_ / "o2").string());
  EXPECT_EQ(embedded.exit_code, 2) << embedded.output;  // nothing listens on port 1
  EXPECT_EQ(served, before);
  server.Stop();
}

}  // namespace
}  // namespace kfpbench::cli
