#include "sim/simulator.h"

#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/binding.h"
#include "sim/config.h"
#include "sim/test_support.h"

namespace kfpbench::sim {
namespace {

using namespace std::chrono_literals;
using namespace testing;  // the part's test helpers
using ::testing::HasSubstr;

double Secs(int64_t ms) { return ms / 1000.0; }

TEST(Simulator, OneRunTakesTheCriticalPath) {
  auto r = Simulate(FixedCluster(1, 4), SixStepWorkload(1, 10s, 60s));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->runs, 1);
  EXPECT_EQ(r->succeeded, 1);
  EXPECT_EQ(r->makespan, 90s);  // 10 + 60 + 10 + 10
  EXPECT_NEAR(Secs(r->run_ms.max()), 90, 0.01);
  EXPECT_EQ(r->pending_ms.count(), 6u);
  EXPECT_EQ(r->pending_ms.max(), 0);
  EXPECT_NEAR(r->node_hours, 90.0 / 3600, 1e-9);
  EXPECT_EQ(r->peak_nodes, 1);
}

// Issue 38 section 3: nodes requested but not joined by the last run's end
// (the makespan ended inside the provisioning delay) are not peak nodes.
TEST(Simulator, PeakNodesAreNodesThatJoinedAndRequestedOnesAreSeparate) {
  ClusterSpec c;
  c.pools.push_back({"pool", 4, 16LL << 30, 1, 50, 1, {}, {}, {}});
  c.autoscaler.provisioning_delay = 10min;
  // Two runs on one 4-CPU node take 150 s: the nodes asked for meanwhile
  // come up 10 minutes later, after everything ended.
  auto r = Simulate(c, SixStepWorkload(2, 10s, 60s));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->makespan, 150s);
  EXPECT_EQ(r->peak_nodes, 1);
  EXPECT_GT(r->peak_nodes_requested, 1);
  for (const auto& p : r->series.points()) EXPECT_LE(p.nodes, r->peak_nodes) << "at " << p.t;
  EXPECT_NEAR(r->node_hours, 150.0 / 3600, 1e-9);
  EXPECT_THAT(Summary(*r), HasSubstr("nodes       peak 1 ("));
  EXPECT_THAT(Summary(*r), HasSubstr("requested; the rest had not joined"));
  EXPECT_EQ(ToJson(*r)["peak_nodes"], 1);
  EXPECT_EQ(ToJson(*r)["peak_nodes_requested"], r->peak_nodes_requested);

  // Where every node asked for joined, the figures agree and the JSON has
  // no second one.
  auto fixed = Simulate(FixedCluster(1, 4), SixStepWorkload(2, 10s, 60s));
  ASSERT_TRUE(fixed.ok());
  EXPECT_EQ(fixed->peak_nodes_requested, fixed->peak_nodes);
  EXPECT_FALSE(ToJson(*fixed).contains("peak_nodes_requested"));
}

TEST(Simulator, RunsQueueForCpuFirstFitFifo) {
  // Two runs on 4 CPUs: run-1's second and third trainers wait for run-0's.
  auto r = Simulate(FixedCluster(1, 4), SixStepWorkload(2, 10s, 60s));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->succeeded, 2);
  EXPECT_EQ(r->makespan, 150s);
  EXPECT_NEAR(Secs(r->run_ms.min()), 90, 0.01);
  EXPECT_NEAR(Secs(r->run_ms.max()), 150, 1.2);  // histogram bucket precision
  EXPECT_NEAR(Secs(r->pending_ms.max()), 60, 0.5);
  EXPECT_EQ(r->peak_runs_alive, 2);
}

TEST(Simulator, RateArrivalsSpreadRuns) {
  WorkloadSpec w = SixStepWorkload(10, 10s, 60s);
  w.arrival_kind = WorkloadSpec::ArrivalKind::kRate;
  w.rate_per_second = 0.01;  // one run every 100 s: never overlapping
  auto r = Simulate(FixedCluster(1, 4), w);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->makespan, 900s + 90s);
  EXPECT_EQ(r->peak_runs_alive, 1);
  EXPECT_NEAR(Secs(r->run_ms.ValueAtPercentile(95)), 90, 0.8);
}

TEST(Simulator, AutoscalerAddsNodesAfterProvisioningDelayUpToMax) {
  ClusterSpec c;
  c.pools.push_back({"pool", 2, 16LL << 30, 0, 3, -1, {}, {}, {}});
  c.autoscaler.provisioning_delay = 60s;
  auto r = Simulate(c, SixStepWorkload(20, 10s, 60s));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->succeeded, 20);
  EXPECT_EQ(r->peak_nodes, 3);        // capped by max
  EXPECT_GE(r->makespan, 60s + 90s);  // nothing runs before the first node
  EXPECT_GE(Secs(r->pending_ms.min()), 0);
  EXPECT_GE(Secs(r->pending_ms.max()), 60);
  EXPECT_GT(r->cpu_utilisation, 0.5);
  EXPECT_LE(r->cpu_utilisation, 1.0);
}

TEST(Simulator, AutoscalerScalesDownIdleNodesBetweenRuns) {
  ClusterSpec c;
  c.pools.push_back({"pool", 4, 16LL << 30, 0, 5, -1, {}, {}, {}});
  c.autoscaler.provisioning_delay = 30s;
  c.autoscaler.scale_down_idle = 5min;
  WorkloadSpec w = SixStepWorkload(0, 10s, 60s);
  w.arrival_kind = WorkloadSpec::ArrivalKind::kCsv;
  w.csv = {{0s, {}}, {3h, {}}};
  auto r = Simulate(c, w);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->succeeded, 2);
  bool reached_zero = false;
  for (const auto& p : r->series.points()) {
    if (p.t > 3600 && p.t < 7200) reached_zero = reached_zero || p.nodes == 0;
  }
  EXPECT_TRUE(reached_zero);
  // Far less than a node kept for three hours.
  EXPECT_LT(r->node_hours, 0.5);
  EXPECT_GT(r->node_hours, 0.05);
}

// six_steps.yaml with its trainers pinned to the training pool, as
// kfp_kubernetes.add_node_selector and add_toleration write it.
std::shared_ptr<const ir::PipelineSpec> SixStepsPinnedToTrain() {
  std::ifstream in(CapacityExamples() / "six_steps.yaml");
  std::stringstream text;
  text << in.rdbuf() << R"(---
platforms:
  kubernetes:
    deploymentSpec:
      executors:
        exec-train:
          nodeSelector: {labels: {pool: train}}
          tolerations: [{key: dedicated, operator: Equal, value: train, effect: NoSchedule}]
)";
  auto spec = ir::ParsePipelineSpec(text.str());
  EXPECT_TRUE(spec.ok()) << spec.error().message;
  return std::make_shared<const ir::PipelineSpec>(std::move(*spec));
}

TEST(Simulator, PinnedStepsBringUpTheirOwnPoolAndOthersStayOffIt) {
  auto cluster = LoadCluster(CapacityExamples() / "cluster_pools.yaml");
  ASSERT_TRUE(cluster.ok()) << cluster.error().message;
  WorkloadSpec w = SixStepWorkload(10, 10s, 60s);
  w.pipeline = SixStepsPinnedToTrain();
  auto r = Simulate(*cluster, w);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->succeeded, 10) << r->first_error;
  EXPECT_GT(r->peak_nodes, 1);  // the training pool starts empty: it was scaled up

  // Unpinned steps never go to the tainted pool: with only that pool,
  // they can go nowhere.
  ClusterSpec train_only = *cluster;
  train_only.pools.erase(train_only.pools.begin());
  auto plain = Simulate(train_only, SixStepWorkload(10, 10s, 60s));
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->failed, 10);
  EXPECT_THAT(plain->first_error, HasSubstr("had untolerated taint")) << plain->first_error;

  // Without a training pool, the pinned trainers can go nowhere: the runs
  // fail with the scheduler's reason instead of waiting for ever.
  ClusterSpec general_only = *cluster;
  general_only.pools.pop_back();
  auto stuck = Simulate(general_only, w);
  ASSERT_TRUE(stuck.ok());
  EXPECT_EQ(stuck->failed, 10);
  EXPECT_THAT(stuck->first_error, HasSubstr("didn't match Pod's node affinity/selector"))
      << stuck->first_error;
}

TEST(Simulator, SameSeedSameResult) {
  WorkloadSpec w = SixStepWorkload(50, 10s, 60s);
  w.steps.by_label["exec-train"].duration = *exec::ParseDurationDist("lognormal:60s:0.5");
  ClusterSpec c;
  c.pools.push_back({"pool", 4, 16LL << 30, 1, 4, -1, {}, {}, {}});
  auto a = Simulate(c, w);
  auto b = Simulate(c, w);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->makespan, b->makespan);
  EXPECT_EQ(a->run_ms.ValueAtPercentile(50), b->run_ms.ValueAtPercentile(50));
  EXPECT_EQ(ToJson(*a).dump(), ToJson(*b).dump());
}

TEST(Simulator, TaskLargerThanEveryPoolFailsItsRun) {
  auto r = Simulate(FixedCluster(2, 0.5), SixStepWorkload(3, 10s, 60s));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->failed, 3);
  EXPECT_THAT(r->first_error, HasSubstr("more than any node offers")) << r->first_error;
}

TEST(Simulator, RejectsImpossibleClustersAndWorkloads) {
  WorkloadSpec w = SixStepWorkload(1, 1s, 1s);
  EXPECT_FALSE(Simulate(ClusterSpec{}, w).ok());
  ClusterSpec c = FixedCluster(1, 4);
  c.pools[0].max = 0;
  c.pools[0].min = 0;
  c.pools[0].initial = 0;
  EXPECT_THAT(Simulate(c, w).error().message, HasSubstr("never have a node"));
  c = FixedCluster(1, 4);
  c.pools[0].min = 3;
  c.pools[0].max = 2;
  EXPECT_FALSE(Simulate(c, w).ok());
  c = FixedCluster(1, 0);
  EXPECT_FALSE(Simulate(c, w).ok());
  c = FixedCluster(0, 4);
  c.pools[0].max = 2;
  EXPECT_THAT(Simulate(c, w).error().message, HasSubstr("autoscaler is off"));
  w.runs = 0;
  EXPECT_FALSE(Simulate(FixedCluster(1, 4), w).ok());
  w = SixStepWorkload(1, 1s, 1s);
  w.pipeline = nullptr;
  EXPECT_FALSE(Simulate(FixedCluster(1, 4), w).ok());
  w = SixStepWorkload(1, 1s, 1s);
  w.parameters = {{"nope", 1}};
  EXPECT_THAT(Simulate(FixedCluster(1, 4), w).error().message, HasSubstr("unknown parameter"));
}

TEST(Simulator, JsonAndSummaryCarryTheResults) {
  auto r = Simulate(FixedCluster(1, 4), SixStepWorkload(2, 10s, 60s));
  ASSERT_TRUE(r.ok());
  nlohmann::json j = ToJson(*r);
  EXPECT_EQ(j["runs"]["succeeded"], 2);
  EXPECT_DOUBLE_EQ(j["makespan_seconds"].get<double>(), 150.0);
  EXPECT_TRUE(j["series"]["nodes"].is_array());
  EXPECT_THAT(Summary(*r), HasSubstr("makespan    2m30s")) << Summary(*r);
}

TEST(Simulator, SummaryShowsEveryFigureThroughTheOneFormatter) {
  ServiceStats store;
  store.modelled = true;
  store.served = 1;
  store.bandwidth = 200.0 * (1 << 20);
  store.bytes = 1000.0 * (int64_t{1} << 30);
  store.demand_seconds = store.bytes / store.bandwidth;
  EXPECT_EQ(DescribeDemand(store), "1 upload, 1000Gi at 200Mi/s = 1h25m20s of transfer");
  ServiceStats api;
  api.modelled = true;
  api.served = 1;
  api.workers = 1;
  api.demand_seconds = 2.35;
  EXPECT_EQ(DescribeDemand(api), "1 call over 1 worker = 2.35s of service");
  // One run of 2.35 s steps: its figures are not rounded to "3s" nor "2.4s".
  auto r = Simulate(FixedCluster(1, 4), SixStepWorkload(1, 2350ms, 2350ms));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_THAT(Summary(*r), ::testing::HasSubstr("makespan    9.4s"));
  EXPECT_THAT(Summary(*r), ::testing::HasSubstr("run time    p50 9."));
}

TEST(Simulator, ExampleWorkloadEndToEnd) {
  auto c = LoadCluster(testing::CapacityExamples() / "cluster.yaml");
  auto w = LoadWorkload(testing::CapacityExamples() / "workload.yaml");
  ASSERT_TRUE(c.ok() && w.ok());
  auto r = Simulate(*c, *w);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->succeeded, 500);
  EXPECT_GT(r->peak_nodes, 2);
  EXPECT_LE(r->peak_nodes, 50);
  auto path = std::filesystem::temp_directory_path() / "kfpbench_sim_test" / "out.json";
  ASSERT_TRUE(WriteResultJson(*r, path).ok());
  std::ifstream in(path);
  auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["runs"]["succeeded"], 500);
  std::filesystem::remove_all(path.parent_path());
  EXPECT_FALSE(WriteResultJson(*r, "/proc/nope/out.json").ok());
}

TEST(Series, CoarsensToStayBounded) {
  Series s(1, 8);
  for (int i = 0; i < 100; ++i) s.Add({static_cast<double>(i), 1.0 * i, 0, 0, 0, 0});
  EXPECT_LE(s.points().size(), 8u);
  EXPECT_GE(s.interval(), 16);
  EXPECT_NEAR(s.points().front().nodes, (s.interval() - 1) / 2, 1e-9);
}

}  // namespace
}  // namespace kfpbench::sim

namespace kfpbench::sim {
namespace {

using namespace std::chrono_literals;

WorkloadSpec Branching(int64_t runs, double p, uint64_t seed) {
  auto w = LoadWorkload(testing::CapacityExamples() / "workload_branching.yaml");
  EXPECT_TRUE(w.ok()) << w.error().message;
  w->runs = runs;
  w->seed = seed;
  w->branches["condition-2"] = p;
  w->steps.fallback.duration = exec::DurationDist::Constant(10s);
  w->steps.by_label.clear();
  return *w;
}

TEST(SimulatorBranches, TakenFractionMatchesTheProbability) {
  const int64_t runs = 4000;
  auto r = Simulate(testing::FixedCluster(20, 8), Branching(runs, 0.3, 11));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->succeeded, runs);
  EXPECT_EQ(r->tasks_by_label["exec-check"], runs);
  EXPECT_EQ(r->tasks_by_label["exec-publish"], runs);  // after the branch, taken or not
  double taken = static_cast<double>(r->tasks_by_label["exec-retrain"]) / runs;
  // 3.5 standard deviations of a binomial fraction: sqrt(0.3 * 0.7 / 4000) = 0.0072.
  EXPECT_NEAR(taken, 0.3, 0.026);
}

TEST(SimulatorBranches, SeededAndReproducible) {
  auto a = Simulate(testing::FixedCluster(4, 8), Branching(500, 0.5, 3));
  auto b = Simulate(testing::FixedCluster(4, 8), Branching(500, 0.5, 3));
  auto c = Simulate(testing::FixedCluster(4, 8), Branching(500, 0.5, 4));
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(a->tasks_by_label, b->tasks_by_label);
  EXPECT_EQ(a->makespan, b->makespan);
  // Another seed draws other branches (equal counts by chance: ~3.6% at n=500).
  EXPECT_NE(a->tasks_by_label["exec-retrain"], c->tasks_by_label["exec-retrain"]);
}

TEST(SimulatorBranches, ZeroAndOneAreExactAndUnlistedConditionsAreEvaluated) {
  auto never = Simulate(testing::FixedCluster(4, 8), Branching(200, 0, 1));
  auto always = Simulate(testing::FixedCluster(4, 8), Branching(200, 1, 1));
  ASSERT_TRUE(never.ok() && always.ok());
  EXPECT_EQ(never->tasks_by_label.count("exec-retrain"), 0u);
  EXPECT_EQ(always->tasks_by_label["exec-retrain"], 200);
  // Not listed: the condition sees the simulated output ("stub"), not "retrain".
  WorkloadSpec w = Branching(50, 1, 1);
  w.branches.clear();
  auto evaluated = Simulate(testing::FixedCluster(4, 8), w);
  ASSERT_TRUE(evaluated.ok());
  EXPECT_EQ(evaluated->tasks_by_label.count("exec-retrain"), 0u);
  EXPECT_EQ(evaluated->succeeded, 50);
}

}  // namespace
}  // namespace kfpbench::sim

namespace kfpbench::sim {
namespace {

using namespace std::chrono_literals;

// 200 six-step runs at once; every step 10 s. A run's tasks need 12 API
// calls (two status updates each); at 1 s per call the API server completes
// at most one run per 12 s however many nodes there are.
TEST(SimulatorBottlenecks, ApiServiceTimeCapsThroughput) {
  const int64_t runs = 200;
  auto makespan = [&](int nodes, Duration task_update) {
    ClusterSpec c = testing::FixedCluster(nodes, 4);
    c.api.task_update = task_update;
    auto r = Simulate(c, testing::SixStepWorkload(runs, 10s, 10s));
    EXPECT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->succeeded, runs);
    return r.ok() ? ToSeconds(r->makespan) : 0.0;
  };
  // Without the bottleneck, twice the nodes nearly halve the makespan.
  double free25 = makespan(25, 0s), free50 = makespan(50, 0s);
  EXPECT_LT(free50 / free25, 0.6);
  // With it, makespan is pinned at the saturated throughput 1 / (12 x 1 s).
  double api25 = makespan(25, 1s), api50 = makespan(50, 1s);
  EXPECT_GE(api25, runs * 12.0);
  EXPECT_NEAR(api50, runs * 12.0, 0.03 * runs * 12.0);
  EXPECT_GT(api50 / api25, 0.97);
  auto r = Simulate(
      [] {
        ClusterSpec c = testing::FixedCluster(50, 4);
        c.api.task_update = 1s;
        return c;
      }(),
      testing::SixStepWorkload(runs, 10s, 10s));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->api.modelled);
  EXPECT_EQ(r->api.served, static_cast<uint64_t>(runs * 12));
  EXPECT_GT(r->api.utilisation, 0.97);
}

TEST(SimulatorBottlenecks, RunCreationQueuesBeforeTheRunStarts) {
  ClusterSpec c = testing::FixedCluster(10, 4);
  c.api.run_create = 2s;
  auto r = Simulate(c, testing::SixStepWorkload(5, 10s, 10s));
  ASSERT_TRUE(r.ok()) << r.error().message;
  // The fifth CreateRun is served at 10 s; its run then takes 40 s.
  EXPECT_NEAR(ToSeconds(r->makespan), 50, 1e-6);
  EXPECT_NEAR(r->run_ms.min() / 1000.0, 42, 0.5);
  EXPECT_EQ(r->api.served, 5u);
}

// 20 runs at once; each trainer uploads 1 GiB at the end to a store with
// 1 GiB/s. The 60 uploads start together at 20 s and need 60 s of the link.
TEST(SimulatorBottlenecks, ArtifactStoreBandwidthIsShared) {
  auto run = [](bool fifo) {
    ClusterSpec c = testing::FixedCluster(20, 4);
    c.artifact_store.bandwidth = static_cast<double>(int64_t{1} << 30);
    c.artifact_store.fifo = fifo;
    WorkloadSpec w = testing::SixStepWorkload(20, 10s, 10s);
    w.steps.by_label["exec-train"].artifact_bytes = int64_t{1} << 30;
    auto r = Simulate(c, w);
    EXPECT_TRUE(r.ok()) << r.error().message;
    return *r;
  };
  SimResult fair = run(false), fifo = run(true);
  // Fair sharing: every upload ends at 80 s, every run at 100 s (40 s alone).
  EXPECT_NEAR(ToSeconds(fair.makespan), 100, 1e-3);
  EXPECT_NEAR(fair.run_ms.min() / 1000.0, 100, 1);
  EXPECT_EQ(fair.artifact_store.served, 60u);
  EXPECT_NEAR(fair.artifact_store.utilisation, 0.6, 0.01);  // 60 s busy of 100
  // One at a time: the last upload still ends at 80 s, but earlier runs go on sooner.
  EXPECT_NEAR(ToSeconds(fifo.makespan), 100, 1e-3);
  EXPECT_LT(fifo.run_ms.ValueAtPercentile(50) / 1000.0, 80);
}

// Demand and offered load, and the bottleneck named: 30 runs at one a
// second, each trainer uploading 1Gi to a 1Gi/s store: 90 s of transfer
// offered over 29 s of arrivals (310%), and the store, busy all along,
// bounds the makespan.
TEST(SimulatorBottlenecks, NamesTheServiceWithItsDemandAndOfferedLoad) {
  ClusterSpec c = testing::FixedCluster(100, 4);
  c.artifact_store.bandwidth = static_cast<double>(int64_t{1} << 30);
  WorkloadSpec w = testing::SixStepWorkload(30, 10s, 10s);
  w.arrival_kind = WorkloadSpec::ArrivalKind::kRate;
  w.rate_per_second = 1;
  w.steps.by_label["exec-train"].artifact_bytes = int64_t{1} << 30;
  auto r = Simulate(c, w);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_NEAR(ToSeconds(r->arrival_window), 29, 1e-9);
  EXPECT_NEAR(r->artifact_store.demand_seconds, 90, 1e-6);
  EXPECT_NEAR(r->artifact_store.bytes, 90.0 * (int64_t{1} << 30), 1e3);
  EXPECT_NEAR(r->artifact_store.offered_load, 90.0 / 29, 1e-6);
  std::string b = Bottleneck(*r);
  EXPECT_THAT(b, ::testing::HasSubstr("the artifact store: 90 uploads, 90Gi at 1Gi/s = 1m30s"));
  EXPECT_THAT(b, ::testing::HasSubstr("offered 310%"));
  EXPECT_THAT(b, ::testing::HasSubstr("more nodes cannot help"));
  EXPECT_THAT(Summary(*r), ::testing::HasSubstr("bottleneck  the artifact store"));
  EXPECT_EQ(ToJson(*r)["bottleneck"], b);

  // A store that keeps up is not named.
  c.artifact_store.bandwidth *= 100;
  auto fast = Simulate(c, w);
  ASSERT_TRUE(fast.ok());
  EXPECT_EQ(Bottleneck(*fast), "");
  // Nor is anything when no service is modelled.
  c.artifact_store.bandwidth = 0;
  auto none = Simulate(c, w);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(Bottleneck(*none), "");
  EXPECT_EQ(none->artifact_store.demand_seconds, 0);
}

// A calibration's store stands in when the cluster file declares none, and
// the cluster's wins when it does.
TEST(SimulatorBottlenecks, ACalibratedStoreAppliesWhenTheClusterHasNone) {
  WorkloadSpec w = testing::SixStepWorkload(1, 10s, 10s);
  w.steps.by_label["exec-train"].artifact_bytes = int64_t{1} << 30;
  w.calibrated_artifact_store.bandwidth = static_cast<double>(int64_t{1} << 30);
  ClusterSpec c = testing::FixedCluster(1, 4);
  auto calibrated = Simulate(c, w);
  ASSERT_TRUE(calibrated.ok());
  EXPECT_NEAR(ToSeconds(calibrated->makespan), 43, 1e-3);  // three 1Gi uploads at 1Gi/s
  c.artifact_store.bandwidth = 3.0 * (int64_t{1} << 30);
  auto declared = Simulate(c, w);
  ASSERT_TRUE(declared.ok());
  EXPECT_NEAR(ToSeconds(declared->makespan), 41, 1e-3);
}

// Eight one-GPU steps of 10 s (KFP's compiler, set_accelerator_type and
// _limit) on 4-GPU nodes with CPU and memory to spare: GPUs bind.
WorkloadSpec EightGpuShards() {
  std::ifstream in(CapacityExamples() / "eight_gpu_shards.yaml");
  std::stringstream s;
  s << in.rdbuf();
  auto spec = ir::ParsePipelineSpec(s.str());
  EXPECT_TRUE(spec.ok()) << spec.error().message;
  WorkloadSpec w;
  w.pipeline = std::make_shared<const ir::PipelineSpec>(std::move(*spec));
  w.steps.fallback.duration = exec::DurationDist::Constant(10s);
  return w;
}

ClusterSpec GpuNodes(int nodes, int64_t gpus) {
  ClusterSpec c = FixedCluster(nodes, 16, int64_t{64} << 30);
  c.pools[0].resources = {{"nvidia.com/gpu", gpus}};
  return c;
}

TEST(SimulatorGpus, EightOneGpuStepsOnOneFourGpuNodeTakeTwoRounds) {
  auto r = Simulate(GpuNodes(1, 4), EightGpuShards());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->succeeded, 1);
  EXPECT_EQ(r->tasks_by_label.size(), 8u);
  EXPECT_EQ(r->makespan, 20s);  // 4 at a time, though 16 CPUs would take all 8
  EXPECT_NEAR(Secs(r->pending_ms.max()), 10, 0.1);
  ASSERT_EQ(r->resources.size(), 1u);
  EXPECT_EQ(r->resources[0].name, "nvidia.com/gpu");
  EXPECT_DOUBLE_EQ(r->resources[0].utilisation, 1.0);  // 80 GPU-seconds of 4 x 20
  const Binding b = WhatBinds(*r);
  EXPECT_EQ(b.what, Binds::kResource);
  EXPECT_EQ(b.resource, "nvidia.com/gpu");
  EXPECT_THAT(b.text, HasSubstr("nodes' nvidia.com/gpu"));
  EXPECT_EQ(ToJson(*r)["binds"]["resource"], "nvidia.com/gpu");
  EXPECT_EQ(ToJson(*r)["resource_utilisation"]["nvidia.com/gpu"], 1.0);
}

TEST(SimulatorGpus, TwoNodesOrEightGpusRunThemAllAtOnce) {
  auto two = Simulate(GpuNodes(2, 4), EightGpuShards());
  ASSERT_TRUE(two.ok()) << two.error().message;
  EXPECT_EQ(two->makespan, 10s);
  auto eight = Simulate(GpuNodes(1, 8), EightGpuShards());
  ASSERT_TRUE(eight.ok()) << eight.error().message;
  EXPECT_EQ(eight->makespan, 10s);
}

TEST(SimulatorGpus, TheAutoscalerAddsGpuNodesForWaitingGpuSteps) {
  ClusterSpec c = GpuNodes(0, 4);
  c.pools[0].max = 5;
  c.pools[0].initial = 0;
  c.autoscaler.enabled = true;
  c.autoscaler.provisioning_delay = 60s;
  auto r = Simulate(c, EightGpuShards());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->peak_nodes, 2);  // 8 GPUs asked, 4 a node: two, not five
  EXPECT_EQ(r->succeeded, 1);
}

TEST(SimulatorGpus, NodesWithoutGpusFailTheRunSayingSo) {
  auto r = Simulate(FixedCluster(1, 16, int64_t{64} << 30), EightGpuShards());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->failed, 1);
  EXPECT_THAT(r->first_error, HasSubstr("1 nvidia.com/gpu, more than any node offers"));
}

TEST(SimulatorGpus, CpuOnlyOutputHasNoResourceKeys) {
  auto r = Simulate(FixedCluster(1, 4), SixStepWorkload(1, 10s, 60s));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->resources.empty());
  const auto j = ToJson(*r);
  EXPECT_FALSE(j.contains("resource_utilisation"));
  EXPECT_FALSE(j["binds"].contains("resource"));
}

TEST(SimulatorGpus, APoolWithANegativeResourceIsRefused) {
  ClusterSpec c = GpuNodes(1, -1);
  auto r = Simulate(c, EightGpuShards());
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("nvidia.com/gpu must not be negative"));
}

}  // namespace
}  // namespace kfpbench::sim
