#include "report/repetitions.h"

#include <fmt/format.h>

#include "report/merge.h"
#include "util/time.h"

namespace kfpbench::report {
results::RepetitionSummary Summarize(const results::BenchmarkResults& repetition) {
  results::RepetitionSummary s;
  s.started = repetition.started;
  s.finished = repetition.finished;
  for (const auto& [name, op] : repetition.operations) s.latency_us[name] = op.latency_us;
  s.run_duration_ms = repetition.RunDurationsMs();
  return s;
}

Result<results::BenchmarkResults> CombineRepetitions(
    const std::vector<results::BenchmarkResults>& repetitions) {
  auto combined = MergeResults(repetitions);
  if (!combined.ok()) return combined.error();
  combined->repetitions.clear();
  for (const auto& r : repetitions) combined->repetitions.push_back(Summarize(r));
  return combined;
}

std::vector<results::RepetitionSummary> RepetitionsOf(
    const std::vector<results::BenchmarkResults>& side) {
  std::vector<results::RepetitionSummary> out;
  if (side.size() >= 2) {
    for (const auto& r : side) out.push_back(Summarize(r));
  } else if (side.size() == 1 && side.front().repetitions.size() >= 2) {
    out = side.front().repetitions;
  }
  return out;
}

}  // namespace kfpbench::report
