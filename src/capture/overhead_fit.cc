#include "capture/overhead_fit.h"

#include <algorithm>

#include <fmt/format.h>

#include "sim/simulator.h"

namespace kfpbench::capture {
namespace {

// Seeds per overhead judged, and bisection steps: 3 x (2 + 12) simulations
// of the captured day find the overhead to within 1/4096 of the ceiling.
constexpr int kSeeds = 3;
constexpr int kSteps = 12;
// Within a millisecond or 5% of the recorded gap, the fit reproduces it.
constexpr double kCloseSeconds = 1e-3;
constexpr double kCloseShare = 0.05;

sim::WorkloadSpec WithOverhead(const sim::WorkloadSpec& mix, double seconds) {
  sim::WorkloadSpec w = mix;
  const auto overhead =
      std::chrono::duration_cast<Duration>(std::chrono::duration<double>(seconds));
  w.steps.fallback.overhead = overhead;
  for (auto& [label, step] : w.steps.by_label) step.overhead = overhead;
  return w;
}

}  // namespace

Result<OverheadFit> FitOverheadOnCluster(const sim::ClusterSpec& cluster,
                                         const sim::WorkloadSpec& mix, double recorded_gap,
                                         double ceiling) {
  OverheadFit fit;
  fit.recorded_gap = recorded_gap;
  fit.ceiling = std::max(0.0, ceiling);
  // The mean simulated created -> started gap: every task's wait for a
  // node, plus the overhead it then pays.
  auto gap = [&](double overhead) -> Result<double> {
    double sum = 0;
    for (int seed = 1; seed <= kSeeds; ++seed) {
      sim::WorkloadSpec w = WithOverhead(mix, overhead);
      w.seed = mix.seed + static_cast<uint64_t>(seed - 1);
      auto r = sim::Simulate(cluster, w);
      ++fit.simulations;
      if (!r.ok()) return r.error();
      int64_t tasks = 0;
      for (const auto& [label, n] : r->tasks_by_label) tasks += n;
      sum += (tasks > 0 ? r->task_time.pending / static_cast<double>(tasks) : 0.0) + overhead;
    }
    return sum / kSeeds;
  };
  // A simulated gap this close to the recorded one reproduces it: a limit
  // reached within it is no sign of another cluster.
  const double close = std::max(kCloseSeconds, kCloseShare * recorded_gap);
  auto low = gap(0);
  if (!low.ok()) return low.error();
  fit.waits_alone = *low;
  if (*low >= recorded_gap) {
    if (*low > recorded_gap + close) fit.limit = OverheadFit::Limit::kFloor;
    fit.simulated_gap = *low;
    return fit;
  }
  auto high = gap(fit.ceiling);
  if (!high.ok()) return high.error();
  if (*high <= recorded_gap) {
    if (*high < recorded_gap - close) fit.limit = OverheadFit::Limit::kCeiling;
    fit.overhead = fit.ceiling;
    fit.simulated_gap = *high;
    return fit;
  }
  double lo = 0, hi = fit.ceiling, lo_gap = *low, hi_gap = *high;
  for (int i = 0; i < kSteps; ++i) {
    const double mid = (lo + hi) / 2;
    auto g = gap(mid);
    if (!g.ok()) return g.error();
    (*g < recorded_gap ? lo : hi) = mid;
    (*g < recorded_gap ? lo_gap : hi_gap) = *g;
  }
  // The end whose gap is nearer the recorded one.
  const bool take_low = recorded_gap - lo_gap <= hi_gap - recorded_gap;
  fit.overhead = take_low ? lo : hi;
  fit.simulated_gap = take_low ? lo_gap : hi_gap;
  return fit;
}

std::string DescribeOverheadFit(const OverheadFit& fit) {
  std::string head = fmt::format(
      "overhead {:.3f} s per step, fitted on the recorded cluster: recorded created->started "
      "{:.3f} s a task on average, simulated {:.3f} s ({:.3f} s of it waiting for room; {} "
      "simulations)",
      fit.overhead, fit.recorded_gap, fit.simulated_gap,
      std::max(0.0, fit.simulated_gap - fit.overhead), fit.simulations);
  switch (fit.limit) {
    case OverheadFit::Limit::kFloor:
      return head + fmt::format(
                        "; the simulated waits alone ({:.3f} s) reach the recorded gap: is the "
                        "cluster named smaller than the one recorded?",
                        fit.waits_alone);
    case OverheadFit::Limit::kCeiling:
      return head + fmt::format(
                        "; even {:.3f} s (the lowest step median gap) leaves it short: is the "
                        "cluster named larger than the one recorded?",
                        fit.ceiling);
    case OverheadFit::Limit::kNone:
      break;
  }
  return head;
}

}  // namespace kfpbench::capture
