#include "sim/calibrate.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <queue>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ir/quantity.h"
#include "results/results_json.h"
#include "sim/simulator.h"
#include "util/human.h"
#include "util/percentile.h"

namespace kfpbench::sim {
namespace {

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

exec::DurationDist FitDuration(const std::vector<double>& seconds) {
  std::vector<double> logs;
  for (double s : seconds) logs.push_back(std::log(std::max(s, 1e-6)));
  if (logs.empty()) return exec::DurationDist::Constant(Duration::zero());
  double mean = 0;
  for (double l : logs) mean += l;
  mean /= static_cast<double>(logs.size());
  double var = 0;
  for (double l : logs) var += (l - mean) * (l - mean);
  double sigma = logs.size() > 1 ? std::sqrt(var / static_cast<double>(logs.size() - 1)) : 0;
  Duration median = FromSeconds(std::exp(mean));
  if (sigma < 0.02) return exec::DurationDist::Constant(median);
  exec::DurationDist d;
  d.kind = exec::DurationDist::Kind::kLognormal;
  d.a = median;
  d.sigma = sigma;
  return d;
}

std::vector<WallTime> ReadyTimes(const std::vector<std::pair<WallTime, WallTime>>& spans,
                                 WallTime created, int64_t* compared) {
  int64_t count = 0;
  std::vector<WallTime> ends;
  ends.reserve(spans.size());
  for (const auto& [start, end] : spans) ends.push_back(end);
  std::sort(ends.begin(), ends.end(), [&](WallTime a, WallTime b) {
    ++count;
    return a < b;
  });
  std::vector<WallTime> ready;
  ready.reserve(spans.size());
  for (const auto& [start, end] : spans) {
    // The first end after the start; the one before it is the latest at or
    // before the start.
    auto after = std::upper_bound(ends.begin(), ends.end(), start, [&](WallTime a, WallTime b) {
      ++count;
      return a < b;
    });
    ready.push_back(after == ends.begin() ? created : std::max(created, *(after - 1)));
  }
  if (compared != nullptr) *compared = count;
  return ready;
}

namespace {

// One step's measured time, with its executor label (empty when the
// pipeline does not say).
struct StepSample {
  std::string label;
  double seconds;
};

struct Samples {
  std::vector<StepSample> steps;
  std::vector<double> gaps;  // ready -> started, per step
  int64_t runs = 0;
};

std::map<std::string, std::string> LabelsOf(const ir::PipelineSpec* pipeline) {
  std::map<std::string, std::string> label_of;  // task name -> executor label
  if (pipeline != nullptr && pipeline->root.dag) {
    for (const auto& [name, task] : pipeline->root.dag->tasks) {
      auto comp = pipeline->components.find(task.component_ref);
      if (comp != pipeline->components.end() && !comp->second.executor_label.empty()) {
        label_of[name] = comp->second.executor_label;
      }
    }
  }
  return label_of;
}

Result<Samples> Collect(const std::vector<results::RunRecord>& runs,
                        const std::map<std::string, std::string>& label_of) {
  Samples out;
  for (size_t r = 0; r < runs.size(); ++r) {
    const results::RunRecord& run = runs[r];
    if (run.state != RuntimeState::kSucceeded) continue;
    if (run.created == WallTime{}) {
      return Error{fmt::format("runs.records[{}].created_at: missing", r)};
    }
    struct Span {
      std::string name;
      WallTime start, end;
    };
    std::vector<Span> spans;
    for (size_t t = 0; t < run.tasks.size(); ++t) {
      const auto& task = run.tasks[t];
      if (task.dag) continue;
      for (auto [time, key] :
           {std::pair{task.started, "started_at"}, {task.finished, "finished_at"}}) {
        if (time == WallTime{}) {
          return Error{fmt::format("runs.records[{}].tasks[{}].{}: missing", r, t, key)};
        }
      }
      spans.push_back({task.name, task.started, task.finished});
    }
    if (spans.empty()) continue;
    ++out.runs;
    std::vector<std::pair<WallTime, WallTime>> times;
    times.reserve(spans.size());
    for (const auto& s : spans) times.emplace_back(s.start, s.end);
    const std::vector<WallTime> ready = ReadyTimes(times, run.created);
    for (size_t i = 0; i < spans.size(); ++i) {
      const auto& s = spans[i];
      auto it = label_of.find(s.name);
      out.steps.push_back({it != label_of.end() ? it->second : "", ToSeconds(s.end - s.start)});
      out.gaps.push_back(std::max(0.0, ToSeconds(s.start - ready[i])));
    }
  }
  if (out.runs == 0) return Error{"results: no succeeded run with step times to calibrate from"};
  return out;
}

// Step models from `samples`, each uploading step's samples less its
// label's `upload` seconds (none: nothing taken out): the step's own time.
Calibration Fit(const Samples& samples, const std::map<std::string, int64_t>& artifact_bytes,
                const std::map<std::string, double>& upload) {
  std::map<std::string, std::vector<double>> durations;
  for (const auto& [label, seconds] : samples.steps) {
    double own = seconds;
    if (auto u = upload.find(label); u != upload.end()) own = std::max(seconds - u->second, 1e-3);
    durations["default"].push_back(own);
    if (!label.empty()) durations[label].push_back(own);
  }
  Calibration c;
  c.runs = samples.runs;
  c.overhead_p50 = FromSeconds(Median(samples.gaps));
  for (const auto& [label, secs] : durations) {
    StepModel m{FitDuration(secs), c.overhead_p50};
    c.samples[label] = static_cast<int64_t>(secs.size());
    if (label == "default") {
      c.models.fallback = m;
    } else {
      auto bytes = artifact_bytes.find(label);
      if (upload.contains(label) && bytes != artifact_bytes.end()) m.artifact_bytes = bytes->second;
      c.models.by_label[label] = m;
    }
  }
  return c;
}

}  // namespace

Result<Calibration> Calibrate(const std::vector<results::RunRecord>& runs,
                              const ir::PipelineSpec* pipeline) {
  auto samples = Collect(runs, LabelsOf(pipeline));
  if (!samples.ok()) return samples.error();
  return Fit(*samples, {}, {});
}

namespace {

// A level as the simulator replays it: its arrivals as measured, and what
// it measured.
struct Level {
  std::string source;
  Samples samples;
  std::vector<Arrival> arrivals;  // offsets of created_at from the first
  LevelFit fit;                   // the measured half
};

Result<Level> Measure(const MeasuredLevel& in, const std::map<std::string, std::string>& label_of) {
  Level level;
  level.source = in.source;
  auto samples = Collect(in.runs, label_of);
  if (!samples.ok()) return Error{in.source + ": " + samples.error().message};
  level.samples = std::move(*samples);
  std::vector<WallTime> created;
  std::vector<double> durations;
  WallTime last_end{};
  for (const auto& run : in.runs) {
    if (run.state != RuntimeState::kSucceeded || !run.Finished()) continue;
    created.push_back(run.created);
    durations.push_back(ToSeconds(run.RunDuration()));
    last_end = std::max(last_end, run.finished);
  }
  if (created.empty()) return Error{in.source + ": no succeeded run has its finished_at"};
  std::sort(created.begin(), created.end());
  for (WallTime c : created) level.arrivals.push_back({c - created.front(), {}});
  LevelFit& f = level.fit;
  f.source = in.source;
  f.runs = static_cast<int64_t>(durations.size());
  f.measured_makespan = ToSeconds(last_end - created.front());
  // Nearest rank, as the simulator's histogram reads its percentiles.
  f.measured_p95 = Percentile(durations, 95);
  // Little's law: run time summed over the makespan.
  const double total = std::accumulate(durations.begin(), durations.end(), 0.0);
  f.runs_in_flight = f.measured_makespan > 0 ? total / f.measured_makespan : 0;
  return level;
}

// Median step duration by executor label.
using LabelMedians = std::map<std::string, double>;

LabelMedians MediansOf(const std::vector<StepSample>& steps) {
  std::map<std::string, std::vector<double>> by_label;
  for (const auto& s : steps) by_label[s.label].push_back(s.seconds);
  LabelMedians out;
  for (const auto& [label, secs] : by_label) out[label] = Median(secs);
  return out;
}

// The simulator's makespan and p95 for every level with `models` and
// `store`; with `step_medians`, also each level's median step duration by
// label as simulated.
Result<std::vector<LevelFit>> Predict(const std::vector<Level>& levels,
                                      const std::shared_ptr<const ir::PipelineSpec>& pipeline,
                                      const ClusterSpec& cluster, const StepModels& models,
                                      const ArtifactStoreSpec& store,
                                      std::vector<LabelMedians>* step_medians = nullptr) {
  std::vector<LevelFit> out;
  ClusterSpec c = cluster;
  c.artifact_store = store;
  for (const auto& level : levels) {
    WorkloadSpec w;
    w.pipeline = pipeline;
    w.arrival_kind = WorkloadSpec::ArrivalKind::kCsv;
    w.csv = level.arrivals;
    w.steps = models;
    std::vector<StepSample> steps;
    SimOptions options;
    if (step_medians != nullptr) {
      options.on_run_end = [&steps](const engine::RunSnapshot& s, WallTime) {
        for (const auto& t : s.task_states) {
          if (!t.executor_label->empty() && t.end_time != WallTime{}) {
            steps.push_back({*t.executor_label, ToSeconds(t.end_time - t.start_time)});
          }
        }
      };
    }
    auto r = Simulate(c, w, options);
    if (step_medians != nullptr) step_medians->push_back(MediansOf(steps));
    if (!r.ok()) return Error{level.source + ": simulating it: " + r.error().message};
    if (r->failed > 0)
      return Error{level.source + ": runs fail in the simulation: " + r->first_error};
    LevelFit f = level.fit;
    f.predicted_makespan = ToSeconds(r->makespan);
    f.predicted_p95 = r->run_ms.ValueAtPercentile(95) / 1000.0;
    out.push_back(f);
  }
  return out;
}

double SquaredLogError(const std::vector<LevelFit>& fits) {
  double sum = 0;
  for (const auto& f : fits) {
    for (auto [m, p] : {std::pair{f.measured_makespan, f.predicted_makespan},
                        {f.measured_p95, f.predicted_p95}}) {
      double e = std::log(std::max(p, 1e-6) / std::max(m, 1e-6));
      sum += e * e;
    }
  }
  return sum;
}

// Mean time from submission to answer of calls submitted at `arrivals`
// (seconds, sorted) to a FIFO queue of `workers` servers taking `service`
// each.
double FifoMeanSojourn(const std::vector<double>& arrivals, double service, int workers) {
  std::priority_queue<double, std::vector<double>, std::greater<>> free_at;
  for (int i = 0; i < workers; ++i) free_at.push(-std::numeric_limits<double>::infinity());
  double total = 0;
  for (double a : arrivals) {
    double start = std::max(a, free_at.top());
    free_at.pop();
    free_at.push(start + service);
    total += start + service - a;
  }
  return arrivals.empty() ? 0 : total / static_cast<double>(arrivals.size());
}

void FitApi(const std::vector<MeasuredLevel>& measured, SharedServiceFit& fit) {
  struct Calls {
    const MeasuredLevel* level;
    std::vector<double> arrivals;  // CreateRun sent, seconds from the first
    double rate;                   // calls a second
  };
  std::vector<Calls> levels;
  for (const auto& m : measured) {
    if (m.create_run_us.count() == 0 || m.create_run_us.mean() <= 0) continue;
    std::vector<WallTime> sent;
    for (const auto& r : m.runs) {
      if (r.submitted != WallTime{}) sent.push_back(r.submitted);
    }
    if (sent.size() < 2) continue;
    std::sort(sent.begin(), sent.end());
    Calls c{&m, {}, 0};
    for (WallTime t : sent) c.arrivals.push_back(ToSeconds(t - sent.front()));
    c.rate = static_cast<double>(sent.size() - 1) / std::max(c.arrivals.back(), 1e-6);
    levels.push_back(std::move(c));
  }
  if (levels.size() < 2) {
    fit.api_why_not =
        "two levels with CreateRun latencies and run submission times are needed (a results.json "
        "kfpbench run wrote has both)";
    return;
  }
  const Calls& lightest = *std::min_element(
      levels.begin(), levels.end(), [](const Calls& a, const Calls& b) { return a.rate < b.rate; });
  const double service = lightest.level->create_run_us.ValueAtPercentile(50) / 1e6;
  if (service <= 0) {
    fit.api_why_not = "CreateRun's median latency at the lightest level is 0";
    return;
  }
  double worst_queueing = 0;
  for (const auto& l : levels) {
    worst_queueing = std::max(worst_queueing, l.level->create_run_us.mean() / 1e6 / service);
  }
  if (worst_queueing < 1.2) {
    fit.api_why_not = fmt::format(
        "CreateRun never queued: its mean latency stayed within {:.0f}% of the {} it takes at the "
        "lightest level, so the API's workers cannot be told apart",
        (worst_queueing - 1) * 100, FormatDuration(FromSeconds(service)));
    return;
  }
  double best_cost = std::numeric_limits<double>::infinity();
  for (int workers = 1; workers <= 256; ++workers) {
    double cost = 0;
    for (const auto& l : levels) {
      double e = std::log(FifoMeanSojourn(l.arrivals, service, workers) /
                          (l.level->create_run_us.mean() / 1e6));
      cost += e * e;
    }
    if (cost < best_cost) {
      best_cost = cost;
      fit.api.workers = workers;
    }
  }
  fit.api.run_create = FromSeconds(service);
  fit.api_fitted = true;
  for (const auto& l : levels) {
    fit.api_levels.push_back({l.level->source, static_cast<int64_t>(l.arrivals.size()),
                              l.level->create_run_us.mean() / 1e6,
                              FifoMeanSojourn(l.arrivals, service, fit.api.workers)});
  }
}

// Step models, and the artifact store when the levels allow (CalibrateLevels).
Result<Calibration> CalibrateStore(const std::vector<MeasuredLevel>& measured,
                                   std::shared_ptr<const ir::PipelineSpec> pipeline,
                                   const SharedServiceInputs& inputs) {
  if (measured.empty()) return Error{"no load level to calibrate from"};
  const auto label_of = LabelsOf(pipeline.get());
  std::vector<Level> levels;
  for (const auto& m : measured) {
    auto level = Measure(m, label_of);
    if (!level.ok()) return level.error();
    levels.push_back(std::move(*level));
  }
  const auto lightest = std::min_element(
      levels.begin(), levels.end(),
      [](const Level& a, const Level& b) { return a.fit.runs_in_flight < b.fit.runs_in_flight; });
  const auto heaviest = std::max_element(
      levels.begin(), levels.end(),
      [](const Level& a, const Level& b) { return a.fit.runs_in_flight < b.fit.runs_in_flight; });
  Calibration plain = Fit(lightest->samples, {}, {});
  auto not_fitted = [&](std::string why) {
    plain.shared.why_not = std::move(why);
    return plain;
  };
  if (levels.size() < 2) {
    return not_fitted(
        "one load level cannot tell a step's own time from its wait for a shared service: "
        "measure a second level with more runs in flight");
  }
  if (inputs.artifact_bytes.empty()) {
    return not_fitted(
        "no step uploads anything (name what each uploads with --artifact-bytes LABEL=SIZE), so "
        "there is no shared service to fit");
  }
  if (pipeline == nullptr) {
    return Error{"fitting shared services replays the levels in the simulator: name the pipeline"};
  }
  // The shortest time each uploading step took at the lightest level bounds
  // its upload from above, so the bandwidth from below.
  double lowest = 0;
  for (const auto& [label, bytes] : inputs.artifact_bytes) {
    double shortest = std::numeric_limits<double>::infinity();
    for (const auto& s : lightest->samples.steps) {
      if (s.label == label) shortest = std::min(shortest, s.seconds);
    }
    if (!std::isfinite(shortest)) {
      std::vector<std::string> known;
      for (const auto& [task, l] : label_of) known.push_back(l);
      std::sort(known.begin(), known.end());
      known.erase(std::unique(known.begin(), known.end()), known.end());
      return Error{
          fmt::format("--artifact-bytes: no measured step has executor label '{}' (the "
                      "pipeline's labels: {})",
                      label, fmt::join(known, ", "))};
    }
    if (bytes > 0) lowest = std::max(lowest, static_cast<double>(bytes) / std::max(shortest, 1e-3));
  }
  if (lowest <= 0) return not_fitted("every --artifact-bytes size is 0: nothing is uploaded");
  if (heaviest->fit.runs_in_flight < 1.5 * lightest->fit.runs_in_flight) {
    return not_fitted(fmt::format(
        "the levels' loads are too close ({:.2f} and {:.2f} runs in flight on average) to tell "
        "a step's own time from its wait for the store: measure one with more runs in flight",
        lightest->fit.runs_in_flight, heaviest->fit.runs_in_flight));
  }

  const LabelMedians measured_medians = MediansOf(lightest->samples.steps);
  // If no uploading step took longer at the heaviest level than at the
  // lightest, no level waited for the store and any bandwidth above the
  // bound fits them all alike.
  const LabelMedians heaviest_medians = MediansOf(heaviest->samples.steps);
  double growth = 0;
  for (const auto& [label, bytes] : inputs.artifact_bytes) {
    auto h = heaviest_medians.find(label);
    if (h == heaviest_medians.end()) continue;
    growth = std::max(growth, h->second / std::max(measured_medians.at(label), 1e-6) - 1);
  }
  if (growth < 0.05) {
    return not_fitted(fmt::format(
        "no level waited for the store: the uploading steps' median time grew {:.1f}% from the "
        "lightest level ({}) to the heaviest ({}), so any bandwidth above {}/s fits them alike: "
        "measure a level whose uploads overlap",
        growth * 100, lightest->source, heaviest->source, FormatBytes(lowest)));
  }
  const std::vector<Level> lightest_only = {*lightest};
  // For one bandwidth: the step models whose simulation reproduces the
  // lightest level's median step times. A step's upload there is not its
  // size over the bandwidth alone, since a run's parallel steps upload at
  // once and share the link: start from that, then correct each label's
  // upload time by what the simulation over- or undershoots.
  auto models_for = [&](double bandwidth) -> Result<Calibration> {
    const ArtifactStoreSpec store{bandwidth, inputs.fifo};
    std::map<std::string, double> upload;
    for (const auto& [label, bytes] : inputs.artifact_bytes) {
      upload[label] = static_cast<double>(bytes) / bandwidth;
    }
    Calibration c = Fit(lightest->samples, inputs.artifact_bytes, upload);
    for (int i = 0; i < 6; ++i) {
      std::vector<LabelMedians> simulated;
      auto fits = Predict(lightest_only, pipeline, inputs.cluster, c.models, store, &simulated);
      if (!fits.ok()) return fits.error();
      double worst = 0;
      for (auto& [label, seconds] : upload) {
        double over = simulated[0][label] - measured_medians.at(label);
        seconds += over;
        worst = std::max(worst, std::abs(over) / std::max(measured_medians.at(label), 1e-3));
      }
      c = Fit(lightest->samples, inputs.artifact_bytes, upload);
      if (worst < 1e-4) break;
    }
    return c;
  };
  auto evaluate = [&](double bandwidth) -> Result<std::pair<double, Calibration>> {
    auto models = models_for(bandwidth);
    if (!models.ok()) return models.error();
    Calibration c = std::move(*models);
    auto fits = Predict(levels, pipeline, inputs.cluster, c.models, {bandwidth, inputs.fifo});
    if (!fits.ok()) return fits.error();
    double cost = SquaredLogError(*fits);
    c.shared.levels = std::move(*fits);
    return std::pair{cost, std::move(c)};
  };
  // A grid over four decades of log bandwidth, then golden-section search
  // between the best point's neighbours.
  constexpr int kGrid = 48;
  const double log_lo = std::log(lowest * 1.0001), log_hi = std::log(lowest * 1e4);
  std::vector<double> grid_cost(kGrid + 1);
  int best = 0;
  for (int i = 0; i <= kGrid; ++i) {
    auto e = evaluate(std::exp(log_lo + (log_hi - log_lo) * i / kGrid));
    if (!e.ok()) return e.error();
    grid_cost[i] = e->first;
    if (grid_cost[i] < grid_cost[best]) best = i;
  }
  double a = log_lo + (log_hi - log_lo) * std::max(best - 1, 0) / kGrid;
  double b = log_lo + (log_hi - log_lo) * std::min(best + 1, kGrid) / kGrid;
  const double golden = (std::sqrt(5.0) - 1) / 2;
  for (int i = 0; i < 30; ++i) {
    double x1 = b - golden * (b - a), x2 = a + golden * (b - a);
    auto e1 = evaluate(std::exp(x1)), e2 = evaluate(std::exp(x2));
    if (!e1.ok()) return e1.error();
    if (!e2.ok()) return e2.error();
    if (e1->first <= e2->first) {
      b = x2;
    } else {
      a = x1;
    }
  }
  auto fitted = evaluate(std::exp((a + b) / 2));
  if (!fitted.ok()) return fitted.error();
  Calibration c = std::move(fitted->second);
  c.shared.fitted = true;
  c.shared.artifact_store = {std::exp((a + b) / 2), inputs.fifo};
  auto without = Predict(levels, pipeline, inputs.cluster, plain.models, {});
  if (!without.ok()) return without.error();
  c.shared.without = std::move(*without);
  return c;
}

}  // namespace

Result<Calibration> CalibrateLevels(const std::vector<MeasuredLevel>& measured,
                                    std::shared_ptr<const ir::PipelineSpec> pipeline,
                                    const SharedServiceInputs& inputs) {
  auto c = CalibrateStore(measured, std::move(pipeline), inputs);
  if (c.ok() && measured.size() > 1) FitApi(measured, c->shared);
  return c;
}

Result<Calibration> CalibrateFile(const std::filesystem::path& path,
                                  const ir::PipelineSpec* pipeline) {
  auto runs = results::LoadRunRecords(path);
  if (!runs.ok()) return runs.error();
  auto c = Calibrate(*runs, pipeline);
  if (!c.ok()) {
    std::filesystem::path file = std::filesystem::is_directory(path) ? path / "results.json" : path;
    return Error{file.string() + ": " + c.error().message};
  }
  return c;
}

namespace {

std::string ExactSpec(const exec::DurationDist& d) {
  using Kind = exec::DurationDist::Kind;
  switch (d.kind) {
    case Kind::kConstant:
      return "constant:" + FormatDurationExact(d.a);
    case Kind::kUniform:
      return fmt::format("uniform:{}:{}", FormatDurationExact(d.a), FormatDurationExact(d.b));
    case Kind::kLognormal:
      return fmt::format("lognormal:{}:{}", FormatDurationExact(d.a), d.sigma);
    case Kind::kExponential:
      return "exponential:" + FormatDurationExact(d.a);
  }
  return d.ToString();
}

}  // namespace

nlohmann::json ToJson(const Calibration& c) {
  // A file is read back by `simulate`: every duration as exact as the
  // clock holds it (the console's rounded forms would move the very rows
  // the fit was made to).
  auto model = [](const StepModel& m) {
    nlohmann::json j{{"duration", ExactSpec(m.duration)},
                     {"overhead", FormatDurationExact(m.overhead)}};
    if (m.artifact_bytes > 0) j["artifactBytes"] = m.artifact_bytes;
    return j;
  };
  auto levels = [](const std::vector<LevelFit>& fits) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& f : fits) {
      auto metric = [](double measured, double predicted) {
        return nlohmann::json{{"measured_seconds", measured},
                              {"predicted_seconds", predicted},
                              {"error", measured > 0 ? (predicted - measured) / measured : 0.0}};
      };
      out.push_back({{"source", f.source},
                     {"runs", f.runs},
                     {"runs_in_flight", f.runs_in_flight},
                     {"makespan", metric(f.measured_makespan, f.predicted_makespan)},
                     {"p95_run", metric(f.measured_p95, f.predicted_p95)}});
    }
    return out;
  };
  nlohmann::json j;
  j["default"] = model(c.models.fallback);
  j["steps"] = nlohmann::json::object();
  for (const auto& [label, m] : c.models.by_label) j["steps"][label] = model(m);
  j["source"] = {{"runs", c.runs}, {"samples", c.samples}};
  if (c.shared.api_fitted) {
    j["api"] = {{"runCreate", FormatDurationExact(c.shared.api.run_create)},
                {"workers", c.shared.api.workers}};
    nlohmann::json calls = nlohmann::json::array();
    for (const auto& l : c.shared.api_levels) {
      calls.push_back({{"source", l.source},
                       {"calls", l.calls},
                       {"measured_mean_seconds", l.measured_mean},
                       {"predicted_mean_seconds", l.predicted_mean}});
    }
    j["fit"]["api_levels"] = calls;
  } else if (!c.shared.api_why_not.empty()) {
    j["fit"]["api"] = "not fitted: " + c.shared.api_why_not;
  }
  if (c.shared.fitted) {
    j["artifactStore"] = {{"bandwidth", std::llround(c.shared.artifact_store.bandwidth)},
                          {"sharing", c.shared.artifact_store.fifo ? "fifo" : "fair"}};
    j["fit"]["levels"] = levels(c.shared.levels);
    j["fit"]["without_shared_services"] = levels(c.shared.without);
  } else if (!c.shared.why_not.empty()) {
    j["fit"]["shared_services"] = "not fitted: " + c.shared.why_not;
  }
  if (c.summary) {
    j["fit"]["summary"] = ToJson(*c.summary, c.summary_levels);
    if (c.runs == 0) {
      j["note"] =
          "fitted by kfpbench calibrate to summary levels: each step constant, its share of the "
          "step time and the overhead those with which the simulator best reproduces the fitted "
          "levels (fit.summary: every level's error and what the data cannot tell apart)";
      return j;
    }
  }
  j["note"] =
      "fitted by kfpbench calibrate: step durations lognormal by log-moments (constant when "
      "sigma < 0.02); overhead = median gap between a task becoming ready and starting; with "
      "two or more load levels, the artifact store's bandwidth fitted so that the simulator "
      "reproduces every level's makespan and p95 run duration, steps timed less their upload";
  return j;
}

}  // namespace kfpbench::sim
