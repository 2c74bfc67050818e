// The two ways a mode generates load, shared by every runner.
#pragma once

#include <functional>

#include "harness/runner.h"

namespace kfpbench::harness {

// Closed loop: `workers` threads each call `iteration(worker, n)` back to back
// until `end` or an interruption. An iteration that returns false (it failed)
// is followed by a poll-interval pause, so a failing server is not hammered.
void DriveClosedLoop(Context& context, int workers, WallTime end,
                     const std::function<bool(int worker, int n)>& iteration);

// Open loop: arrivals at `rate_per_minute` (constant or Poisson gaps) from now
// until `end`, each handed to one of `senders` threads as `send(n, intended)`.
// The intended time is fixed by the schedule, never by how the server is
// doing, so latency measured from it has no coordinated omission.
void DriveOpenLoop(Context& context, const Scenario& scenario, int senders, WallTime end,
                   const std::function<void(int n, WallTime intended)>& send);

}  // namespace kfpbench::harness
