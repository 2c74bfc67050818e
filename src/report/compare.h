// `kfpbench compare`: did a change make KFP faster or slower? Per operation
// and for run_duration, the change in p50, p95, p99 and mean, each with its
// interval, p-value, verdict and the test's power (the smallest slowdown it
// could have found), all from one procedure per row (MetricChange).
//
// The sample each test sees is what was measured: the calls (or runs) of
// every repetition of a side, pooled (histograms merge exactly), resampled
// by a seeded bootstrap over the histogram's buckets. When a side's
// repetitions differ from one another (a Kruskal-Wallis test, and medians
// further apart than --min-effect), calls of different repetitions are not
// interchangeable, and the repetitions become blocks: with as many on each
// side, repetition k of the candidate against repetition k of the baseline,
// a t test of the log ratios of their p95s (...) (results/blocks.h); else
// one value per repetition in a Welch t test of their logs.
//
// A row whose test could not have detected a change of --min-effect, and
// found none, is inconclusive, not "no change": a gate that cannot fail
// must not pass. What the gate is about is the user's to say (--metric, or
// the scenario's thresholds); unsaid, set-up operations (a handful of calls
// a repetition) are shown but do not decide the exit code.
#pragma once

#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/results.h"
#include "util/result.h"

namespace kfpbench::report {

struct CompareOptions {
  double alpha = 0.05;              // significance level; intervals are at 1 - alpha
  double min_effect = 0.05;         // a regression smaller than this never fails the comparison
  int bootstrap_iterations = 2000;  // at least 40 / alpha are drawn
  uint64_t seed = 1;
  // What the gate is about: "run_duration" (its every statistic) or
  // "GetRun:p95". Empty: the latency thresholds of the candidate's scenario
  // file, else every metric but set-up operations.
  std::vector<std::string> gate;
};

enum class ChangeVerdict {
  kImproved,
  kRegressed,
  kUnderMinEffect,  // the interval excludes 0, but the change is within --min-effect
  kNoChange,
  kInconclusive,
  kNotTested
};

// One statistic of one metric. Its estimate, interval, p and verdict come
// from one procedure: over pooled calls or runs, one bootstrap (the estimate
// on the samples, the percentile interval at 1 - alpha, p < alpha exactly when
// the interval excludes 0, and the power from the resamples' spread); over
// repetitions that differ, one t test on logs (paired blocks, else Welch).
struct MetricChange {
  std::string metric;  // "CreateRun", "run_duration"
  std::string stat;    // "p50", "p95", "p99", "mean"
  std::string sample;  // "calls", "runs"; when repetitions differ, "blocks" or "repetitions"
  size_t n_baseline = 0, n_candidate = 0;
  double baseline = 0, candidate = 0;  // ms
  double change = 0;                   // candidate / baseline - 1
  double ci_low = 0, ci_high = 0;      // of `change`, at 1 - alpha; always holds it
  double p_value = 1;
  // The smallest slowdown the test finds with 80% power at these sample
  // sizes; infinity: none, however large.
  double detectable = std::numeric_limits<double>::infinity();
  bool repetitions_differ = false;  // so the repetitions are the samples
  ChangeVerdict verdict = ChangeVerdict::kNotTested;
  std::string not_tested;  // why, when not tested: "under 100 values a side"
  // Decides the exit code: named by the gate, or (no gate named) not a
  // set-up operation. Rows not gated are shown all the same.
  bool gated = true;
  bool fails = false;  // gated, and a significant regression larger than min_effect
};

// A growth scenario on both sides: an operation's fitted exponent of latency
// on runs stored. Steeper means the candidate's 95% interval lies wholly
// above the baseline's: the same state costs it more as it grows.
struct GrowthChange {
  size_t scenario = 0;
  std::string metric;  // a growth operation
  std::string stat;    // "p50" or "p99"
  results::PowerLawFit baseline, candidate;
  bool steeper = false;  // fails the comparison
};

struct Comparison {
  std::vector<MetricChange> changes;
  std::vector<GrowthChange> growth;  // from the first results of each side that have it
  bool regressed = false;            // any change fails: `compare` exits 1
  // No regression, but some gated row could not have found one of
  // --min-effect (or a row the gate names was not tested): `compare` exits 3
  // (cli::kExitInconclusive).
  bool inconclusive = false;
  std::vector<std::string> gate;    // what decided the exit code, as named
  std::string gate_from;            // "--metric", "the scenario's thresholds", or empty: every row
  std::vector<std::string> set_up;  // operations not gated as set-up, with their calls
  std::vector<std::string> untested;  // rows the gate names that could not be tested
  size_t baseline_repetitions = 0, candidate_repetitions = 0;
};

// Each side is one or more repetitions of the same benchmark.
Result<Comparison> Compare(const std::vector<results::BenchmarkResults>& baseline,
                           const std::vector<results::BenchmarkResults>& candidate,
                           const CompareOptions& options);

std::string_view VerdictName(ChangeVerdict v);
std::string ComparisonText(const Comparison& c, const CompareOptions& options);
std::string ComparisonMarkdown(const Comparison& c, const CompareOptions& options);
nlohmann::json ComparisonJson(const Comparison& c, const CompareOptions& options);

// Why results may not be comparable: each difference in the scenario file
// they ran or the target they ran against (an embedded backend counts as one
// target whatever its port), naming both sides. Empty when they match.
std::vector<std::string> ComparabilityWarnings(
    const std::vector<const results::BenchmarkResults*>& results,
    const std::vector<std::string>& names);

}  // namespace kfpbench::report
