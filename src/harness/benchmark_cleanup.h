// `kfpbench cleanup --benchmark-id ID`: deletes, on any target, exactly what
// one benchmark created. Every name a benchmark gives starts with "ID-"
// (Context::Name), so the clean-up lists each kind by that prefix and
// deletes what it finds: recurring runs first (so they stop making runs),
// then runs, experiments and pipelines with their versions. It keeps nothing
// between attempts, so one that was interrupted resumes by running it again.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "kfp/client.h"
#include "results/results.h"
#include "util/call_budget.h"
#include "util/result.h"

namespace kfpbench::harness {

struct BenchmarkCleanUp {
  results::TargetObjects deleted;
  std::vector<std::string> failures;  // what could not be listed or deleted, and why
  bool stopped = false;               // `stop()` said so before the end
};

// An Error when `benchmark_id` is not one a benchmark gives (kfpbench-<8 hex
// digits>): a clean-up by a prefix such as "kfpbench" or "" would delete other
// benchmarks' objects, or a user's.
Status CheckBenchmarkId(const std::string& benchmark_id);

// Every list and delete call waits for its turn in `budget` (cleanup --qps),
// so that a target handing out pages without end is not asked faster than
// the user allowed, and `stop()` ends the wait.
BenchmarkCleanUp CleanUpBenchmark(kfp::Client& client, const std::string& benchmark_id,
                                  CallBudget& budget, const std::function<bool()>& stop);

}  // namespace kfpbench::harness
