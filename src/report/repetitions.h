// `kfpbench run --repeat N`: the repetitions of one benchmark, each in its own
// results folder, and one combined result whose histograms are their exact
// merge and which keeps a summary of every repetition for `compare`.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "harness/results.h"
#include "util/result.h"

namespace kfpbench::report {

harness::RepetitionSummary Summarize(const harness::BenchmarkResults& repetition);

// MergeResults of the repetitions, plus their summaries in `repetitions`.
Result<harness::BenchmarkResults> CombineRepetitions(
    const std::vector<harness::BenchmarkResults>& repetitions);

// The per-repetition summaries a comparison side offers: one per results
// when there are several, else the summaries a combined result carries
// (empty when neither holds two or more).
std::vector<harness::RepetitionSummary> RepetitionsOf(
    const std::vector<harness::BenchmarkResults>& side);

// The "repetitions" array of results.json, and back.
nlohmann::json RepetitionsToJson(const std::vector<harness::RepetitionSummary>& repetitions);
Result<std::vector<harness::RepetitionSummary>> RepetitionsFromJson(const nlohmann::json& j);

}  // namespace kfpbench::report
