#include "sim/calibrate.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "results/results_json.h"

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

Result<Calibration> Calibrate(const std::vector<results::RunRecord>& runs,
                              const ir::PipelineSpec* pipeline) {
  std::map<std::string, std::string> label_of;  // task name -> executor label
  if (pipeline != nullptr && pipeline->root.dag) {
    for (const auto& [name, task] : pipeline->root.dag->tasks) {
      auto comp = pipeline->components.find(task.component_ref);
      if (comp != pipeline->components.end() && !comp->second.executor_label.empty()) {
        label_of[name] = comp->second.executor_label;
      }
    }
  }
  std::map<std::string, std::vector<double>> durations;
  std::vector<double> gaps;
  Calibration c;
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
    ++c.runs;
    for (const auto& s : spans) {
      double secs = ToSeconds(s.end - s.start);
      durations["default"].push_back(secs);
      if (auto it = label_of.find(s.name); it != label_of.end()) {
        durations[it->second].push_back(secs);
      }
      // Ready ~ the latest end, before this start, of the run's other tasks
      // (or the run's creation): the gap is the engine + launch overhead.
      WallTime ready = run.created;
      for (const auto& o : spans) {
        if (o.end <= s.start && o.end > ready) ready = o.end;
      }
      gaps.push_back(std::max(0.0, ToSeconds(s.start - ready)));
    }
  }
  if (c.runs == 0) return Error{"results: no succeeded run with step times to calibrate from"};
  c.overhead_p50 = FromSeconds(Median(gaps));
  for (const auto& [label, secs] : durations) {
    StepModel m{FitDuration(secs), c.overhead_p50};
    c.samples[label] = static_cast<int64_t>(secs.size());
    if (label == "default") {
      c.models.fallback = m;
    } else {
      c.models.by_label[label] = m;
    }
  }
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

nlohmann::json ToJson(const Calibration& c) {
  auto model = [](const StepModel& m) {
    return nlohmann::json{{"duration", m.duration.ToString()},
                          {"overhead", FormatDuration(m.overhead)}};
  };
  nlohmann::json j;
  j["default"] = model(c.models.fallback);
  j["steps"] = nlohmann::json::object();
  for (const auto& [label, m] : c.models.by_label) j["steps"][label] = model(m);
  j["source"] = {{"runs", c.runs}, {"samples", c.samples}};
  j["note"] =
      "fitted by kfpbench calibrate: step durations lognormal by log-moments (constant when "
      "sigma < 0.02); overhead = median gap between a task becoming ready and starting";
  return j;
}

}  // namespace kfpbench::sim
