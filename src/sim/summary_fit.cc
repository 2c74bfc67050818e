#include "sim/summary_fit.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "sim/simulator.h"
#include "sim/summary_search.h"

namespace kfpbench::sim {
namespace {

// The measured levels not held out, and the one of them with the fewest runs
// (the anchor: it fixes the step time).
Status ChooseFitted(const SummaryLevels& file, SummaryFit& fit, size_t& anchor) {
  anchor = file.levels.size();
  for (size_t i = 0; i < file.levels.size(); ++i) {
    const SummaryLevel& l = file.levels[i];
    fit.level_names.push_back(l.name);
    fit.fitted.push_back(l.measured() && !l.held_out);
    if (!fit.fitted.back()) continue;
    if (anchor == file.levels.size() || l.runs < file.levels[anchor].runs) anchor = i;
  }
  if (anchor == file.levels.size()) {
    return Error{"summary levels: no level to fit (a level needs a makespan, and not held_out)"};
  }
  return {};
}

std::vector<size_t> Indices(const std::vector<bool>& mask, size_t without) {
  std::vector<size_t> out;
  for (size_t i = 0; i < mask.size(); ++i) {
    if (mask[i] && i != without) out.push_back(i);
  }
  return out;
}

// Every fitted level but one, in turn: the best grid candidate for the rest
// (re-anchored when the one left out was the anchor) predicts it.
Status LeaveOneOut(SummarySearch& search, const std::vector<SummaryCandidate>& grid, size_t anchor,
                   SummaryFit& fit) {
  const std::vector<size_t> fitted = Indices(fit.fitted, fit.fitted.size());
  if (fitted.size() < 3) {
    fit.leave_one_out_why_not = fmt::format(
        "leave-one-out needs three fitted levels (one fixes the step time, one more chooses "
        "among the rest); {} given",
        fitted.size());
    return {};
  }
  // Each candidate's squared log errors over every fitted level, summed
  // once: its cost without one level is that sum less the level's own
  // terms, so leaving each out in turn costs the candidates times the
  // levels, not that times the levels again.
  auto totals = [&](const std::vector<SummaryCandidate>& candidates) {
    std::vector<std::pair<double, int>> out(candidates.size(), {0.0, 0});
    for (size_t c = 0; c < candidates.size(); ++c) {
      for (size_t l : fitted) {
        auto [sum, n] = search.LevelTerms(candidates[c], l);
        out[c].first += sum;
        out[c].second += n;
      }
    }
    return out;
  };
  const auto grid_totals = totals(grid);
  auto ran_out = [&](size_t done) {
    fit.leave_one_out.clear();
    fit.leave_one_out_why_not =
        fmt::format("the fit's time (--fit-seconds) ran out after leaving out {} of {} levels",
                    done, fitted.size());
    return Status{};
  };
  for (size_t out : fitted) {
    if (search.OverBudget()) return ran_out(fit.leave_one_out.size());
    const SummaryCandidate* best = nullptr;
    double best_cost = 0;
    std::vector<SummaryCandidate> regrid;
    std::vector<std::pair<double, int>> regrid_totals;
    if (out == anchor) {
      const std::vector<size_t> rest = Indices(fit.fitted, out);
      auto next = search.Grid(search.Lightest(rest), rest);
      if (!next.ok()) return next.error();
      if (next->empty()) return ran_out(fit.leave_one_out.size());
      regrid = std::move(*next);
      regrid_totals = totals(regrid);
    }
    const auto& candidates = out == anchor ? regrid : grid;
    const auto& sums = out == anchor ? regrid_totals : grid_totals;
    for (size_t c = 0; c < candidates.size(); ++c) {
      auto [own, n] = search.LevelTerms(candidates[c], out);
      const int terms = sums[c].second - n;
      const double cost = terms > 0 ? (sums[c].first - own) / terms : 0;
      if (best == nullptr || cost < best_cost) {
        best = &candidates[c];
        best_cost = cost;
      }
    }
    // The candidates were simulated on the levels they were scored on: the
    // one left out is simulated now, for the best of them alone.
    double predicted = best->at[out].makespan;
    if (!best->at[out].simulated) {
      auto p = search.Predict(search.levels()[out], best->params);
      if (!p.ok()) return p.error();
      predicted = p->makespan;
    }
    fit.leave_one_out.push_back({out, *search.levels()[out].makespan, predicted});
  }
  return {};
}

}  // namespace

Result<SummaryFit> FitSummaryLevels(const SummaryLevels& file,
                                    std::shared_ptr<const ir::PipelineSpec> pipeline,
                                    const SummaryFitOptions& options) {
  if (pipeline == nullptr) {
    return Error{
        "summary levels: fitting them replays each level in the simulator: name the pipeline "
        "(--pipeline)"};
  }
  const auto start = std::chrono::steady_clock::now();
  SummaryFit fit;
  fit.tolerance = file.tolerance;
  size_t anchor = 0;
  if (auto st = ChooseFitted(file, fit, anchor); !st.ok()) return st.error();
  SummarySearch search(file, pipeline, options);
  fit.labels = search.labels();
  const std::vector<size_t> fitted = Indices(fit.fitted, fit.fitted.size());
  auto grid = search.Grid(anchor, fitted);
  if (!grid.ok()) return grid.error();
  if (grid->empty()) {
    return Error{fmt::format(
        "summary levels: the fit's time ({}s, --fit-seconds) ran out before one parameter set "
        "was simulated on all {} levels ({} simulations); give it more time or fewer levels",
        options.max_seconds, file.levels.size(), search.simulations())};
  }
  auto best = search.Refine(*grid, anchor, fitted);
  if (!best.ok()) return best.error();
  fit.best = *best;
  // The best is what calibrate answers with: simulated on every level, even
  // past the deadline (one simulation a level).
  std::vector<size_t> every(file.levels.size());
  for (size_t i = 0; i < every.size(); ++i) every[i] = i;
  if (auto st = search.Complete({&fit.best}, every, true); !st.ok()) return st.error();
  for (size_t i = 0; i < file.levels.size(); ++i) {
    if (file.levels[i].held_out) {
      fit.held_out.push_back({i, *file.levels[i].makespan, fit.best.at[i].makespan});
    }
  }
  if (auto st = LeaveOneOut(search, *grid, anchor, fit); !st.ok()) return st.error();
  grid->push_back(fit.best);
  // The near-equal set searched for its edges, not only where the grid fell.
  auto profiled = search.Profile(*grid, fit.best, anchor, fitted);
  if (!profiled.ok()) return profiled.error();
  grid->insert(grid->end(), profiled->begin(), profiled->end());
  fit.out_of_time = search.OverBudget();
  auto ident = search.Identify(*grid, fit.best, fitted);
  if (!ident.ok()) return ident.error();
  fit.identifiability = std::move(*ident);
  fit.cut_short = search.cut_short();
  fit.out_of_time = fit.out_of_time || fit.cut_short > 0;
  bool autoscales = false;
  for (const auto& l : file.levels) autoscales = autoscales || l.pool.max > l.pool.min;
  if (file.delay_given) {
    fit.delay_basis = "given";
  } else if (!autoscales) {
    fit.delay_basis = "not fitted: no level autoscaled";
  }
  if (file.overhead) fit.overhead_basis = "given";
  fit.simulations = search.simulations();
  fit.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return fit;
}

double SummaryFit::unseen_error() const {
  double worst = 0;
  for (const auto* errors : {&held_out, &leave_one_out}) {
    for (const auto& e : *errors) worst = std::max(worst, std::abs(e.error()));
  }
  return worst;
}

StepModels ModelsOf(const SummaryFit& fit) {
  StepModels models;
  models.fallback.overhead = FromSeconds(fit.best.params.overhead);
  for (size_t i = 0; i < fit.labels.size(); ++i) {
    StepModel& m = models.by_label[fit.labels[i]];
    m.duration = exec::DurationDist::Constant(
        FromSeconds(fit.best.params.step_seconds * fit.best.params.split[i]));
    m.overhead = FromSeconds(fit.best.params.overhead);
  }
  return models;
}

}  // namespace kfpbench::sim
