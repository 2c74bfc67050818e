#include "report/merge.h"

#include <cmath>

#include "report/reporter.h"
#include "report/write_reports.h"
#include "results/results_fields.h"
#include "results/results_json.h"

namespace kfpbench::report {
namespace {

bool IsSet(WallTime t) { return t.time_since_epoch().count() != 0; }

// The earliest start any part has: where the merged time series begin.
WallTime MergedStart(const std::vector<results::BenchmarkResults>& parts) {
  WallTime start{};
  for (const auto& p : parts) {
    if (IsSet(p.started) && (!IsSet(start) || p.started < start)) start = p.started;
  }
  return start;
}

}  // namespace

Result<results::BenchmarkResults> MergeResults(
    const std::vector<results::BenchmarkResults>& parts) {
  if (parts.empty()) return Error{"nothing to merge"};
  const WallTime start = MergedStart(parts);
  results::BenchmarkResults out;
  for (size_t i = 0; i < parts.size(); ++i) {
    const auto& p = parts[i];
    // Whole seconds: windows are whole seconds from each part's own start.
    const int64_t shift_s =
        IsSet(p.started) && IsSet(start) ? std::llround(ToSeconds(p.started - start)) : 0;
    if (Status s = results::kResultsFields.Merge(out, p, {.first = i == 0, .shift_s = shift_s});
        !s.ok()) {
      return Error{fmt::format("results {} of {}: {}", i + 1, parts.size(), s.error().message)};
    }
  }
  return out;
}

Result<results::BenchmarkResults> MergeFiles(const std::vector<std::string>& paths) {
  auto parts = results::LoadAll(paths);
  if (!parts.ok()) return parts.error();
  return MergeResults(*parts);
}

Status WriteMerged(const results::BenchmarkResults& merged, const std::filesystem::path& out) {
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec) return Error{fmt::format("cannot create {}: {}", out.string(), ec.message())};
  if (Status s = JsonReporter(out / "results.json").Report(merged); !s.ok()) return s;
  return WriteReports(merged, DefaultReportOptions(out));
}

}  // namespace kfpbench::report
