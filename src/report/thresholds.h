// Pass/fail criteria on results, in k6's threshold language:
//   {"CreateRun": ["p95 < 500ms", "error_rate < 1%"], "run_duration": ["p99 < 10m"]}
// Metrics are operation names (API latency), `run_duration` and `queue_wait`.
// Expressions are `STAT OP VALUE`:
//   STAT  p50 p90 p95 p99 p999 (any pNN or p(NN.N)), med, min, max, mean|avg,
//         count, error_rate, rate, growth_exponent, growth_exponent_p99
//         (growth scenarios: the fitted exponent of p50 or p99 latency on
//         runs stored; the worst over growth scenarios; metrics may then
//         also be ListRuns:state, ListRuns:experiment, ListRuns:deep)
//   OP    < <= > >=
//   VALUE latencies with a unit (us ms s m h; a bare number is ms, as in k6),
//         error_rate as a percentage ("1%") or a fraction ("0.01"),
//         count as a number, rate with its unit ("10/s", "600/m", "36000/h";
//         a bare number is refused: scenarios count per minute, k6 per second).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/results.h"
#include "util/result.h"

namespace kfpbench::report {

// kExponent: a growth scenario's fitted exponent of latency on runs stored
// (growth_exponent of the p50 fit, growth_exponent_p99 of the p99 fit), a
// plain number.
enum class ThresholdKind { kLatency, kErrorRate, kCount, kRate, kExponent };

struct Threshold {
  std::string metric;      // "CreateRun", "run_duration", "queue_wait"
  std::string expression;  // as written
  std::string stat;        // "p95", "mean", "error_rate", ...
  ThresholdKind kind = ThresholdKind::kLatency;
  double percentile = -1;  // for pNN
  std::string op;          // "<", "<=", ">", ">="
  double limit = 0;        // ms for latencies, a fraction for error_rate, per second for rate
};

struct Verdict {
  std::string metric;
  std::string expression;
  bool passed = false;
  bool has_data = true;  // false: no samples to judge (a latency threshold then fails)
  double observed = 0;   // same unit as Threshold::limit
  double limit = 0;
  std::string observed_text;  // "612ms", "0.4%", "1200", "12.5/s", or "no data"
  std::string limit_text;
  std::string margin;  // "112ms (22%) over the limit", "38ms (8%) within the limit"
};

// Errors name the metric and the expression: `CreateRun: "p95 < fast": ...`.
Result<Threshold> ParseThreshold(const std::string& metric, const std::string& expression);

// `thresholds` maps a metric (an operation of kfp::kOperations, run_duration
// or queue_wait) to an expression, a list of expressions, or k6's object form
// {"threshold": "..."} (abortOnFail and other k6 keys are refused). Every
// problem is named, one per line; run and validate both check with this.
Result<std::vector<Threshold>> ParseThresholds(const nlohmann::json& thresholds);

// Every expression is parsed (ParseThresholds) before any is evaluated, so a
// typo never yields a partial verdict list.
Result<std::vector<Verdict>> EvaluateThresholds(const results::BenchmarkResults& results,
                                                const nlohmann::json& thresholds);

// The thresholds the scenario file carried (scenario.source.thresholds), or an
// empty object.
nlohmann::json ThresholdsOf(const results::BenchmarkResults& results);

// `thresholds` if it is not null, else the scenario file's (ThresholdsOf).
Result<std::vector<Verdict>> VerdictsFor(const results::BenchmarkResults& results,
                                         const nlohmann::json& thresholds);

bool AllPassed(const std::vector<Verdict>& verdicts);
nlohmann::json VerdictsToJson(const std::vector<Verdict>& verdicts);

}  // namespace kfpbench::report
