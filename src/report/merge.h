// Combines the results of several kfpbench processes (load generators run in
// parallel, or repetitions) into one, as if one process had measured it all.
#pragma once

#include <vector>

#include "results/results.h"
#include "util/result.h"

namespace kfpbench::report {

// Exact where the data allow it: histograms add bucket by bucket, counts and
// statuses add, run records and error lists concatenate, started = the
// earliest start, finished = the latest finish, partial if any part was.
// Time series are aligned on wall-clock seconds (each part's windows are
// shifted by its start's offset from the merged start) and added second by
// second: count, errors and max are exact; a window's p50/p95/p99 become the
// largest of the parts' values, an upper bound on the true merged percentile
// (per-second histograms are not stored). The first part's version, target
// and scenario are kept. An empty input is an error.
Result<results::BenchmarkResults> MergeResults(const std::vector<results::BenchmarkResults>& parts);

}  // namespace kfpbench::report
