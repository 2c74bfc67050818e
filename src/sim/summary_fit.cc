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
  for (size_t out : fitted) {
    const std::vector<size_t> rest = Indices(fit.fitted, out);
    const SummaryCandidate* best = nullptr;
    std::vector<SummaryCandidate> regrid;
    if (out == anchor) {
      auto next = search.Grid(search.Lightest(rest), rest);
      if (!next.ok()) return next.error();
      regrid = std::move(*next);
    }
    for (const auto& c : out == anchor ? regrid : grid) {
      if (best == nullptr || search.Score(c, rest).cost < search.Score(*best, rest).cost) {
        best = &c;
      }
    }
    fit.leave_one_out.push_back({out, *search.levels()[out].makespan, best->at[out].makespan});
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
  auto best = search.Refine(*grid, anchor, fitted);
  if (!best.ok()) return best.error();
  fit.best = *best;
  for (size_t i = 0; i < file.levels.size(); ++i) {
    if (file.levels[i].held_out) {
      fit.held_out.push_back({i, *file.levels[i].makespan, fit.best.at[i].makespan});
    }
  }
  if (auto st = LeaveOneOut(search, *grid, anchor, fit); !st.ok()) return st.error();
  grid->push_back(fit.best);
  auto ident = search.Identify(*grid, fit.best, fitted);
  if (!ident.ok()) return ident.error();
  fit.identifiability = std::move(*ident);
  fit.simulations = search.simulations();
  fit.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return fit;
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
