// The per-step overhead of a capture, fitted on the cluster it was recorded
// on. A capture sees each task's created -> started gap, which is pod
// start-up plus any wait for room; it cannot see the cluster, so it cannot
// tell the two apart. Given the recorded cluster, the simulator can: the
// captured arrivals are simulated on it, and the overhead chosen is the one
// with which the simulated gaps (waits the simulator models, plus the
// overhead) average what was recorded.
#pragma once

#include <string>

#include "sim/model.h"
#include "util/result.h"

namespace kfpbench::capture {

struct OverheadFit {
  double recorded_gap = 0;   // mean created -> started over the captured executions, s
  double ceiling = 0;        // the most overhead tried: the lowest label's median gap
  double overhead = 0;       // the fit, s, the same for every label
  double simulated_gap = 0;  // mean simulated gap with it
  double waits_alone = 0;    // mean simulated gap with no overhead: waiting for room alone
  int simulations = 0;
  // kFloor: the simulated waits alone reach the recorded gap (the overhead is
  // 0 and the cluster named may be smaller than the one recorded); kCeiling:
  // even the ceiling leaves the simulated gap short (a larger cluster?).
  enum class Limit { kNone, kFloor, kCeiling } limit = Limit::kNone;
};

// Simulates `mix` (the captured workload, its arrivals as recorded) on
// `cluster` with one overhead for every label, bisecting it in [0, ceiling]
// until the mean simulated gap matches `recorded_gap`. Each overhead is
// judged on the mean of a few seeds (common random numbers across overheads,
// so the comparison is like with like).
Result<OverheadFit> FitOverheadOnCluster(const sim::ClusterSpec& cluster,
                                         const sim::WorkloadSpec& mix, double recorded_gap,
                                         double ceiling);

// One console sentence: the fit and the numbers it rests on.
std::string DescribeOverheadFit(const OverheadFit& fit);

}  // namespace kfpbench::capture
