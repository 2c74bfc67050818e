// Combines the results of several kfpbench processes (load generators run in
// parallel, or repetitions) into one, as if one process had measured it all.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "results/results.h"
#include "util/result.h"

namespace kfpbench::report {

// Every field by the merge rule its table names (results/results_fields.h):
// exact where the data allow it (histograms add bucket by bucket, counts add,
// lists append, started = the earliest start, finished = the latest finish,
// partial if any part was). Time series are aligned on wall-clock seconds
// (each part's windows are shifted by its start's offset from the merged
// start) and added second by second: count, errors and max are exact; a
// window's p50/p95/p99 become the largest of the parts' values, an upper
// bound on the true merged percentile (per-second histograms are not
// stored). The first part's version, target and scenario are kept. An error
// for an empty input, and for parts a must-be-equal field differs in (their
// time_scale): figures taken under different settings do not add up.
Result<results::BenchmarkResults> MergeResults(const std::vector<results::BenchmarkResults>& parts);

// `kfpbench merge`, as two calls. The results at `paths` (results folders
// or results.json files) read and merged; errors are bad input (a part that
// cannot be read, parts that do not merge) and name the file.
Result<results::BenchmarkResults> MergeFiles(const std::vector<std::string>& paths);
// The merged results written into `out` (created): results.json and the
// reports `run` writes beside it.
Status WriteMerged(const results::BenchmarkResults& merged, const std::filesystem::path& out);

}  // namespace kfpbench::report
