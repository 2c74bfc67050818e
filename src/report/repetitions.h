// `kfpbench run --repeat N`: the repetitions of one benchmark, each in its own
// results folder, and one combined result whose histograms are their exact
// merge and which keeps a summary of every repetition for `compare`.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "results/results.h"
#include "util/result.h"

namespace kfpbench::report {

results::RepetitionSummary Summarize(const results::BenchmarkResults& repetition);

// MergeResults of the repetitions, plus their summaries in `repetitions`.
Result<results::BenchmarkResults> CombineRepetitions(
    const std::vector<results::BenchmarkResults>& repetitions);

// The per-repetition summaries a comparison side offers: one per results
// when there are several, else the summaries a combined result carries
// (empty when neither holds two or more).
std::vector<results::RepetitionSummary> RepetitionsOf(
    const std::vector<results::BenchmarkResults>& side);

}  // namespace kfpbench::report
