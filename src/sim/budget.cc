#include "sim/budget.h"

#include <unistd.h>

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "ir/quantity.h"
#include "util/human.h"

namespace kfpbench::sim {
namespace {

// What a run in flight holds in the engine and the collector: measured at
// 2.6 KiB for the six-step example (400,000 runs at once, 1.05 GB peak RSS
// against 268 MB for 100,000; docs/RELIABILITY.md), estimated here at 3.5 KiB
// so that the estimate errs on the safe side.
constexpr uint64_t kBytesPerRun = 2048;
constexpr uint64_t kBytesPerTask = 256;
// Loop events per task (placement, start, end, timers), per run (arrival,
// end), rounded up from the benchmarks' counts.
constexpr uint64_t kEventsPerTask = 4;
constexpr uint64_t kEventsPerRun = 4;

uint64_t SaturatingMul(uint64_t a, uint64_t b) {
  return a != 0 && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}
uint64_t SaturatingAdd(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

// Tasks a run of `component` makes: each task, plus what its DAG makes.
// Memoised: a DAG used many times is counted once.
uint64_t TasksOf(const ir::PipelineSpec& spec, const ir::ComponentSpec& component,
                 std::map<const ir::ComponentSpec*, uint64_t>& memo) {
  if (!component.is_dag()) return 0;
  if (auto it = memo.find(&component); it != memo.end()) return it->second;
  memo[&component] = 0;  // a cycle (which the parser refuses) counts nothing
  uint64_t tasks = 0;
  for (const auto& [name, task] : component.dag->tasks) {
    tasks = SaturatingAdd(tasks, 1);
    if (const ir::ComponentSpec* inner = spec.FindComponent(task.component_ref)) {
      tasks = SaturatingAdd(tasks, TasksOf(spec, *inner, memo));
    }
  }
  memo[&component] = tasks;
  return tasks;
}

std::string BytesText(uint64_t bytes) { return FormatBytes(static_cast<double>(bytes)); }

}  // namespace

SimEstimate EstimateSimulation(const ClusterSpec& cluster, const WorkloadSpec& workload,
                               Duration sample_interval) {
  SimEstimate e;
  using Kind = WorkloadSpec::ArrivalKind;
  e.runs = workload.arrival_kind == Kind::kCsv ? static_cast<int64_t>(workload.csv.size())
                                               : workload.runs;
  if (workload.arrival_kind == Kind::kAllAtOnce) e.runs_at_once = e.runs;
  if (workload.arrival_kind == Kind::kClosed) {
    e.runs_at_once = std::min(e.runs, workload.concurrency);
  }
  std::map<const ir::ComponentSpec*, uint64_t> memo;
  uint64_t tasks =
      workload.pipeline != nullptr ? TasksOf(*workload.pipeline, workload.pipeline->root, memo) : 0;
  for (const auto& entry : workload.mix) {
    tasks = std::max(tasks, TasksOf(*entry.pipeline, entry.pipeline->root, memo));
  }
  e.tasks_per_run = static_cast<int64_t>(std::min<uint64_t>(tasks, INT64_MAX));
  e.run_bytes = SaturatingAdd(kBytesPerRun, SaturatingMul(kBytesPerTask, tasks));
  const uint64_t runs = static_cast<uint64_t>(std::max<int64_t>(e.runs, 0));
  e.events =
      SaturatingMul(runs, SaturatingAdd(kEventsPerRun, SaturatingMul(kEventsPerTask, tasks)));
  // The cluster's tick (samples, autoscaler scans) goes on while arrivals
  // are still due: the arrival window in ticks, at least.
  if (workload.arrival_kind == Kind::kRate && workload.rate_per_second > 0) {
    e.arrival_window_seconds = static_cast<double>(e.runs) / workload.rate_per_second;
  } else if (workload.arrival_kind == Kind::kCsv) {
    for (const auto& a : workload.csv) {
      e.arrival_window_seconds = std::max(e.arrival_window_seconds, ToSeconds(a.offset));
    }
  }
  const double tick =
      ToSeconds(cluster.autoscaler.enabled ? cluster.autoscaler.scan_interval : sample_interval);
  if (tick > 0 && e.arrival_window_seconds > 0) {
    const double ticks = e.arrival_window_seconds / tick;
    e.events = SaturatingAdd(e.events, ticks >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(ticks));
  }
  return e;
}

uint64_t DefaultMemoryBudget() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return uint64_t{4} << 30;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) / 2;
}

int64_t MaxRunsInFlight(const SimEstimate& estimate, uint64_t memory_budget) {
  if (estimate.run_bytes == 0) return INT64_MAX;
  return static_cast<int64_t>(std::min<uint64_t>(memory_budget / estimate.run_bytes, INT64_MAX));
}

Status CheckSimulationFits(const SimEstimate& e, uint64_t memory_budget) {
  if (e.runs > kMaxRuns) {
    return Error{
        fmt::format("{} runs is more than one simulation takes ({} at most)", e.runs, kMaxRuns),
        kHttpBadRequest};
  }
  if (!(e.arrival_window_seconds <= kMaxArrivalWindowSeconds)) {
    return Error{
        fmt::format(
            "the arrivals would spread over {:.3g} years, more than the 10 a simulation takes",
            e.arrival_window_seconds / (365.25 * 86400)),
        kHttpBadRequest};
  }
  if (e.events > kMaxEvents) {
    return Error{
        fmt::format(
            "this simulation needs about {} events ({} runs of {} tasks, and the cluster's ticks "
            "over the arrivals), more than the {} one takes (about half an hour at 10^6 a second)",
            e.events, e.runs, e.tasks_per_run, kMaxEvents),
        kHttpBadRequest};
  }
  if (const int64_t fit = MaxRunsInFlight(e, memory_budget); e.runs_at_once > fit) {
    return Error{
        fmt::format(
            "{} runs in flight at once need about {} ({} each for {} tasks), more than the {} a "
            "simulation may hold here (at most {} runs at once)",
            e.runs_at_once,
            BytesText(SaturatingMul(e.run_bytes, static_cast<uint64_t>(e.runs_at_once))),
            BytesText(e.run_bytes), e.tasks_per_run, BytesText(memory_budget), fit),
        kHttpBadRequest};
  }
  return Ok();
}

}  // namespace kfpbench::sim
