// When a benchmark counts as failed: the verdict behind exit code 1, which a
// CI pipeline reads (docs/RESULTS.md, "Exit codes"). A benchmark in which
// nothing worked must never look like a pass.
#pragma once

#include <string>
#include <vector>

#include "results/results.h"

namespace kfpbench::report {

struct FailurePolicy {
  // The share of runs that may end other than SUCCEEDED (FAILED, CANCELED,
  // never created because CreateRun failed, unfinished when the drain ended).
  double max_failed_runs = 0;
};

// Why the benchmark failed, one line per reason; empty when it did not:
//  - a scenario stopped with an error;
//  - every call of an operation failed (GetHealthz aside, which some servers
//    lack): a wrong URL path, a missing permission, a refused parameter;
//  - more runs did not succeed than the policy allows.
// Each line carries the most frequent error message behind it. When there is
// a reason and every GetHealthz call failed too, a last line says so.
std::vector<std::string> FailureReasons(const results::BenchmarkResults& results,
                                        const FailurePolicy& policy);

// The runs a benchmark tried to start but the target refused (CreateRun
// failed): not submitted runs, whatever the record's state says.
bool NotCreated(const results::RunRecord& run);

}  // namespace kfpbench::report
