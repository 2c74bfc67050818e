// `kfpbench history DIR…`: one metric across many results (nightly runs,
// upgrades) to show slow drift that no single comparison would flag.
//
// Per results folder: count, p50, p95, p99, mean and error rate of the
// metric. Over the sequence (sorted by date or by target version): a least
// squares line per statistic, its slope per run and relative to the mean, and
// a Mann-Kendall trend test (no distribution assumed, robust to one odd run);
// the verdict says "drifting up" or "drifting down" when the trend is
// significant at `alpha` and the fitted line moves more than `min_drift`
// over the whole sequence, else "stable".
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/results.h"
#include "util/result.h"

namespace kfpbench::report {

enum class HistoryOrder { kDate, kVersion };

struct HistoryOptions {
  std::string metric = "run_duration";  // an operation name, run_duration or queue_wait
  HistoryOrder order = HistoryOrder::kDate;
  double alpha = 0.05;
  double min_drift = 0.05;  // over the whole sequence, relative to the mean
};

struct HistoryPoint {
  std::string source;  // the results folder
  WallTime started{};
  std::string target_version;  // healthz tag_name/version, "embedded <kfpbench version>" or ""
  uint64_t count = 0;
  double p50 = 0, p95 = 0, p99 = 0, mean = 0;  // ms
  double error_rate = 0;                       // failed calls, or runs that did not succeed
};

struct Trend {
  std::string stat;     // "p50", "p95", "p99", "mean", "error_rate"
  size_t n = 0;         // points with data
  double slope = 0;     // per run, in the stat's unit (ms, or a fraction)
  double relative = 0;  // slope / mean of the stat
  double drift = 0;     // the fitted line's change over the sequence, relative to the mean
  double p_value = 1;   // Mann-Kendall, two-sided
  std::string verdict;  // "drifting up", "drifting down", "stable", "too few runs"
};

struct History {
  std::string metric;
  std::vector<HistoryPoint> points;  // in the chosen order
  std::vector<Trend> trends;
};

struct NamedResults {
  std::string source;
  results::BenchmarkResults results;
};

// Errors: no results, an unknown metric (named with the metrics seen).
Result<History> BuildHistory(std::vector<NamedResults> runs, const HistoryOptions& options);

// The version a target reported, for --by version.
std::string TargetVersion(const results::BenchmarkResults& results);
// Compares versions the way people read them: "2.10.0" after "2.9.1".
bool VersionLess(const std::string& a, const std::string& b);

std::string HistoryText(const History& history);
std::string HistoryMarkdown(const History& history);  // for a pull-request comment
std::string HistoryCsv(const History& history);
nlohmann::json HistoryJson(const History& history);
// One self-contained page: the table, the trend verdicts and a uPlot chart.
std::string HistoryHtml(const History& history);

}  // namespace kfpbench::report
