// How the simulator draws a step's duration: common random numbers.
//
// Each container task gets one uniform number from a hash of (seed, its run's
// id, its executor label, which launch of that label in the run it is), and
// its duration is the distribution's quantile at that number (inverse CDF).
// Nothing depends on the order in which tasks of different runs launch, so
// adding runs or nodes never changes the step times of the runs already there,
// and two simulations of a search compare like with like.
#pragma once

#include <cstdint>
#include <string_view>

#include "exec/duration_dist.h"
#include "sim/sim_executor.h"
#include "util/time.h"

namespace kfpbench::sim {

// A number in (0, 1), uniform over hashes, fixed by its arguments.
double TaskUniform(uint64_t seed, std::string_view run_id, std::string_view label,
                   uint32_t ordinal);

// The duration at cumulative probability `p` in (0, 1); never negative.
Duration DurationAt(const exec::DurationDist& dist, double p);

// The distribution's mean (a lognormal's is median x e^(sigma^2 / 2)).
Duration ExpectedDuration(const exec::DurationDist& dist);

// `models` with every duration the constant of its mean: one run with them
// takes the expected critical path, not one sample of it.
StepModels ExpectedSteps(const StepModels& models);

// The seed of replication `index` (0-based) of a workload seeded `seed`:
// seed, seed + 1, ... so replication 0 is the workload as written.
uint64_t ReplicationSeed(uint64_t seed, int index);

}  // namespace kfpbench::sim
