// What one simulation may ask of this machine, checked before it starts and
// while it runs, so that no input (a cluster of 10^8 nodes, a workload of
// 10^9 runs, a scan every nanosecond) can hang it or exhaust memory: it is
// refused with the numbers instead (docs/RELIABILITY.md, "Limits of the
// simulator").
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>

#include "sim/model.h"
#include "util/result.h"

namespace kfpbench::sim {

// What a cluster or workload cannot be: the input's fault (400), so that
// `plan` and `simulate` exit as for any bad input.
inline Error Refused(std::string message) { return Error{std::move(message), kHttpBadRequest}; }

// Nodes across every pool's max: far above Kubernetes' 5,000 (or a managed
// service's 15,000) nodes a cluster.
inline constexpr int64_t kMaxNodes = 100'000;
// Runs of one workload (its count, a closed loop's concurrency, CSV rows).
inline constexpr int64_t kMaxRuns = 10'000'000;
// The autoscaler's scan: cluster-autoscaler's own default is 10 s.
inline constexpr Duration kMinScanInterval = std::chrono::milliseconds(100);
// Arrival rates whose gaps are whole nanoseconds and whose window stays
// within what the virtual clock holds: one run in 11.6 days to 10^6 a second.
inline constexpr double kMinRatePerSecond = 1e-6;
inline constexpr double kMaxRatePerSecond = 1e6;
// Loop events of one simulation: about half an hour at 10^6 events a second.
inline constexpr uint64_t kMaxEvents = 2'000'000'000;
// First to last arrival: ten years, well inside the virtual clock's range
// (292 years of nanoseconds).
inline constexpr double kMaxArrivalWindowSeconds = 10 * 365.25 * 86400;

struct SimEstimate {
  int64_t runs = 0;           // submitted in all
  int64_t runs_at_once = 0;   // in flight at once at worst, when the arrivals tell (0: unknown)
  int64_t tasks_per_run = 0;  // tasks of a run, each loop's body counted once
  uint64_t run_bytes = 0;     // memory a run in flight holds
  uint64_t events = 0;        // loop events, about
  double arrival_window_seconds = 0;  // first to last arrival (open loop)
};

SimEstimate EstimateSimulation(const ClusterSpec& cluster, const WorkloadSpec& workload,
                               Duration sample_interval);

// Half of this machine's physical memory: what one simulation may hold.
uint64_t DefaultMemoryBudget();

// Runs in flight that fit `memory_budget`, at `estimate.run_bytes` each.
int64_t MaxRunsInFlight(const SimEstimate& estimate, uint64_t memory_budget);

// An Error (400: the question asked too much) with the numbers when the
// simulation cannot fit: too many runs or events, arrivals spread too far,
// or runs in flight at once for the memory budget.
Status CheckSimulationFits(const SimEstimate& estimate, uint64_t memory_budget);

}  // namespace kfpbench::sim
