// What simulating a big cluster costs. Targets: 100,000 runs of a six-step
// pipeline on up to 1,000 autoscaled nodes in under 5 s (issue 6), at least
// 1M loop events per second (issue 15). Counters: events/s, runs, peak nodes;
// the label gives the makespan to the nanosecond and the event count.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "exec/duration_dist.h"
#include "ir/pipeline_spec.h"
#include "sim/simulator.h"
#include "sim/virtual_loop.h"

namespace kfpbench::sim {
namespace {

using namespace std::chrono_literals;

std::shared_ptr<const ir::PipelineSpec> SixSteps() {
  std::ifstream in(std::string(KFPBENCH_SOURCE_DIR) + "/examples/capacity/six_steps.yaml");
  std::stringstream s;
  s << in.rdbuf();
  auto spec = ir::ParsePipelineSpec(s.str());
  if (!spec.ok()) return nullptr;
  return std::make_shared<const ir::PipelineSpec>(std::move(*spec));
}

void BM_VirtualLoopEvents(benchmark::State& state) {
  uint64_t events = 0;
  for (auto _ : state) {
    VirtualLoop loop;
    int64_t n = 0;
    // A steady population of 10,000 timers, each rescheduling itself.
    std::function<void()> tick = [&] {
      if (++n < 1'000'000) loop.After(std::chrono::milliseconds(n % 997), tick);
    };
    for (int i = 0; i < 10'000; ++i) loop.After(std::chrono::milliseconds(i), tick);
    loop.RunUntilIdle();
    events += loop.events_run();
  }
  // Over every iteration: a rate counter divides by the total time.
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_VirtualLoopEvents)->Unit(benchmark::kMillisecond);

// 4-CPU, 16Gi nodes autoscaled from 0 to 1,000 (90 s to provision); runs of
// six steps arrive 3.5 a second, steps ~1 min, trainers ~5 min (`trainer`).
ClusterSpec Cluster() {
  ClusterSpec cluster;
  cluster.pools.push_back({"workers", 4, int64_t{16} << 30, 0, 1000, -1, {}, {}, {}});
  cluster.autoscaler.provisioning_delay = 90s;
  return cluster;
}

WorkloadSpec Workload(int64_t runs, StepModel trainer) {
  WorkloadSpec w;
  w.pipeline = SixSteps();
  w.runs = runs;
  w.arrival_kind = WorkloadSpec::ArrivalKind::kRate;
  w.rate_per_second = 3.5;
  w.steps.fallback.duration = *exec::ParseDurationDist("lognormal:60s:0.3");
  w.steps.fallback.overhead = 2s;
  w.steps.by_label["exec-train"] = std::move(trainer);
  return w;
}

// Simulates once per iteration; the common counters, then `more` adds its own.
template <typename More>
void SimulateEach(benchmark::State& state, const ClusterSpec& cluster, const WorkloadSpec& w,
                  More more) {
  for (auto _ : state) {
    auto r = Simulate(cluster, w);
    if (!r.ok()) {
      state.SkipWithError(r.error().message.c_str());
      return;
    }
    state.counters["events/s"] =
        benchmark::Counter(static_cast<double>(r->events), benchmark::Counter::kIsRate);
    state.counters["runs"] = static_cast<double>(r->succeeded);
    state.counters["makespan_h"] = ToSeconds(r->makespan) / 3600;
    // To the nanosecond, with the event count: a change for speed must leave
    // both exactly as they were.
    state.SetLabel(fmt::format("makespan {} ns, {} events", r->makespan.count(), r->events));
    more(*r);
  }
}

// The autoscaler reaches its 1,000-node cap and tasks queue.
void BM_Simulate(benchmark::State& state) {
  auto w = Workload(state.range(0), {*exec::ParseDurationDist("lognormal:5m:0.4"), 2s});
  SimulateEach(state, Cluster(), w, [&](const SimResult& r) {
    state.counters["peak_nodes"] = r.peak_nodes;
    state.counters["peak_runs_alive"] = static_cast<double>(r.peak_runs_alive);
  });
}
BENCHMARK(BM_Simulate)->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMillisecond)->Iterations(1);

// The same with the shared services modelled: every task makes two API calls
// (10 ms each, 4 workers) and each trainer uploads 1Gi to a 10Gi/s store
// shared by processor sharing: three more queue events per task.
void BM_SimulateShared(benchmark::State& state) {
  ClusterSpec cluster = Cluster();
  cluster.api.task_update = 10ms;
  cluster.api.workers = 4;
  cluster.artifact_store.bandwidth = 10.0 * (int64_t{1} << 30);
  auto w = Workload(state.range(0),
                    {*exec::ParseDurationDist("lognormal:5m:0.4"), 2s, int64_t{1} << 30});
  SimulateEach(state, cluster, w, [&](const SimResult& r) {
    state.counters["store_busy"] = r.artifact_store.utilisation;
  });
}
BENCHMARK(BM_SimulateShared)->Arg(100'000)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace kfpbench::sim

BENCHMARK_MAIN();
