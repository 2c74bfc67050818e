// The search behind FitSummaryLevels (sim/summary_fit.h): candidates
// simulated on the levels they are scored on (and on the others only when
// asked: a level of 1,000 runs costs more than the fit's own levels), the
// grid, its refinement, the near-equal set's edges and what the near-equal
// candidates disagree on.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "ir/pipeline_spec.h"
#include "sim/model.h"
#include "sim/summary_fit.h"
#include "sim/summary_levels.h"
#include "util/result.h"

namespace kfpbench::sim {

struct SummaryScore {
  double cost = 0;   // mean squared log error
  double worst = 0;  // largest |relative error|
};

// The code of the error a search cut short by its deadline returns.
inline constexpr int kOverBudget = -3;

class SummarySearch {
 public:
  SummarySearch(const SummaryLevels& file, std::shared_ptr<const ir::PipelineSpec> pipeline,
                const SummaryFitOptions& options);

  const std::vector<std::string>& labels() const { return labels_; }
  const std::vector<SummaryLevel>& levels() const { return file_.levels; }
  int simulations() const { return simulations_.load(); }
  // Whether the fit's time (SummaryFitOptions::max_seconds, counted from the
  // search's start) is spent: nothing more is simulated after it.
  bool OverBudget() const;
  // Candidates the deadline cut short (left out of every result).
  int cut_short() const { return cut_short_.load(); }

  // Of `indices`, the level with the fewest runs.
  size_t Lightest(const std::vector<size_t>& indices) const;
  // Every measurement of the levels `subset` against `c`'s predictions.
  SummaryScore Score(const SummaryCandidate& c, const std::vector<size_t>& subset) const;
  // One level's part of Score's cost: its squared log errors summed, and
  // how many measurements they are.
  std::pair<double, int> LevelTerms(const SummaryCandidate& c, size_t level) const;

  // `params` with the step time that gives `anchor`'s makespan, simulated on
  // the levels of `subset` and scored on them (the other levels left
  // unsimulated, SummaryPrediction::simulated false, until Complete); an
  // error with kOverBudget as its code when the deadline passes first.
  Result<SummaryCandidate> Evaluate(SummaryParams params, size_t anchor,
                                    const std::vector<size_t>& subset);
  // Each of `candidates` simulated on those of `levels` it was not yet, on
  // SummaryFitOptions::threads threads; past the deadline, unless
  // `even_over_budget`, what is left stays unsimulated.
  Status Complete(std::vector<SummaryCandidate*> candidates, const std::vector<size_t>& levels,
                  bool even_over_budget = false);
  // The coarse grid: splits in multiples of 1/resolution (a step may take
  // none of the time), overheads and delays (each only when not given),
  // every one evaluated.
  Result<std::vector<SummaryCandidate>> Grid(size_t anchor, const std::vector<size_t>& subset);
  // Evaluate for each of `points`, on SummaryFitOptions::threads threads;
  // points not finished by the deadline are left out (possibly all of them).
  Result<std::vector<SummaryCandidate>> EvaluateAll(const std::vector<SummaryParams>& points,
                                                    size_t anchor,
                                                    const std::vector<size_t>& subset);
  // From the grid's best: moves of share between two steps, of the overhead
  // and the delay, taken while they lower the cost, halved when none does.
  // Every candidate tried joins `grid`.
  Result<SummaryCandidate> Refine(std::vector<SummaryCandidate>& grid, size_t anchor,
                                  const std::vector<size_t>& subset);
  // The near-equal set searched for its edges, whatever the grid tried
  // (sim/summary_profile.cc): each free parameter, then each level not
  // fitted, pushed to its lowest and its highest value over the parameter
  // sets whose worst error on the fitted levels stays within the tolerance
  // of the best's, by a direct search in the continuous parameters from
  // several starts. Every candidate tried is returned, to join `all`; the
  // near-equal ones are simulated on every level they bound.
  Result<std::vector<SummaryCandidate>> Profile(const std::vector<SummaryCandidate>& all,
                                                const SummaryCandidate& best, size_t anchor,
                                                const std::vector<size_t>& subset);
  // The near-equal candidates of `all` (worst error within the tolerance of
  // the best's), their ranges (over those simulated on each level), what
  // they differ in and the level that would tell them apart.
  Result<Identifiability> Identify(const std::vector<SummaryCandidate>& all,
                                   const SummaryCandidate& best, const std::vector<size_t>& subset);

  // `level` simulated with `params` (its step time as given).
  Result<SummaryPrediction> Predict(const SummaryLevel& level, const SummaryParams& params);

 private:
  // The sizes of Refine's moves: share moved between two steps, overhead
  // and delay seconds.
  struct Steps {
    double share = 0, overhead = 0, delay = 0;
    void Halve() { share /= 2, overhead /= 2, delay /= 2; }
  };
  Steps FirstSteps(size_t anchor) const;
  std::vector<SummaryParams> Moves(const SummaryParams& from, const Steps& steps) const;
  Result<double> SolveStepSeconds(SummaryParams params, size_t anchor);
  std::vector<double> Overheads(double anchor_makespan) const;
  std::vector<double> Delays() const;
  // The measured steps' seconds, in label order.
  std::vector<double> MeasuredSplit() const;

  const SummaryLevels& file_;
  std::shared_ptr<const ir::PipelineSpec> pipeline_;
  SummaryFitOptions options_;
  std::vector<std::string> labels_;
  bool autoscales_ = false;  // some level's nodes are autoscaled
  std::atomic<int> simulations_{0};
  std::atomic<int> cut_short_{0};
  std::chrono::steady_clock::time_point start_;
};

// The container steps' executor labels of `pipeline`, sorted.
std::vector<std::string> StepLabels(const ir::PipelineSpec& pipeline);

// Every way of writing `total` as `parts` integers of 0 or more, in order.
std::vector<std::vector<int>> Compositions(int total, int parts);

}  // namespace kfpbench::sim
