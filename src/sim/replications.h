// `simulate`'s certainty: the workload simulated with seeds seed, seed + 1,
// ... (sim/step_draw.h's ReplicationSeed), and how far its figures move
// between them. One seed is one draw of every step time; a figure that moves
// 10% from seed to seed is known to no better than that.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/model.h"
#include "util/result.h"

namespace kfpbench::sim {

// One figure over the replications: its median and range, in seconds.
struct FigureSpread {
  double median = 0, low = 0, high = 0;
};

struct Spread {
  int replications = 0;
  FigureSpread makespan, run_p95, wait_p95;  // wait: task pending p95
};

// Simulates `replications` seeds of `workload` on `cluster`, `threads` at
// once (0: one per hardware thread; each holds its own runs, so the memory
// budget is shared among them). An error when any replication fails to
// simulate.
Result<Spread> SimulateReplications(const ClusterSpec& cluster, const WorkloadSpec& workload,
                                    int replications, int threads = 0);

// "spread      over 10 seeds: makespan median 3h9m (3h5m to 3h14m), run p95 ...";
// durations at the precision `model_error` allows (sim::Summary).
std::string DescribeSpread(const Spread& s, double model_error = 0);
nlohmann::json ToJson(const Spread& s);

}  // namespace kfpbench::sim
