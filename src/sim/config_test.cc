#include "sim/config.h"

#include <filesystem>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/test_support.h"
#include "sim/simulator.h"
#include "sim/test_support.h"
#include "util/files.h"
#include "util/ids.h"

namespace kfpbench::sim {
namespace {

using namespace std::chrono_literals;
using testing::CapacityExamples;
using ::testing::HasSubstr;

TEST(Config, ExamplesLoad) {
  auto c = LoadCluster(CapacityExamples() / "cluster.yaml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_EQ(c->pools.size(), 1u);
  EXPECT_EQ(c->pools[0].memory, int64_t{16} << 30);
  EXPECT_EQ(c->pools[0].max, 50);
  EXPECT_EQ(c->autoscaler.provisioning_delay, 90s);
  auto w = LoadWorkload(CapacityExamples() / "workload.yaml");
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_EQ(w->runs, 500);
  EXPECT_EQ(w->arrival_kind, WorkloadSpec::ArrivalKind::kRate);
  EXPECT_EQ(w->steps.For("exec-train").overhead, 3s);
  EXPECT_EQ(w->steps.For("exec-train").duration.ToString(),
            exec::ParseDurationDist("lognormal:10m:0.4")->ToString());
  auto csv = LoadWorkload(CapacityExamples() / "workload_csv.yaml");
  ASSERT_TRUE(csv.ok()) << csv.error().message;
  ASSERT_EQ(csv->csv.size(), 3u);
  EXPECT_EQ(csv->csv[1].offset, 30s);
  EXPECT_EQ(csv->csv[1].parameters["epochs"], 2);
}

// A config file went through yaml-cpp's node tree, which shares an anchored
// node among its aliases; reading it to JSON expanded each: a 300-byte file
// of nested aliases grew past 4 GB. Every YAML file now goes through the
// bounded reader.
TEST(Config, AliasBombsAreRefusedInEveryFile) {
  const std::string bomb = ir::testing::YamlAliasBomb();
  auto cluster = ParseCluster("pools: [{cpu: 4, memory: 16Gi, max: 2}]\n" + bomb);
  ASSERT_FALSE(cluster.ok());
  EXPECT_THAT(cluster.error().message, HasSubstr("cluster: yaml: more than 1000000 nodes"));
  auto workload = ParseWorkload("runs: 1\n" + bomb, ".");
  ASSERT_FALSE(workload.ok());
  EXPECT_THAT(workload.error().message, HasSubstr("alias bomb"));
  auto calibration = ParseCalibration(bomb);
  ASSERT_FALSE(calibration.ok());
  EXPECT_THAT(calibration.error().message, HasSubstr("alias bomb"));
}

TEST(Config, ClusterErrorsNameTheField) {
  auto err = [](const char* yaml) {
    auto c = ParseCluster(yaml);
    return c.ok() ? std::string("ok") : c.error().message;
  };
  EXPECT_EQ(err("pools: [{cpu: 4, memory: 16Gi, max: 2, colour: red}]"),
            "cluster.pools[0].colour: unknown field (known: name, cpu, memory, max, min, initial, "
            "labels, taints, resources)");
  // Every unknown field at once, each by its path.
  EXPECT_EQ(err("pools: [{cpu: 4, memory: 16Gi, max: 2}]\nspeed: 3\ncolour: red"),
            "cluster.colour: unknown field (known: pools, autoscaler, defaultTask, api, "
            "artifactStore, controlPlane)\n"
            "cluster.speed: unknown field (known: pools, autoscaler, defaultTask, api, "
            "artifactStore, controlPlane)");
  EXPECT_THAT(err("pools: [{cpu: four, memory: 16Gi, max: 2}]"), HasSubstr("cluster.pools[0].cpu"));
  EXPECT_THAT(err("pools: [{cpu: 4, memory: 16Zi, max: 2}]"), HasSubstr("cluster.pools[0].memory"));
  EXPECT_EQ(err("pools: [{cpu: 4, memory: 16Gi}]"),
            "cluster.pools[0].max: required (the most nodes the pool may have)");
  EXPECT_EQ(err("pools: [{memory: 16Gi, max: 2}]"),
            "cluster.pools[0].cpu: required (cores per node, e.g. 4 or 3500m)");
  EXPECT_EQ(err("pools: []"), "cluster.pools: expected a non-empty list");
  EXPECT_EQ(err("autoscaler: {enabled: true}"), "cluster.pools: expected a non-empty list");
  EXPECT_EQ(err("pools: [{cpu: 4, memory: 16Gi, max: 2}, 4]"),
            "cluster.pools[1]: expected a mapping");
  EXPECT_EQ(err("pools: {cpu: 4}"), "cluster.pools: expected a non-empty list");
  EXPECT_EQ(err("- pools"), "cluster: expected a mapping");
  EXPECT_EQ(err(""), "cluster: expected a mapping");
  // A key with no value is refused, not taken as absent.
  EXPECT_EQ(err("pools: [{cpu: 4, memory: 16Gi, max: }]"), "cluster.pools[0].max: has no value");
  EXPECT_EQ(err("pools: [{cpu: 4, memory: 16Gi, max: 2}]\napi:"), "cluster.api: has no value");
  EXPECT_EQ(err("pools: [{cpu: 4, memory: 16Gi, max: 2, min: -1}]"),
            "cluster.pools[0].min: must be between 0 and 100000, got -1");
  EXPECT_EQ(err("pools: [{cpu: 4, memory: 16Gi, max: 2}]\nautoscaler: {enabled: maybe}"),
            "cluster.autoscaler.enabled: expected true or false");
  EXPECT_EQ(err("pools: [{cpu: 4, memory: 16Gi, max: 2}]\nautoscaler: {scanInterval: 1ms}"),
            "cluster.autoscaler.scanInterval: must be at least 100ms");
  EXPECT_EQ(err("pools: [{cpu: 4, memory: 16Gi, max: 2}]\ncontrolPlane: {requeueTime: 2h}"),
            "cluster.controlPlane.requeueTime: must be at most 1h");
  EXPECT_EQ(err("pools: [{cpu: 4, memory: 16Gi, max: 2}]\ndefaultTask: {cpu: [1]}"),
            "cluster.defaultTask.cpu: expected a scalar");
  EXPECT_THAT(err("pools: [{cpu: 4, memory: 16Gi, max: 2}]\nautoscaler: {scanInterval: soon}"),
              HasSubstr("cluster.autoscaler.scanInterval"));
  EXPECT_THAT(err("pools: [{cpu: 4"), HasSubstr("invalid YAML"));
  EXPECT_EQ(err("pools: [{cpu: 500m, memory: 1Gi, max: 2}]\ndefaultTask: {cpu: 250m}"), "ok");
  EXPECT_FALSE(LoadCluster("/nonexistent/cluster.yaml").ok());
}

TEST(Config, PoolsCarryNodeLabelsAndTaints) {
  auto c = ParseCluster(R"(pools:
- name: gpu
  cpu: 8
  memory: 64Gi
  max: 4
  labels: {pool: gpu, accelerator: nvidia-t4}
  taints:
  - {key: nvidia.com/gpu, value: present, effect: NoSchedule}
- {name: cpu, cpu: 4, memory: 16Gi, max: 10}
)");
  ASSERT_TRUE(c.ok()) << c.error().message;
  engine::NodeSpec node = c->pools[0].Node("gpu-0");
  EXPECT_EQ(node.labels.at("accelerator"), "nvidia-t4");
  ASSERT_EQ(node.taints.size(), 1u);
  EXPECT_EQ(node.taints[0].effect, "NoSchedule");
  EXPECT_TRUE(c->pools[1].Node("cpu-0").taints.empty());

  auto err = [](const char* yaml) {
    auto bad = ParseCluster(yaml);
    return bad.ok() ? std::string("ok") : bad.error().message;
  };
  EXPECT_EQ(err("pools: [{cpu: 4, memory: 16Gi, max: 2, taints: [{key: a, effect: Never}]}]"),
            "cluster.pools[0].taints[0].effect: expected NoSchedule, PreferNoSchedule or "
            "NoExecute, got 'Never'");
  EXPECT_EQ(err("pools: [{cpu: 4, memory: 16Gi, max: 2, taints: [{key: a}]}]"),
            "cluster.pools[0].taints[0].effect: required (NoSchedule, PreferNoSchedule or "
            "NoExecute)");
  EXPECT_EQ(err("pools: [{cpu: 4, memory: 16Gi, max: 2, taints: {key: a}}]"),
            "cluster.pools[0].taints: expected a list");
  EXPECT_EQ(err("pools: [{cpu: 4, memory: 16Gi, max: 2, taints: [NoSchedule]}]"),
            "cluster.pools[0].taints[0]: expected a mapping");
  EXPECT_EQ(err("pools: [{cpu: 4, memory: 16Gi, max: 2, labels: [a]}]"),
            "cluster.pools[0].labels: expected a mapping of label to value");
}

TEST(Config, SharedServices) {
  auto c = LoadCluster(CapacityExamples() / "cluster_shared.yaml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->api.run_create, 200ms);
  EXPECT_EQ(c->api.task_update, 150ms);
  EXPECT_EQ(c->api.workers, 2);
  EXPECT_EQ(c->artifact_store.bandwidth, 200.0 * (1 << 20));
  EXPECT_FALSE(c->artifact_store.fifo);
  auto w = LoadWorkload(CapacityExamples() / "workload_shared.yaml");
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_EQ(w->steps.For("exec-train").artifact_bytes, int64_t{2} << 30);
  EXPECT_EQ(w->steps.For("exec-step").artifact_bytes, 0);
  auto err = [](const std::string& extra) {
    auto r = ParseCluster("pools: [{cpu: 4, memory: 16Gi, max: 2}]\n" + extra);
    return r.ok() ? std::string("ok") : r.error().message;
  };
  EXPECT_EQ(err("api: {taskUpdate: 20ms}"), "ok");
  EXPECT_EQ(err("api: {taskUpdate: 20ms, db: 1}"),
            "cluster.api.db: unknown field (known: runCreate, taskUpdate, workers)");
  EXPECT_THAT(err("api: {runCreate: fast}"), HasSubstr("cluster.api.runCreate"));
  EXPECT_EQ(err("api: {workers: 0}"), "cluster.api.workers: must be between 1 and 1000000, got 0");
  EXPECT_EQ(err("artifactStore: {sharing: fair}"),
            "cluster.artifactStore.bandwidth: required (bytes per second, e.g. 500Mi)");
  EXPECT_EQ(err("artifactStore: {bandwidth: 0}"),
            "cluster.artifactStore.bandwidth: must be positive");
  EXPECT_EQ(err("artifactStore: {bandwidth: 1Gi, sharing: random}"),
            "cluster.artifactStore.sharing: expected fair or fifo, got 'random'");
  EXPECT_THAT(ParseWorkload("pipeline: six_steps.yaml\nsteps: {default: {artifactBytes: lots}}",
                            CapacityExamples())
                  .error()
                  .message,
              HasSubstr("workload.steps.default.artifactBytes"));
}

TEST(Config, WorkloadErrorsNameTheField) {
  const auto base = CapacityExamples();
  auto err = [&](const std::string& yaml) {
    auto w = ParseWorkload(yaml, base);
    return w.ok() ? std::string("ok") : w.error().message;
  };
  EXPECT_EQ(err("pipeline: six_steps.yaml"), "ok");
  EXPECT_EQ(err("runs: 3"), "workload.pipeline: required (a compiled KFP pipeline file)");
  EXPECT_THAT(err("pipeline: missing.yaml"), HasSubstr("cannot read"));
  EXPECT_EQ(err("pipeline: six_steps.yaml\nrunz: 3"),
            "workload.runz: unknown field (known: pipeline, pipelines, parameters, runs, seed, "
            "arrivals, "
            "calibration, steps, branches)");
  EXPECT_EQ(err("pipeline: six_steps.yaml\nruns: 0"),
            "workload.runs: must be between 1 and 10000000, got 0");
  EXPECT_EQ(err("pipeline: six_steps.yaml\nruns: many"), "workload.runs: expected an integer");
  EXPECT_EQ(err("pipeline: six_steps.yaml\narrivals: {kind: burst}"),
            "workload.arrivals.kind: expected all-at-once, rate, closed or csv, got 'burst'");
  EXPECT_EQ(err("pipeline: six_steps.yaml\narrivals: {kind: rate}"),
            "workload.arrivals.ratePerSecond: required for kind rate");
  EXPECT_THAT(err("pipeline: six_steps.yaml\nsteps: {default: 'weibull:1s'}"),
              HasSubstr("workload.steps.default"));
  EXPECT_EQ(err("pipeline: six_steps.yaml\nsteps: {exec-x: {duration: 1s, jitter: 2}}"),
            "workload.steps.exec-x.jitter: unknown field (known: duration, overhead, "
            "artifactBytes)");
  EXPECT_EQ(err("pipeline: six_steps.yaml\nsteps: {exec-x: [1s]}"),
            "workload.steps.exec-x: expected a distribution or {duration, overhead, "
            "artifactBytes}");
  EXPECT_EQ(err("pipeline: six_steps.yaml\nsteps: {exec-x: {overhead: 100000h}}"),
            "workload.steps.exec-x.overhead: must be at most ten years");
  EXPECT_EQ(err("pipeline: six_steps.yaml\nseed: 1.5"), "workload.seed: expected an integer");
  EXPECT_EQ(err("pipeline: six_steps.yaml\nparameters: [1]"),
            "workload.parameters: expected a mapping");
  // A setting of another kind of arrivals would be ignored: refused.
  EXPECT_EQ(err("pipeline: six_steps.yaml\narrivals: {kind: closed, concurrency: 2, "
                "ratePerSecond: 3}"),
            "workload.arrivals.ratePerSecond: only kind rate reads it");
  EXPECT_EQ(err("pipeline: six_steps.yaml\narrivals: {concurrency: 2}"),
            "workload.arrivals.concurrency: only kind closed reads it");
  EXPECT_EQ(err("pipeline: six_steps.yaml\narrivals: {kind: closed}"),
            "workload.arrivals.concurrency: required for kind closed");
  EXPECT_EQ(err("pipeline: six_steps.yaml\narrivals: {kind: rate, ratePerSecond: .nan}"),
            "workload.arrivals.ratePerSecond: expected a finite number");
  EXPECT_THAT(err("pipeline: six_steps.yaml\narrivals: {kind: csv, file: none.csv}"),
              HasSubstr("workload.arrivals.file: "));
  EXPECT_THAT(err("pipeline: six_steps.yaml\ncalibration: none.json"),
              HasSubstr("workload.calibration: "));
  EXPECT_THAT(err("pipeline: cluster.yaml"), HasSubstr("workload.pipeline"));
}

TEST(Config, WorkloadBranches) {
  const auto base = testing::CapacityExamples();
  auto w = LoadWorkload(base / "workload_branching.yaml");
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_EQ(w->branches.at("condition-2"), 0.3);
  auto err = [&](const std::string& yaml) {
    auto r = ParseWorkload(yaml, base);
    return r.ok() ? std::string("ok") : r.error().message;
  };
  EXPECT_EQ(err("pipeline: branching.yaml\nbranches: {condition-2: 1}"), "ok");
  EXPECT_EQ(err("pipeline: branching.yaml\nbranches: {condition-9: 0.5}"),
            "workload.branches.condition-9: the pipeline has no task 'condition-9' with a "
            "condition (it has: condition-2)");
  EXPECT_EQ(err("pipeline: six_steps.yaml\nbranches: {train-a: 0.5}"),
            "workload.branches.train-a: the pipeline has no task 'train-a' with a condition "
            "(it has: none)");
  EXPECT_EQ(err("pipeline: branching.yaml\nbranches: {condition-2: 1.5}"),
            "workload.branches.condition-2: a probability must be between 0 and 1, got 1.5");
  EXPECT_EQ(err("pipeline: branching.yaml\nbranches: {condition-2: often}"),
            "workload.branches.condition-2: expected a number");
  EXPECT_EQ(err("pipeline: branching.yaml\nbranches: [condition-2]"),
            "workload.branches: expected a mapping of condition task to probability");
}

TEST(Config, ArrivalsCsv) {
  auto rows = ParseArrivalsCsv("offset,name,n\n0,a,1\n90s,b,2.5\n\n1.5,c,x\n");
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[1].offset, 90s);
  EXPECT_EQ((*rows)[2].offset, 1500ms);
  EXPECT_EQ((*rows)[1].parameters["n"], 2.5);
  EXPECT_EQ((*rows)[2].parameters["n"], "x");
  EXPECT_EQ((*rows)[0].parameters["name"], "a");
  EXPECT_FALSE(ParseArrivalsCsv("offset,a\n0\n").ok());
  EXPECT_FALSE(ParseArrivalsCsv("offset\nsoon\n").ok());
  EXPECT_FALSE(ParseArrivalsCsv("offset\n-5\n").ok());
  EXPECT_FALSE(ParseArrivalsCsv("").ok());
}

// Cells are trimmed of spaces (and a CR at the end), however many: a cell
// of a million spaces once cost half a trillion byte moves.
TEST(Config, ArrivalsCsvTrimsCellsHoweverWide) {
  const std::string spaces(4 << 20, ' ');
  auto rows = ParseArrivalsCsv("offset , name,\n" + spaces + "2s" + spaces + ",a" + spaces + "\r," +
                               spaces + "\n");
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].offset, 2s);
  EXPECT_EQ((*rows)[0].parameters["name"], "a");
  EXPECT_EQ((*rows)[0].parameters[""], "");
  // A cell is a number when all of it is one, and its text otherwise.
  auto kinds = ParseArrivalsCsv("offset,a,b,c,d\n0,-3,\t1e3,-x,2026-11-29\n");
  ASSERT_TRUE(kinds.ok()) << kinds.error().message;
  EXPECT_EQ((*kinds)[0].parameters["a"], -3);
  EXPECT_EQ((*kinds)[0].parameters["b"], 1000.0);
  EXPECT_EQ((*kinds)[0].parameters["c"], "-x");
  EXPECT_EQ((*kinds)[0].parameters["d"], "2026-11-29");
  EXPECT_EQ(ParseArrivalsCsv("offset,a\n1,2,\n").error().message,
            "arrivals CSV line 2: 3 cells, header has 2");
}

TEST(Config, Calibration) {
  auto cal = ParseCalibration(R"({"default": {"duration": "constant:1s", "overhead": "200ms"},
      "steps": {"exec-a": {"duration": "lognormal:2s:0.1"}}})");
  ASSERT_TRUE(cal.ok()) << cal.error().message;
  EXPECT_EQ(cal->steps.For("exec-a").overhead, 200ms);  // inherits the default's
  EXPECT_EQ(cal->steps.For("other").duration.a, 1s);
  EXPECT_EQ(cal->artifact_store.bandwidth, 0);  // none fitted
  EXPECT_EQ(ParseCalibration("{\"stepz\": {}}").error().message,
            "calibration.stepz: unknown field (known: source, scheduling_delay, note, fit, "
            "default, steps, artifactStore, api)");
  // What a calibration file says of its fit for people is not read: any
  // value, null included.
  EXPECT_TRUE(ParseCalibration(R"({"note": null, "fit": {"api": null}, "source": [1]})").ok());
  EXPECT_FALSE(ParseCalibration("{").ok());
}

TEST(Config, CalibratedArtifactStore) {
  auto cal = ParseCalibration(R"({"default": {"duration": "constant:1s"},
      "steps": {"exec-a": {"duration": "constant:2s", "artifactBytes": 1048576}},
      "artifactStore": {"bandwidth": 4194304, "sharing": "fair"}, "fit": {"levels": []},
      "api": {"runCreate": "50ms", "workers": 3}})");
  ASSERT_TRUE(cal.ok()) << cal.error().message;
  EXPECT_EQ(cal->artifact_store.bandwidth, 4194304.0);
  EXPECT_FALSE(cal->artifact_store.fifo);
  EXPECT_EQ(cal->steps.For("exec-a").artifact_bytes, 1048576);
  EXPECT_EQ(cal->api.workers, 3);
  EXPECT_EQ(cal->api.run_create, 50ms);
  auto bad = ParseCalibration(R"({"artifactStore": {"bandwidth": 0}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, ::testing::HasSubstr("calibration.artifactStore.bandwidth"));
  bad = ParseCalibration(R"({"api": {"runCreate": "50ms", "workers": 0}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, ::testing::HasSubstr("calibration.api.workers"));
  bad = ParseCalibration(R"({"artifactStore": {"bandwidth": "4Mi", "speed": 1}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, ::testing::HasSubstr("speed"));
}

// A capture's mix: `pipelines:` instead of `pipeline:`, each CSV row naming
// its entry.
TEST(Config, AMixOfPipelines) {
  const auto dir = std::filesystem::temp_directory_path() / ("kfpbench-mix-" + NewUuid());
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(
      WriteFileAtomically(dir / "arrivals.csv", "offset,pipeline\n0,six\n5,branch\n9,six\n").ok());
  ASSERT_TRUE(WriteFileAtomically(dir / "unknown.csv", "offset,pipeline\n0,seven\n").ok());
  const std::string pipelines = fmt::format(
      "pipelines:\n  six: {{pipeline: {}, share: 0.75}}\n  branch: {{pipeline: {}, share: 0.25}}\n",
      (CapacityExamples() / "six_steps.yaml").string(),
      (CapacityExamples() / "branching.yaml").string());
  auto w = ParseWorkload(pipelines + "arrivals: {kind: csv, file: arrivals.csv}\n", dir);
  ASSERT_TRUE(w.ok()) << w.error().message;
  ASSERT_EQ(w->mix.size(), 2u);
  ASSERT_EQ(w->csv.size(), 3u);
  // The mix keeps the order written, not the names' order.
  EXPECT_EQ(w->mix[0].name, "six");
  EXPECT_EQ(w->mix[0].share, 0.75);
  EXPECT_EQ(w->csv[1].pipeline, w->mix[1].pipeline);
  EXPECT_EQ(w->csv[0].pipeline, w->csv[2].pipeline);
  EXPECT_NE(w->csv[0].pipeline, w->csv[1].pipeline);
  EXPECT_FALSE(w->csv[0].parameters.contains("pipeline"));
  auto unknown = ParseWorkload(pipelines + "arrivals: {kind: csv, file: unknown.csv}\n", dir);
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.error().message,
              HasSubstr("row 1: pipeline 'seven' is not in workload.pipelines"));
  auto both = ParseWorkload(pipelines + "pipeline: x.yaml\n", dir);
  ASSERT_FALSE(both.ok());
  EXPECT_THAT(both.error().message, HasSubstr("a mix replaces pipeline"));
  std::filesystem::remove_all(dir);

  // Without rows naming theirs, runs take the shares in turn: 3 of 4 "six".
  MixPicker picker(w->mix);
  int six = 0;
  for (int i = 0; i < 8; ++i) six += picker.Next().name == "six";
  EXPECT_EQ(six, 6);
  // The simulator runs the mix all at once, each run on its own pipeline.
  ClusterSpec cluster = testing::FixedCluster(4, 4);
  WorkloadSpec at_once = *w;
  at_once.arrival_kind = WorkloadSpec::ArrivalKind::kAllAtOnce;
  at_once.runs = 8;
  auto r = Simulate(cluster, at_once);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->succeeded, 8);
}

TEST(Config, ArrivalsScaleKeepsTheirShape) {
  WorkloadSpec w;
  w.arrival_kind = WorkloadSpec::ArrivalKind::kCsv;
  for (int s : {0, 10, 20}) w.csv.push_back({std::chrono::seconds(s), {{"x", s}}, nullptr});
  WorkloadSpec tripled = w;
  ASSERT_TRUE(ScaleArrivals(tripled, 3).ok());
  ASSERT_EQ(tripled.csv.size(), 9u);
  // Each row's copies spread over the gap to the next; the last row's over
  // the mean gap (10 s), not all at once: a burst the recording never had.
  EXPECT_EQ(tripled.csv[1].offset, FromSeconds(10.0 / 3));
  EXPECT_EQ(tripled.csv[1].parameters["x"], 0);
  EXPECT_EQ(tripled.csv[3].offset, std::chrono::seconds(10));
  EXPECT_EQ(tripled.csv[6].offset, std::chrono::seconds(20));
  EXPECT_EQ(tripled.csv[8].offset, std::chrono::seconds(20) + FromSeconds(20.0 / 3));
  WorkloadSpec halved = w;
  ASSERT_TRUE(ScaleArrivals(halved, 0.5).ok());
  ASSERT_EQ(halved.csv.size(), 1u);
  EXPECT_EQ(halved.csv[0].offset, std::chrono::seconds(10));
  WorkloadSpec rate;
  rate.arrival_kind = WorkloadSpec::ArrivalKind::kRate;
  rate.rate_per_second = 2;
  rate.runs = 100;
  ASSERT_TRUE(ScaleArrivals(rate, 1.5).ok());
  EXPECT_EQ(rate.rate_per_second, 3);
  EXPECT_EQ(rate.runs, 150);
  EXPECT_FALSE(ScaleArrivals(rate, 0).ok());
}

TEST(Config, PoolsOfferResourcesBesideCpuAndMemory) {
  auto c = ParseCluster(R"(pools:
- name: gpu
  cpu: 32
  memory: 128Gi
  max: 4
  resources: {nvidia.com/gpu: 4, ephemeral-storage: 100Gi}
)");
  ASSERT_TRUE(c.ok()) << c.error().message;
  const engine::ResourceList node = c->pools[0].Node("gpu-0").allocatable;
  EXPECT_EQ(node[*engine::SlotOf("nvidia.com/gpu")], 4);
  EXPECT_EQ(node[engine::kEphemeralStorage], int64_t{100} << 30);
  EXPECT_EQ(node[engine::kCpu], 32000);
  // In the order written.
  ASSERT_EQ(c->pools[0].resources.size(), 2u);
  EXPECT_EQ(c->pools[0].resources[0].name, "nvidia.com/gpu");
  auto err = [](const char* yaml) {
    auto r = ParseCluster(yaml);
    return r.ok() ? std::string("ok") : r.error().message;
  };
  EXPECT_THAT(err("pools: [{cpu: 4, memory: 1Gi, max: 1, resources: {nvidia.com/gpu: two}}]"),
              ::testing::HasSubstr("cluster.pools[0].resources.nvidia.com/gpu"));
  EXPECT_THAT(err("pools: [{cpu: 4, memory: 1Gi, max: 1, resources: {nvidia.com/gpu: -1}}]"),
              ::testing::HasSubstr("cluster.pools[0].resources.nvidia.com/gpu"));
  EXPECT_EQ(err("pools: [{cpu: 4, memory: 1Gi, max: 1, resources: {cpu: 8}}]"),
            "cluster.pools[0].resources.cpu: give the pool's cpu beside it");
  EXPECT_EQ(err("pools: [{cpu: 4, memory: 1Gi, max: 1, resources: [4]}]"),
            "cluster.pools[0].resources: expected a mapping of resource name to amount");
}

}  // namespace
}  // namespace kfpbench::sim
