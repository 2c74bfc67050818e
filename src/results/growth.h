// Accumulated state as an axis: what a growth scenario measured at each level
// of objects stored on the target, and the growth order fitted over the
// levels. Latency is read against the number of runs the target says it
// stores (ListRuns total_size), not against our own count, because a real
// deployment holds runs that others made.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "metrics/histogram.h"

namespace kfpbench::results {

// The calls a growth level measures, each with its own histogram. ListRuns is
// the UI's runs page (newest first); the variants are KFP's other run views.
inline constexpr std::string_view kGrowthOperations[] = {
    "ListRuns",             // sorted by created_at desc, first page
    "ListRuns:state",       // filtered by state (SUCCEEDED)
    "ListRuns:experiment",  // one experiment's runs
    "ListRuns:deep",        // following next_page_token ever deeper
    "GetRun",
    "ListExperiments",
    "ListPipelines",
    "CreateRun"};

bool IsGrowthOperation(std::string_view name);

// One level of a growth scenario: the fill that reached it, what the target
// then stored, and the mix measured there.
struct GrowthLevel {
  int64_t target_runs = 0;  // the level as the scenario names it
  // What the target stored when the measurement began (total_size of an
  // unfiltered list in the target's namespace).
  int64_t runs_stored = 0;
  int64_t experiments_stored = 0;
  int64_t pipelines_stored = 0;
  // The fill: objects created through the API to reach the level, and how
  // long that took (wall clock, seconds). Runs created but refused count in
  // fill_failures.
  int64_t runs_created = 0;
  int64_t experiments_created = 0;
  int64_t pipelines_created = 0;
  int64_t versions_created = 0;
  int64_t fill_failures = 0;
  double fill_seconds = 0;
  // Seconds spent waiting for the filled runs to reach a terminal state, and
  // how many were still active when the wait ended (0: settled).
  double settle_seconds = 0;
  int64_t unsettled_runs = 0;
  double measure_seconds = 0;
  int64_t deepest_page = 0;  // ListRuns:deep, pages followed from the first
  std::map<std::string, metrics::Histogram> latency_us;  // per kGrowthOperations name
  std::map<std::string, uint64_t> errors;                // failed calls per operation

  // Objects created per second of fill; 0 when nothing was filled.
  double FillRatePerSecond() const;
};

// A straight line through (ln objects, ln latency): latency ~ objects^exponent.
struct PowerLawFit {
  int points = 0;
  double exponent = 0;
  // 95% confidence interval of the exponent (Student's t on points - 2
  // degrees of freedom); absent with two points, where a line fits exactly.
  std::optional<double> exponent_low, exponent_high;
  double intercept = 0;  // ln latency at one object
  double r_squared = 0;
  std::string verdict;  // GrowthVerdict(exponent)
  // Latency at `objects`, in the unit the points were given in.
  double At(double objects) const;
};

// Bands of the exponent (docs/RESULTS.md): below 0.1 "constant"; below 0.5
// "logarithmic" (a log curve's local exponent, 1/ln n, is 0.11 at 10k and
// 0.08 at 200k, so a slow log climb fits as near-constant, a steep one here);
// below 1.25 "linear"; above, "worse".
std::string_view GrowthVerdict(double exponent);

// Least squares on (ln x, ln y) over the points with x > 0 and y > 0; an
// Error-free nullopt when fewer than two such points or all x equal.
std::optional<PowerLawFit> FitPowerLaw(const std::vector<std::pair<double, double>>& points);

// A growth scenario: its levels in order and the size to extrapolate to.
struct GrowthCurve {
  size_t scenario = 0;
  int64_t extrapolate_to = 0;  // objects; 0: no extrapolation
  std::vector<GrowthLevel> levels;
  std::string stopped_because;  // empty when every level ran

  struct OperationFit {
    std::optional<PowerLawFit> p50{}, p99{};  // latency in microseconds
    // The p99 at extrapolate_to by the fit, and by the interval's ends
    // pivoted on the largest level measured (us).
    std::optional<double> p99_at_extrapolation{}, p99_at_extrapolation_low{},
        p99_at_extrapolation_high{};
  };
  // Per operation with samples at two or more levels.
  std::map<std::string, OperationFit> Fits() const;
};

}  // namespace kfpbench::results
