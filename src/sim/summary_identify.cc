// What the near-equal fits of a summary fit disagree on, and what would tell
// them apart (SummarySearch::Identify).
#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "sim/summary_search.h"
#include "util/time.h"

namespace kfpbench::sim {
namespace {

constexpr const char* kPerStepTimes =
    "a single run's per-step times (one run's task start and end times; a results.json of one "
    "run, given to calibrate beside this file, holds them)";

std::string NodesText(const NodePool& pool) {
  return pool.max > pool.min ? fmt::format("{}-{} nodes", pool.min, pool.max)
                             : fmt::format("{} node{}", pool.max, pool.max == 1 ? "" : "s");
}

// One parameter across the near-equal candidates: what it is, its range in
// words, whether it differs by more than `enough`, and the measurement that
// fixes it.
struct ParameterSpread {
  std::string name;
  std::string range;
  bool differs = false;
  std::string measurement;
};

std::vector<ParameterSpread> Spreads(const std::vector<const SummaryCandidate*>& near,
                                     const std::vector<std::string>& labels,
                                     double anchor_makespan) {
  auto range_of = [&](auto get) {
    double lo = get(near.front()->params), hi = lo;
    for (const auto* c : near) {
      lo = std::min(lo, get(c->params));
      hi = std::max(hi, get(c->params));
    }
    return std::pair{lo, hi};
  };
  std::vector<ParameterSpread> out;
  size_t widest = 0;
  double widest_range = -1;
  for (size_t i = 0; i < labels.size(); ++i) {
    auto [lo, hi] = range_of([i](const SummaryParams& p) { return p.split[i]; });
    if (hi - lo > widest_range) widest_range = hi - lo, widest = i;
  }
  auto [slo, shi] = range_of([widest](const SummaryParams& p) { return p.split[widest]; });
  out.push_back(
      {"the split of step time across steps",
       fmt::format("{} takes {:.0f}% to {:.0f}% of it", labels[widest], slo * 100, shi * 100),
       shi - slo >= 0.05, kPerStepTimes});
  auto [tlo, thi] = range_of([](const SummaryParams& p) { return p.step_seconds; });
  out.push_back({"one run's total step time", FormatSeconds(tlo) + " to " + FormatSeconds(thi),
                 thi - tlo > 0.01 * anchor_makespan, kPerStepTimes});
  auto [olo, ohi] = range_of([](const SummaryParams& p) { return p.overhead; });
  out.push_back({"the per-step overhead", FormatSeconds(olo) + " to " + FormatSeconds(ohi),
                 ohi - olo > 0.005 * anchor_makespan,
                 "the gap between one step's end and the next one's start in a single run"});
  auto [dlo, dhi] = range_of([](const SummaryParams& p) { return p.delay; });
  out.push_back({"the autoscaler's provisioning delay",
                 FormatSeconds(dlo) + " to " + FormatSeconds(dhi), dhi - dlo >= 10,
                 "how long a new node takes from the autoscaler's request to running a task"});
  return out;
}

// A few near-equal candidates that span them: the best, and those at either
// end of each level's makespan.
std::vector<const SummaryCandidate*> Representatives(
    const std::vector<const SummaryCandidate*>& near, const SummaryCandidate& best, size_t levels) {
  std::set<const SummaryCandidate*> picked{&best};
  auto by_level = [](size_t l) {
    return [l](const SummaryCandidate* a, const SummaryCandidate* b) {
      return a->at[l].makespan < b->at[l].makespan;
    };
  };
  for (size_t l = 0; l < levels && picked.size() < 12; ++l) {
    std::vector<const SummaryCandidate*> known;
    for (const auto* c : near) {
      if (c->at[l].simulated) known.push_back(c);
    }
    if (known.empty()) continue;
    picked.insert(*std::min_element(known.begin(), known.end(), by_level(l)));
    picked.insert(*std::max_element(known.begin(), known.end(), by_level(l)));
  }
  return {picked.begin(), picked.end()};
}

// Levels nobody measured, derived from the file's: twice and half the nodes,
// twice the runs, and every node up from the start.
std::vector<std::pair<std::string, SummaryLevel>> Designs(const std::vector<SummaryLevel>& levels) {
  std::vector<const SummaryLevel*> by_runs;
  for (const auto& l : levels) by_runs.push_back(&l);
  std::stable_sort(by_runs.begin(), by_runs.end(),
                   [](const auto* a, const auto* b) { return a->runs > b->runs; });
  std::vector<std::pair<std::string, SummaryLevel>> out;
  for (const SummaryLevel* l : by_runs) {
    if (out.size() >= 12) break;
    auto add = [&](std::string variant, SummaryLevel d) {
      d.makespan.reset();
      out.emplace_back(
          fmt::format("{} runs on {} ({} of \"{}\")", d.runs, NodesText(d.pool), variant, l->name),
          std::move(d));
    };
    SummaryLevel twice = *l;
    twice.pool.max *= 2;
    if (twice.pool.min == l->pool.max) twice.pool.min = twice.pool.max;
    twice.pool.initial = std::max(twice.pool.initial, twice.pool.min);
    add("2x the nodes", twice);
    if (l->pool.max >= 2 && l->pool.max / 2 >= l->pool.min) {
      SummaryLevel half = *l;
      half.pool.max /= 2;
      if (l->pool.min == l->pool.max) half.pool.min = half.pool.max;
      half.pool.initial = std::min(half.pool.initial, half.pool.max);
      add("half the nodes", half);
    }
    SummaryLevel more = *l;
    more.runs *= 2;
    add("2x the runs", more);
    if (l->pool.max > l->pool.min) {
      SummaryLevel up = *l;
      up.pool.min = up.pool.initial = up.pool.max;
      add("every node up from the start", up);
    }
  }
  return out;
}

}  // namespace

Result<Identifiability> SummarySearch::Identify(const std::vector<SummaryCandidate>& all,
                                                const SummaryCandidate& best,
                                                const std::vector<size_t>& subset) {
  Identifiability id;
  id.candidates = static_cast<int>(all.size());
  std::vector<const SummaryCandidate*> near;
  for (const auto& c : all) {
    if (c.worst <= best.worst + file_.tolerance) near.push_back(&c);
  }
  if (near.empty()) near.push_back(&best);
  id.near = static_cast<int>(near.size());
  const std::set<size_t> fitted(subset.begin(), subset.end());
  // Each level's range over the near-equal candidates simulated on it (the
  // best always is; the profile's climbs for that level were).
  for (size_t l = 0; l < file_.levels.size(); ++l) {
    double lo = best.at[l].makespan, hi = lo;
    for (const auto* c : near) {
      if (!c->at[l].simulated) continue;
      lo = std::min(lo, c->at[l].makespan);
      hi = std::max(hi, c->at[l].makespan);
    }
    id.range.emplace_back(lo, hi);
    if (!fitted.contains(l) && hi > lo * (1 + 2 * file_.tolerance)) id.decided = false;
  }
  auto range_of = [&](auto get) {
    std::pair<double, double> r{get(best.params), get(best.params)};
    for (const auto* c : near) {
      r.first = std::min(r.first, get(c->params));
      r.second = std::max(r.second, get(c->params));
    }
    return r;
  };
  for (size_t i = 0; i < labels_.size(); ++i) {
    id.share.push_back(range_of([i](const SummaryParams& p) { return p.split[i]; }));
  }
  id.step_seconds = range_of([](const SummaryParams& p) { return p.step_seconds; });
  id.overhead = range_of([](const SummaryParams& p) { return p.overhead; });
  id.delay = range_of([](const SummaryParams& p) { return p.delay; });
  const size_t anchor = Lightest(subset);
  for (const auto& s : Spreads(near, labels_, *file_.levels[anchor].makespan)) {
    if (!s.differs) continue;
    id.differs.push_back(s.name + " (" + s.range + ")");
    if (std::find(id.measurements.begin(), id.measurements.end(), s.measurement) ==
        id.measurements.end()) {
      id.measurements.push_back(s.measurement);
    }
  }
  if (near.size() < 2) return id;
  const auto reps = Representatives(near, best, file_.levels.size());
  for (auto& [what, level] : Designs(file_.levels)) {
    if (OverBudget()) break;
    double lo = 0, hi = 0;
    for (size_t i = 0; i < reps.size(); ++i) {
      auto p = Predict(level, reps[i]->params);
      if (!p.ok()) return p.error();
      lo = i == 0 ? p->makespan : std::min(lo, p->makespan);
      hi = i == 0 ? p->makespan : std::max(hi, p->makespan);
    }
    const bool wider = !id.level || hi / lo > id.level->high / id.level->low;
    if (hi > lo * (1 + file_.tolerance) && wider) id.level = Discriminator{what, lo, hi};
  }
  return id;
}

}  // namespace kfpbench::sim
