// Fits the simulator's free parameters to load levels given as summary
// measurements (sim/summary_levels.h), by search over Simulate: how the step
// time splits across the pipeline's steps, a per-step overhead and the
// autoscaler's provisioning delay. The lightest fitted level fixes the total
// step time (for each candidate, the time with which the simulator gives
// that level's makespan); a coarse grid over the rest, then a local
// refinement around the best, choose among them by the other levels. Each
// fit is judged on the levels it did not see (held out, and leave one out),
// and every candidate that explains the fitted levels about as well as the
// best is kept: where they disagree elsewhere, the data cannot decide, and
// the parameter they differ in names the measurement that would. The
// near-equal set's edges are searched in the continuous parameters (each
// parameter and each level not fitted pushed as far as the tolerance
// allows), so its ranges do not depend on where the grid fell.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/pipeline_spec.h"
#include "sim/summary_levels.h"
#include "util/result.h"

namespace kfpbench::sim {

struct SummaryParams {
  std::vector<double> split;  // share of the step time, one per label, summing to 1
  double step_seconds = 0;    // one run's step times summed over the labels
  double overhead = 0;        // seconds, per step
  double delay = 0;           // the autoscaler's provisioning delay, seconds
};

// What the simulator gives for one level with one parameter set.
struct SummaryPrediction {
  double makespan = 0, p50 = 0, p95 = 0;  // seconds
  int peak_nodes = 0;
  bool simulated = false;  // false: the level was not simulated for this candidate
};

struct SummaryCandidate {
  SummaryParams params;
  std::vector<SummaryPrediction> at;  // one per level of the file
  double worst = 0;                   // largest |relative error| on a fitted measurement
  double cost = 0;                    // mean squared log error over the fitted measurements
};

// A level predicted by a fit that did not see it.
struct UnseenError {
  size_t level = 0;
  double measured = 0, predicted = 0;  // makespan, seconds
  double error() const { return measured > 0 ? (predicted - measured) / measured : 0; }
};

// A level nobody measured that the near-equal fits disagree on most.
struct Discriminator {
  std::string what;          // "1000 runs on 40 nodes (2x the nodes of \"1000 runs\")"
  double low = 0, high = 0;  // makespan, seconds, across the near-equal fits
};

struct Identifiability {
  int near = 0;  // candidates explaining the fitted levels within the tolerance of the best
  int candidates = 0;
  // Per level: the lowest and highest makespan the near-equal fits predict.
  std::vector<std::pair<double, double>> range;
  // The near-equal fits' lowest and highest parameters: each label's share
  // (in SummaryFit::labels order), one run's step seconds, the overhead and
  // the delay (seconds).
  std::vector<std::pair<double, double>> share;
  std::pair<double, double> step_seconds, overhead, delay;
  // The parameters the near-equal fits differ in ("the split of step time
  // across steps"), and for each the measurement that fixes it.
  std::vector<std::string> differs;
  std::vector<std::string> measurements;
  std::optional<Discriminator> level;
  // Whether, on every level not fitted, the near-equal fits agree within the
  // tolerance: the data decide the answer even where not the parameters.
  bool decided = true;
};

struct SummaryFit {
  std::vector<std::string> labels;  // executor labels, in `split` order
  std::vector<std::string> level_names;
  std::vector<bool> fitted;  // per level: used by the fit
  SummaryCandidate best;
  std::vector<UnseenError> held_out;       // levels marked held out
  std::vector<UnseenError> leave_one_out;  // each fitted level, by a fit to the others
  std::string leave_one_out_why_not;       // when there was none
  Identifiability identifiability;
  double tolerance = 0.03;
  // How the provisioning delay and the overhead were found: "fitted",
  // "given" (the file fixes it), or for the delay "not fitted: no level
  // autoscaled" (no level could show it; the file's or the default value).
  std::string delay_basis = "fitted";
  std::string overhead_basis = "fitted";
  // Parameter sets the deadline (--fit-seconds) left unfinished, and whether
  // it ended the search before its own end.
  int cut_short = 0;
  bool out_of_time = false;
  int simulations = 0;
  double seconds = 0;  // wall time the search took

  // The largest |error| on a level the fit did not see (held out, or left
  // out in turn), as a fraction; 0 when none was checked. Predictions are
  // shown no finer than it allows.
  double unseen_error() const;
};

struct SummaryFitOptions {
  // The grid's shares are multiples of 1/this (0 included); only where the
  // search starts: the near-equal set's edges are searched between them.
  int split_resolution = 8;
  double max_seconds = 120;  // the refinement stops here
  int threads = 0;           // candidates simulated at once; 0: one per hardware thread
};

// An error when the pipeline is missing, no level is measured, a level's
// runs fail in the simulation, or no step fits on a level's node.
Result<SummaryFit> FitSummaryLevels(const SummaryLevels& levels,
                                    std::shared_ptr<const ir::PipelineSpec> pipeline,
                                    const SummaryFitOptions& options = {});

// The step models of a fit: each label a constant step of its share, with
// the fitted overhead (what `simulate` reads from the calibration file).
StepModels ModelsOf(const SummaryFit& fit);

// The "summary_fit" section of the calibration file.
nlohmann::json ToJson(const SummaryFit& fit, const SummaryLevels& levels);

// The lines `calibrate` prints.
std::string Describe(const SummaryFit& fit, const SummaryLevels& levels);

}  // namespace kfpbench::sim
