// kfpbench's own CPU and memory (getrusage, /proc/self/status), so a user
// can see the load generator was not the bottleneck. With the embedded
// backend the process is the server too, and the figures include it.
#pragma once

#include "results/results.h"
#include "util/time.h"

namespace kfpbench::harness {

struct ProcessSample {
  WallTime at{};
  double cpu_user_s = 0, cpu_system_s = 0;
};

ProcessSample SampleProcess();
// From `start` until now: CPU used in between, and memory as it stands
// (peak: the process's high-water mark, which may predate `start`).
results::HarnessUsage UsageSince(const ProcessSample& start);

}  // namespace kfpbench::harness
