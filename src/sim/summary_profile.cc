// The near-equal set's edges (SummarySearch::Profile): a range printed for
// a level must hold every fit within the tolerance, not only those the
// grid happened to try. Each objective (a parameter, or a level's makespan,
// made as low or as high as it goes) is climbed from near-equal starts by a
// mesh-adaptive direct search in the continuous parameters: poll along the
// columns of a random orthonormal basis and their negatives at step D, move
// to the best poll point that stays near-equal and goes further, doubling
// D, else halve it. Random directions follow the near-equal set where it
// runs diagonally to every parameter (a share moved between two steps and
// the overhead together), which moves of one parameter at a time cannot;
// points off the near-equal set are simply not taken (an extreme barrier).
#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include "sim/summary_search.h"

namespace kfpbench::sim {
namespace {

// The free parameters as one vector of comparable scale: the shares of every
// label but the last (the last takes what they leave), the overhead in
// units of a step's part of the anchor's makespan, the delay in units of 5
// minutes; bounded by the box of shares of 0 or more, an overhead from 0 to
// the anchor's makespan and a delay from 0 to an hour.
class Coordinates {
 public:
  Coordinates(size_t labels, bool split, bool overhead, bool delay, double anchor_makespan)
      : labels_(labels),
        shares_(split && labels > 1 ? labels - 1 : 0),
        overhead_(overhead),
        delay_(delay),
        overhead_unit_(anchor_makespan / static_cast<double>(std::max<size_t>(labels, 1))),
        overhead_max_(anchor_makespan) {}

  size_t size() const { return shares_ + overhead_ + delay_; }

  std::vector<double> Of(const SummaryParams& p) const {
    std::vector<double> z(p.split.begin(), p.split.begin() + static_cast<ptrdiff_t>(shares_));
    if (overhead_) z.push_back(p.overhead / overhead_unit_);
    if (delay_) z.push_back(p.delay / kDelayUnit);
    return z;
  }

  // `z` projected onto the box: a share below 0 is 0, shares summing to
  // more than 1 are scaled to 1 (the last then has none), an overhead or a
  // delay is clamped to its bounds. So a climb reaches the box's edges (an
  // overhead of exactly 0) instead of stopping a step short of them.
  SummaryParams At(const std::vector<double>& z, SummaryParams p) const {
    size_t i = 0;
    if (shares_ > 0) {
      double sum = 0;
      for (; i < shares_; ++i) sum += p.split[i] = std::clamp(z[i], 0.0, 1.0);
      if (sum > 1) {
        for (size_t k = 0; k < shares_; ++k) p.split[k] /= sum;
      }
      p.split[labels_ - 1] = std::max(1 - std::min(sum, 1.0), 0.0);
    }
    if (overhead_) p.overhead = std::clamp(z[i++] * overhead_unit_, 0.0, overhead_max_);
    if (delay_) p.delay = std::clamp(z[i++] * kDelayUnit, 0.0, kDelayMax);
    return p;
  }

 private:
  static constexpr double kDelayUnit = 300, kDelayMax = 3600;
  size_t labels_, shares_;
  bool overhead_, delay_;
  double overhead_unit_, overhead_max_;
};

// What a climb pushes, and which way.
struct Objective {
  enum Kind { kShare, kStepSeconds, kOverhead, kDelay, kLevel } kind = kShare;
  size_t index = 0;  // the label of a share, the level of a makespan
  double sign = 1;   // +1: as high as it goes, -1: as low

  // Whether `c` has a value for it (a level's makespan is simulated only
  // when asked).
  bool Known(const SummaryCandidate& c) const { return kind != kLevel || c.at[index].simulated; }
  double Value(const SummaryCandidate& c) const {
    switch (kind) {
      case kShare:
        return sign * c.params.split[index];
      case kStepSeconds:
        return sign * c.params.step_seconds;
      case kOverhead:
        return sign * c.params.overhead;
      case kDelay:
        return sign * c.params.delay;
      case kLevel:
        return sign * c.at[index].makespan;
    }
    return 0;
  }
  bool Better(const SummaryCandidate& c, const SummaryCandidate& than) const {
    const double a = Value(c), b = Value(than);
    return a > b + 1e-9 * std::max(1.0, std::abs(b));
  }
};

// The poll directions: the columns of the Householder matrix of a random
// unit vector (orthonormal) and their negatives.
std::vector<std::vector<double>> PollDirections(size_t n, std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  std::vector<double> v(n);
  double norm = 0;
  while (norm < 1e-6) {
    norm = 0;
    for (double& x : v) {
      x = normal(rng);
      norm += x * x;
    }
  }
  std::vector<std::vector<double>> out;
  for (size_t j = 0; j < n; ++j) {
    std::vector<double> column(n);
    for (size_t i = 0; i < n; ++i) column[i] = (i == j ? 1.0 : 0.0) - 2 * v[i] * v[j] / norm;
    out.push_back(column);
    for (double& x : column) x = -x;
    out.push_back(std::move(column));
  }
  return out;
}

struct ClimbResult {
  std::vector<SummaryCandidate> tried;
  SummaryCandidate end;  // the furthest near-equal candidate reached
};

// One climb of `objective` from `from` (near-equal, its value known).
Result<ClimbResult> Climb(SummarySearch& search, const Coordinates& coords,
                          const SummaryCandidate& from, const Objective& objective, double limit,
                          size_t anchor, const std::vector<size_t>& subset, uint64_t seed) {
  constexpr double kFirstStep = 1.0 / 8, kLargestStep = 1.0 / 2, kSmallestStep = 1.0 / 128;
  constexpr int kMostPolls = 25;
  std::mt19937_64 rng(seed);
  ClimbResult out{{}, from};
  double step = kFirstStep;
  for (int poll = 0; poll < kMostPolls && step >= kSmallestStep && !search.OverBudget(); ++poll) {
    const std::vector<double> z = coords.Of(out.end.params);
    std::vector<SummaryParams> points;
    for (const auto& d : PollDirections(coords.size(), rng)) {
      std::vector<double> moved = z;
      for (size_t i = 0; i < moved.size(); ++i) moved[i] += step * d[i];
      SummaryParams p = coords.At(moved, out.end.params);
      // At the box's edge several directions project to one point.
      auto same = [&p](const SummaryParams& q) {
        return q.split == p.split && q.overhead == p.overhead && q.delay == p.delay;
      };
      if (!same(out.end.params) && std::none_of(points.begin(), points.end(), same)) {
        points.push_back(std::move(p));
      }
    }
    if (points.empty()) {
      step /= 2;
      continue;
    }
    auto tried = search.EvaluateAll(points, anchor, subset);
    if (!tried.ok()) return tried.error();
    std::vector<SummaryCandidate*> near;
    for (auto& c : *tried) {
      if (c.worst <= limit) near.push_back(&c);
    }
    if (objective.kind == Objective::kLevel) {
      if (auto st = search.Complete(near, {objective.index}); !st.ok()) return st.error();
    }
    const SummaryCandidate* further = nullptr;
    for (const SummaryCandidate* c : near) {
      if (objective.Known(*c) && objective.Better(*c, further ? *further : out.end)) further = c;
    }
    if (further != nullptr) {
      out.end = *further;
      step = std::min(step * 2, kLargestStep);
    } else {
      step /= 2;
    }
    for (auto& c : *tried) out.tried.push_back(std::move(c));
  }
  return out;
}

}  // namespace

Result<std::vector<SummaryCandidate>> SummarySearch::Profile(
    const std::vector<SummaryCandidate>& all, const SummaryCandidate& best, size_t anchor,
    const std::vector<size_t>& subset) {
  const Coordinates coords(labels_.size(), file_.measured_steps.empty(), !file_.overhead,
                           !file_.delay_given && autoscales_, *file_.levels[anchor].makespan);
  std::vector<SummaryCandidate> found;
  if (coords.size() == 0) return found;
  const double limit = best.worst + file_.tolerance;
  // The near-equal candidate known to go furthest for `objective`, of
  // `all`, what was found so far and the best.
  auto furthest = [&](const Objective& objective) {
    const SummaryCandidate* out = &best;
    auto consider = [&](const SummaryCandidate& c) {
      if (c.worst <= limit && objective.Known(c) && objective.Better(c, *out)) out = &c;
    };
    for (const auto& c : all) consider(c);
    for (const auto& c : found) consider(c);
    return *out;
  };
  uint64_t seed = 1;
  // From the furthest candidate known, and from the best: two starts, as
  // the near-equal set need not be connected. Returns the climbs' ends.
  auto climb = [&](const Objective& objective) -> Result<std::vector<SummaryCandidate>> {
    std::vector<SummaryCandidate> starts = {furthest(objective)};
    if (objective.Better(starts[0], best) || objective.Better(best, starts[0])) {
      starts.push_back(best);
    }
    std::vector<SummaryCandidate> ends;
    for (const auto& start : starts) {
      if (OverBudget()) break;
      auto r = Climb(*this, coords, start, objective, limit, anchor, subset, seed++);
      if (!r.ok()) return r.error();
      ends.push_back(r->end);
      for (auto& c : r->tried) found.push_back(std::move(c));
    }
    return ends;
  };
  // Each parameter first: cheap (the fitted levels alone), and the ends
  // they reach span the near-equal set for the levels' climbs to start from.
  std::vector<Objective> parameters;
  if (file_.measured_steps.empty() && labels_.size() > 1) {
    for (size_t i = 0; i < labels_.size(); ++i) parameters.push_back({Objective::kShare, i});
  }
  parameters.push_back({Objective::kStepSeconds});
  if (!file_.overhead) parameters.push_back({Objective::kOverhead});
  if (!file_.delay_given && autoscales_) parameters.push_back({Objective::kDelay});
  std::vector<SummaryCandidate> ends;
  for (const Objective& p : parameters) {
    for (double sign : {-1.0, 1.0}) {
      Objective o = p;
      o.sign = sign;
      auto r = climb(o);
      if (!r.ok()) return r.error();
      ends.insert(ends.end(), r->begin(), r->end());
    }
  }
  const std::set<size_t> fitted(subset.begin(), subset.end());
  // The levels not fitted, lightest first: a heavy level's climbs start
  // from where the lighter ones' ended (all-at-once levels of one pool peak
  // at nearly the same parameters), so most of their way is climbed on the
  // cheaper level.
  std::vector<size_t> unfitted;
  for (size_t l = 0; l < file_.levels.size(); ++l) {
    if (!fitted.contains(l)) unfitted.push_back(l);
  }
  std::stable_sort(unfitted.begin(), unfitted.end(),
                   [&](size_t a, size_t b) { return file_.levels[a].runs < file_.levels[b].runs; });
  std::vector<SummaryCandidate*> spanning;
  for (auto& c : ends) spanning.push_back(&c);
  if (auto st = Complete(spanning, unfitted); !st.ok()) return st.error();
  for (auto& c : ends) found.push_back(std::move(c));
  for (size_t l : unfitted) {
    for (double sign : {-1.0, 1.0}) {
      auto r = climb({Objective::kLevel, l, sign});
      if (!r.ok()) return r.error();
      std::vector<SummaryCandidate*> reached;
      for (auto& c : *r) reached.push_back(&c);
      if (auto st = Complete(reached, unfitted); !st.ok()) return st.error();
      for (auto& c : *r) found.push_back(std::move(c));
    }
  }
  return found;
}

}  // namespace kfpbench::sim
