#include "sim/summary_search.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "sim/simulator.h"

namespace kfpbench::sim {

std::vector<std::string> StepLabels(const ir::PipelineSpec& pipeline) {
  std::set<std::string> labels;
  for (const auto& [name, component] : pipeline.components) {
    auto e = pipeline.executors.find(component.executor_label);
    if (e != pipeline.executors.end() && !e->second.runs_in_driver()) labels.insert(e->first);
  }
  return {labels.begin(), labels.end()};
}

std::vector<std::vector<int>> Compositions(int total, int parts) {
  if (parts <= 0 || total < 0) return {};
  if (parts == 1) return {{total}};
  std::vector<std::vector<int>> out;
  for (int first = 0; first <= total; ++first) {
    for (auto& rest : Compositions(total - first, parts - 1)) {
      rest.insert(rest.begin(), first);
      out.push_back(std::move(rest));
    }
  }
  return out;
}

SummarySearch::SummarySearch(const SummaryLevels& file,
                             std::shared_ptr<const ir::PipelineSpec> pipeline,
                             const SummaryFitOptions& options)
    : file_(file),
      pipeline_(std::move(pipeline)),
      options_(options),
      labels_(StepLabels(*pipeline_)),
      start_(std::chrono::steady_clock::now()) {
  for (const auto& l : file_.levels) autoscales_ = autoscales_ || l.pool.max > l.pool.min;
}

size_t SummarySearch::Lightest(const std::vector<size_t>& indices) const {
  return *std::min_element(indices.begin(), indices.end(), [&](size_t a, size_t b) {
    return file_.levels[a].runs < file_.levels[b].runs;
  });
}

namespace {

// Calls `add(measured, predicted)` for each measurement of level `l`.
template <typename Add>
void EachMeasurement(const SummaryLevel& l, const SummaryPrediction& p, Add add) {
  add(*l.makespan, p.makespan);
  if (l.p50) add(*l.p50, p.p50);
  if (l.p95) add(*l.p95, p.p95);
  if (l.peak_nodes) add(*l.peak_nodes, p.peak_nodes);
}

double LogError(double measured, double predicted) {
  return std::log(std::max(predicted, 1e-9) / std::max(measured, 1e-9));
}

}  // namespace

SummaryScore SummarySearch::Score(const SummaryCandidate& c,
                                  const std::vector<size_t>& subset) const {
  SummaryScore s;
  int terms = 0;
  for (size_t i : subset) {
    EachMeasurement(file_.levels[i], c.at[i], [&](double measured, double predicted) {
      const double e = LogError(measured, predicted);
      s.cost += e * e;
      s.worst = std::max(s.worst, std::abs(predicted - measured) / std::max(measured, 1e-9));
      ++terms;
    });
  }
  if (terms > 0) s.cost /= terms;
  return s;
}

std::pair<double, int> SummarySearch::LevelTerms(const SummaryCandidate& c, size_t level) const {
  std::pair<double, int> out{0, 0};
  EachMeasurement(file_.levels[level], c.at[level], [&](double measured, double predicted) {
    const double e = LogError(measured, predicted);
    out.first += e * e;
    ++out.second;
  });
  return out;
}

Result<SummaryPrediction> SummarySearch::Predict(const SummaryLevel& level,
                                                 const SummaryParams& params) {
  ClusterSpec cluster;
  cluster.pools = {level.pool};
  cluster.autoscaler = file_.autoscaler;
  cluster.autoscaler.enabled = level.pool.max > level.pool.min;
  cluster.autoscaler.provisioning_delay = FromSeconds(params.delay);
  WorkloadSpec w;
  w.pipeline = pipeline_;
  w.runs = level.runs;
  w.arrival_kind = level.arrival_kind;
  w.rate_per_second = level.rate_per_second;
  w.concurrency = level.concurrency;
  w.steps.fallback.overhead = FromSeconds(params.overhead);
  for (size_t i = 0; i < labels_.size(); ++i) {
    StepModel& m = w.steps.by_label[labels_[i]];
    m.duration = exec::DurationDist::Constant(FromSeconds(params.step_seconds * params.split[i]));
    m.overhead = FromSeconds(params.overhead);
  }
  ++simulations_;
  auto r = Simulate(cluster, w);
  if (!r.ok()) return Error{level.name + ": simulating it: " + r.error().message};
  if (r->failed > 0) return Error{level.name + ": runs fail in the simulation: " + r->first_error};
  return SummaryPrediction{ToSeconds(r->makespan), r->run_ms.ValueAtPercentile(50) / 1000.0,
                           r->run_ms.ValueAtPercentile(95) / 1000.0, r->peak_nodes, true};
}

// The makespan grows with the step time, nearly in proportion: a secant
// search from the measured makespan less the overheads finds the step time
// that gives it within 0.01%.
Result<double> SummarySearch::SolveStepSeconds(SummaryParams params, size_t anchor) {
  if (OverBudget()) return Error{"the fit's time ran out", kOverBudget};
  const SummaryLevel& level = file_.levels[anchor];
  const double target = *level.makespan;
  const double floor = target * 1e-3;
  double x0 = std::max(target - params.overhead * static_cast<double>(labels_.size()), floor);
  params.step_seconds = x0;
  auto p0 = Predict(level, params);
  if (!p0.ok()) return p0.error();
  double f0 = p0->makespan - target;
  double x1 = std::max(x0 * target / std::max(p0->makespan, 1e-9), floor);
  for (int i = 0; i < 10 && std::abs(f0) > target * 1e-4; ++i) {
    params.step_seconds = x1;
    auto p1 = Predict(level, params);
    if (!p1.ok()) return p1.error();
    const double f1 = p1->makespan - target;
    const double slope = x1 != x0 ? (f1 - f0) / (x1 - x0) : 0;
    double next = slope > 1e-6 ? x1 - f1 / slope : x1 * target / std::max(p1->makespan, 1e-9);
    x0 = x1;
    f0 = f1;
    x1 = std::max(next, floor);
  }
  return x0;
}

Result<SummaryCandidate> SummarySearch::Evaluate(SummaryParams params, size_t anchor,
                                                 const std::vector<size_t>& subset) {
  auto tau = SolveStepSeconds(params, anchor);
  if (!tau.ok()) return tau.error();
  params.step_seconds = *tau;
  SummaryCandidate c{params, std::vector<SummaryPrediction>(file_.levels.size()), 0, 0};
  for (size_t l : subset) {
    if (OverBudget()) return Error{"the fit's time ran out", kOverBudget};
    auto p = Predict(file_.levels[l], params);
    if (!p.ok()) return p.error();
    c.at[l] = *p;
  }
  const SummaryScore s = Score(c, subset);
  c.cost = s.cost;
  c.worst = s.worst;
  return c;
}

std::vector<double> SummarySearch::Overheads(double anchor_makespan) const {
  if (file_.overhead) return {ToSeconds(*file_.overhead)};
  const double per_step =
      anchor_makespan / static_cast<double>(std::max<size_t>(labels_.size(), 1));
  std::vector<double> out;
  // Where the search starts: the profile searches between these.
  for (double share : {0.0, 0.04, 0.15}) out.push_back(per_step * share);
  return out;
}

std::vector<double> SummarySearch::Delays() const {
  if (file_.delay_given || !autoscales_) return {ToSeconds(file_.autoscaler.provisioning_delay)};
  return {0, 60, 180};
}

Result<std::vector<SummaryCandidate>> SummarySearch::Grid(size_t anchor,
                                                          const std::vector<size_t>& subset) {
  const int parts = static_cast<int>(labels_.size());
  if (parts == 0) return Error{"summary levels: the pipeline has no container step to time"};
  // Shares in multiples of 1/n, none of them forced above 0; n lowered for
  // pipelines of many labels, whose splits would otherwise number in the
  // thousands (the profile searches between the grid's points), and the
  // even split always among them.
  auto count = [parts](int n) {
    double c = 1;  // (n + parts - 1) choose (parts - 1)
    for (int i = 1; i < parts; ++i) c = c * (n + i) / i;
    return c;
  };
  int n = std::max(options_.split_resolution, 1);
  while (n > 1 && count(n) > 256) --n;
  std::vector<std::vector<double>> splits;
  for (const auto& c : Compositions(n, parts)) splits.emplace_back(c.begin(), c.end());
  if (n % parts != 0) splits.emplace_back(parts, 1.0);
  if (!file_.measured_steps.empty()) splits = {MeasuredSplit()};
  std::vector<SummaryParams> points;
  for (const auto& split : splits) {
    SummaryParams p;
    const double total = std::accumulate(split.begin(), split.end(), 0.0);
    for (double k : split) p.split.push_back(k / total);
    for (double overhead : Overheads(*file_.levels[anchor].makespan)) {
      for (double delay : Delays()) {
        p.overhead = overhead;
        p.delay = delay;
        points.push_back(p);
      }
    }
  }
  return EvaluateAll(points, anchor, subset);
}

// The points are independent simulations: each thread takes every
// `threads`-th, and the first error (in point order) is the answer.
Result<std::vector<SummaryCandidate>> SummarySearch::EvaluateAll(
    const std::vector<SummaryParams>& points, size_t anchor, const std::vector<size_t>& subset) {
  const size_t threads = std::clamp<size_t>(
      options_.threads > 0 ? options_.threads : std::thread::hardware_concurrency(), 1, 64);
  std::vector<std::optional<Result<SummaryCandidate>>> results(points.size());
  std::vector<std::thread> pool;
  for (size_t t = 0; t < std::min(threads, points.size()); ++t) {
    pool.emplace_back([&, t] {
      for (size_t i = t; i < points.size(); i += threads) {
        results[i] = Evaluate(points[i], anchor, subset);
      }
    });
  }
  for (auto& th : pool) th.join();
  std::vector<SummaryCandidate> out;
  for (auto& r : results) {
    if (!r->ok() && r->error().code == kOverBudget) {
      ++cut_short_;
      continue;
    }
    if (!r->ok()) return r->error();
    out.push_back(std::move(**r));
  }
  return out;
}

Status SummarySearch::Complete(std::vector<SummaryCandidate*> candidates,
                               const std::vector<size_t>& levels, bool even_over_budget) {
  // One job a (candidate, level) not yet simulated, so a few candidates on
  // many levels keep every thread busy too.
  std::vector<std::pair<SummaryCandidate*, size_t>> jobs;
  for (SummaryCandidate* c : candidates) {
    for (size_t l : levels) {
      if (!c->at[l].simulated) jobs.emplace_back(c, l);
    }
  }
  const size_t threads = std::clamp<size_t>(
      options_.threads > 0 ? options_.threads : std::thread::hardware_concurrency(), 1, 64);
  std::vector<std::optional<Error>> errors(jobs.size());
  std::vector<std::thread> pool;
  for (size_t t = 0; t < std::min(threads, jobs.size()); ++t) {
    pool.emplace_back([&, t] {
      for (size_t i = t; i < jobs.size(); i += threads) {
        if (!even_over_budget && OverBudget()) return;
        auto [c, l] = jobs[i];
        auto p = Predict(file_.levels[l], c->params);
        if (p.ok()) {
          c->at[l] = *p;  // each (candidate, level) is one job's alone
        } else {
          errors[i] = p.error();
        }
      }
    });
  }
  for (auto& th : pool) th.join();
  for (auto& e : errors) {
    if (e) return *e;
  }
  return {};
}

std::vector<double> SummarySearch::MeasuredSplit() const {
  std::vector<double> out;
  for (const auto& label : labels_) {
    auto it = file_.measured_steps.find(label);
    out.push_back(it != file_.measured_steps.end() ? std::max(it->second, 1e-3) : 1e-3);
  }
  return out;
}

bool SummarySearch::OverBudget() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count() >=
         options_.max_seconds;
}

Result<SummaryCandidate> SummarySearch::Refine(std::vector<SummaryCandidate>& grid, size_t anchor,
                                               const std::vector<size_t>& subset) {
  SummaryCandidate best = *std::min_element(
      grid.begin(), grid.end(),
      [](const SummaryCandidate& a, const SummaryCandidate& b) { return a.cost < b.cost; });
  Steps steps = FirstSteps(anchor);
  for (int halvings = 0, rounds = 0; halvings < 4 && rounds < 40 && !OverBudget(); ++rounds) {
    const std::vector<SummaryParams> moves = Moves(best.params, steps);
    bool improved = false;
    auto tried = EvaluateAll(moves, anchor, subset);
    if (!tried.ok()) return tried.error();
    for (auto& c : *tried) {
      if (c.cost < best.cost - 1e-12) {
        best = c;
        improved = true;
      }
      grid.push_back(std::move(c));
    }
    if (!improved) {
      steps.Halve();
      ++halvings;
    }
  }
  return best;
}

SummarySearch::Steps SummarySearch::FirstSteps(size_t anchor) const {
  return {file_.measured_steps.empty() ? 0.5 / std::max(options_.split_resolution, 1) : 0,
          file_.overhead ? 0 : *file_.levels[anchor].makespan * 0.005,
          Delays().size() > 1 ? 15.0 : 0.0};
}

std::vector<SummaryParams> SummarySearch::Moves(const SummaryParams& from,
                                                const Steps& steps) const {
  std::vector<SummaryParams> moves;
  const size_t parts = labels_.size();
  for (size_t a = 0; a < parts; ++a) {
    for (size_t b = 0; b < parts; ++b) {
      SummaryParams p = from;
      if (a == b || steps.share == 0 || p.split[a] - steps.share < -1e-12) continue;
      p.split[a] = std::max(p.split[a] - steps.share, 0.0);
      p.split[b] += steps.share;
      moves.push_back(p);
    }
  }
  for (double sign : {-1.0, 1.0}) {
    SummaryParams o = from, d = from;
    o.overhead += sign * steps.overhead;
    d.delay += sign * steps.delay;
    if (steps.overhead > 0 && o.overhead >= 0) moves.push_back(o);
    if (steps.delay > 0 && d.delay >= 0) moves.push_back(d);
  }
  return moves;
}

}  // namespace kfpbench::sim
