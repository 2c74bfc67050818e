#include "capture/derive.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <string>

#include <fmt/format.h>

#include "capture/capture.h"
#include "capture/fit.h"
#include "util/files.h"

namespace kfpbench::capture {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct StepSamples {
  std::vector<double> durations;  // SUCCEEDED executions, start -> end
  std::vector<double> overheads;  // create -> start, every execution
  int64_t succeeded = 0, failed = 0, cached = 0, not_run = 0, other = 0;
  int64_t attempts = 0, retried = 0;
};

struct VersionSamples {
  std::string pipeline_name;
  int64_t runs = 0, censored = 0;
  std::map<std::string, int64_t> states;
  std::vector<double> run_seconds;                // created -> finished, final runs
  std::vector<std::pair<double, json>> arrivals;  // offset, parameters kept as given
};

std::optional<WallTime> TimeOf(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return std::nullopt;
  auto t = ParseRfc3339(it->get<std::string>());
  if (!t.ok()) return std::nullopt;
  return *t;
}

double Seconds(WallTime from, WallTime to) {
  return std::chrono::duration<double>(to - from).count();
}

// "lognormal:<median>:<sigma>" with the median in microseconds, the form
// exec::ParseDurationDist reads.
std::string DurationSpec(const LognormalFit& fit) {
  return fmt::format("lognormal:{}us:{:.4f}", std::llround(fit.median * 1e6), fit.sigma);
}

std::string MicrosText(double seconds) {
  return fmt::format("{}us", std::llround(std::max(0.0, seconds) * 1e6));
}

double Share(int64_t part, int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

std::string CsvCell(const json& v) {
  std::string text = v.is_string() ? v.get<std::string>() : v.dump();
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  quoted += '"';
  return quoted;
}

json StepModel(const StepSamples& s) {
  const int64_t executed = s.succeeded + s.failed;
  json out = {{"succeeded", s.succeeded},
              {"failed", s.failed},
              {"cached", s.cached},
              {"not_run", s.not_run},
              {"failure_rate", Share(s.failed, executed)},
              {"cache_hit_rate", Share(s.cached, s.cached + executed)},
              {"attempts", s.attempts},
              {"retried_tasks", s.retried},
              {"duration_seconds", Quantiles(s.durations)},
              {"overhead_seconds", Quantiles(s.overheads)}};
  LognormalFit fit = FitLognormal(s.durations);
  if (fit.n > 0) {
    out["lognormal"] = {{"median_seconds", fit.median},
                        {"sigma", fit.sigma},
                        {"ks_d", fit.ks_d},
                        {"ks_d_5pct", 0.886 / std::sqrt(static_cast<double>(fit.n))},
                        {"n", fit.n},
                        {"spec", DurationSpec(fit)}};
  }
  return out;
}

}  // namespace

json RateByHourOfWeek(const std::vector<WallTime>& arrivals, WallTime since, WallTime until) {
  using std::chrono::hours;
  // 1970-01-01 was a Thursday: hour 0 of the epoch is hour 72 of its week.
  auto hour_of_week = [](WallTime t) {
    const int64_t h = std::chrono::floor<hours>(t).time_since_epoch() / hours(1);
    return static_cast<int>(((h + 72) % 168 + 168) % 168);
  };
  std::vector<double> exposure(168, 0.0);
  for (WallTime t = since; t < until;) {
    WallTime next = std::min<WallTime>(std::chrono::floor<hours>(t) + hours(1), until);
    exposure[hour_of_week(t)] += Seconds(t, next) / 3600.0;
    t = next;
  }
  std::vector<int64_t> counts(168, 0);
  for (WallTime a : arrivals) {
    if (a >= since && a < until) ++counts[hour_of_week(a)];
  }
  json rates = json::array();
  for (int h = 0; h < 168; ++h) {
    rates.push_back(exposure[h] > 0 ? json(static_cast<double>(counts[h]) / exposure[h]) : json());
  }
  return rates;
}

json FolderFiles(const fs::path& folder) {
  json files = json::array();
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(folder, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    std::string rel = fs::relative(it->path(), folder).string();
    if (rel == kCheckpointFile || rel == kManifestFile || rel.find(".tmp") != std::string::npos)
      continue;
    files.push_back(rel);
  }
  std::sort(files.begin(), files.end());
  return files;
}

Status Derive(const fs::path& folder, WallTime since, WallTime until) {
  std::ifstream in(folder / kRunsFile);
  if (!in) return Error{fmt::format("cannot read {}", (folder / kRunsFile).string())};
  std::map<std::string, StepSamples> steps;       // executor label
  std::map<std::string, StepSamples> unlabelled;  // version/task, spec missing
  std::map<std::string, VersionSamples> versions;
  std::map<std::string, int64_t> run_states;
  std::vector<WallTime> arrivals;
  std::vector<double> run_seconds;
  std::string arrivals_csv = "created_at,offset_seconds,pipeline_version,run_id,state\n";
  std::optional<WallTime> first, last_finished;
  int64_t runs = 0, censored = 0, tasks = 0, negative = 0;
  std::string line;
  while (std::getline(in, line)) {
    auto run = json::parse(line, nullptr, false);
    if (run.is_discarded()) return Error{fmt::format("{}: a line is not JSON", kRunsFile)};
    auto created = TimeOf(run, "created_at");
    if (!created) continue;
    ++runs;
    if (!first) first = *created;
    const std::string key = run.value("pipeline_version", "");
    const std::string state = run.value("state", "");
    VersionSamples& v = versions[key];
    ++v.runs;
    ++v.states[state];
    ++run_states[state];
    arrivals.push_back(*created);
    // Clock skew between runs can put one before the first: it starts at 0.
    const double offset = std::max(0.0, Seconds(*first, *created));
    arrivals_csv += fmt::format("{},{:.6f},{},{},{}\n", FormatRfc3339(*created), offset, key,
                                run.value("run_id", ""), state);
    json kept = run.value("parameters_hashed", true) ? json::object() : run["parameters"];
    v.arrivals.emplace_back(offset, std::move(kept));
    if (run.value("censored", false)) {
      ++censored;
      ++v.censored;
    } else if (auto finished = TimeOf(run, "finished_at")) {
      double s = Seconds(*created, *finished);
      if (s >= 0) {
        run_seconds.push_back(s);
        v.run_seconds.push_back(s);
        if (!last_finished || *finished > *last_finished) last_finished = *finished;
      } else {
        ++negative;
      }
    }
    for (const auto& task : run.value("tasks", json::array())) {
      ++tasks;
      StepSamples* s = nullptr;
      if (task.contains("executor")) {
        s = &steps[task["executor"].get<std::string>()];
      } else if (run.value("censored", false) || key.empty()) {
        continue;
      } else {
        // Only a run whose spec is missing has container tasks without a
        // label; DAG and driver tasks (no start of their own) are left out.
        if (!task.contains("start_time") && !task.value("cached", false)) continue;
        s = &unlabelled[key + "/" + task.value("name", "")];
      }
      const std::string task_state = task.value("state", "");
      const int attempts = task.value("attempts", 0);
      s->attempts += attempts;
      if (attempts > 1) ++s->retried;
      if (task.value("cached", false)) {
        ++s->cached;
        continue;
      }
      auto create = TimeOf(task, "create_time");
      auto start = TimeOf(task, "start_time");
      auto end = TimeOf(task, "end_time");
      if (task_state == "SUCCEEDED") {
        ++s->succeeded;
      } else if (task_state == "FAILED") {
        ++s->failed;
      } else if (task_state == "SKIPPED") {
        ++s->not_run;
      } else {
        ++s->other;
      }
      if (create && start) {
        double o = Seconds(*create, *start);
        o >= 0 ? s->overheads.push_back(o) : void(++negative);
      }
      if (task_state == "SUCCEEDED" && start && end) {
        double d = Seconds(*start, *end);
        d >= 0 ? s->durations.push_back(d) : void(++negative);
      }
    }
  }

  // Version files: names for the mix, specs for the simulator workloads.
  json mix = json::array();
  json replay = json::array();
  json calibration_steps = json::object();
  for (auto& [key, v] : versions) {
    json file = json::parse(ReadSmallFile(folder / kVersionsDir / (key + ".json")), nullptr, false);
    const bool has_spec = !file.is_discarded() && file.contains("spec") &&
                          !file["spec"].is_null() && !file.contains("spec_error");
    if (!file.is_discarded()) v.pipeline_name = file.value("pipeline_name", file.value("name", ""));
    json entry = {{"pipeline_version", key},
                  {"pipeline_name", v.pipeline_name},
                  {"runs", v.runs},
                  {"share", Share(v.runs, runs)},
                  {"censored", v.censored},
                  {"states", v.states},
                  {"run_seconds", Quantiles(v.run_seconds)},
                  {"spec_missing", !has_spec}};
    if (has_spec) {
      const fs::path dir = folder / kSimulateDir / key;
      std::error_code ec;
      fs::create_directories(dir, ec);
      if (ec) return Error{fmt::format("cannot create {}: {}", dir.string(), ec.message())};
      if (Status s = WriteFileAtomically(dir / "pipeline.json", file["spec"].dump(1) + "\n");
          !s.ok()) {
        return s;
      }
      std::vector<std::string> names;
      for (const auto& [offset, params] : v.arrivals) {
        for (const auto& [name, value] : params.items()) {
          if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
        }
      }
      std::string csv = "offset";
      for (const auto& n : names) {
        csv += ',';
        csv += n;
      }
      csv += "\n";
      for (const auto& [offset, params] : v.arrivals) {
        csv += fmt::format("{:.6f}", offset);
        for (const auto& n : names) {
          csv += ',';
          if (params.contains(n)) csv += CsvCell(params[n]);
        }
        csv += "\n";
      }
      if (Status s = WriteFileAtomically(dir / "arrivals.csv", csv); !s.ok()) return s;
      std::string yaml = fmt::format(
          "# {} runs of {} ({}) captured between {} and {}, at their recorded offsets\n"
          "# from the capture's first run. Step models: ../../{}.\n"
          "pipeline: pipeline.json\n"
          "arrivals:\n  kind: csv\n  file: arrivals.csv\n"
          "calibration: ../../{}\n",
          v.runs, v.pipeline_name, key, FormatRfc3339(since), FormatRfc3339(until),
          kCalibrationFile, kCalibrationFile);
      if (Status s = WriteFileAtomically(dir / "workload.yaml", yaml); !s.ok()) return s;
      entry["simulate"] = fmt::format("{}/{}/workload.yaml", kSimulateDir, key);
      // Every version's offsets count from the capture's first run, so the
      // scenarios, all starting at 0, replay the runs at their recorded times.
      replay.push_back(
          {{"mode", "ORCHESTRATE"},
           {"startTime", 0},
           {"csv", fmt::format("{}/{}/arrivals.csv", kSimulateDir, key)},
           {"pipelineFileName", fmt::format("{}/{}/pipeline.json", kSimulateDir, key)}});
    }
    mix.push_back(std::move(entry));
  }

  json step_models = json::object();
  json stub_durations = json::array();
  for (const auto& [label, s] : steps) {
    step_models[label] = StepModel(s);
    LognormalFit fit = FitLognormal(s.durations);
    if (fit.n == 0) continue;
    stub_durations.push_back(label + "=" + DurationSpec(fit));
    json cal = {{"duration", DurationSpec(fit)}};
    if (!s.overheads.empty()) {
      cal["overhead"] = MicrosText(Quantiles(s.overheads)["p50"].get<double>());
    }
    calibration_steps[label] = std::move(cal);
  }
  json unlabelled_models = json::object();
  for (const auto& [name, s] : unlabelled) unlabelled_models[name] = StepModel(s);

  const double window_seconds = Seconds(since, until);
  json workload = {{"format", 1},
                   {"window", {{"since", FormatRfc3339(since)}, {"until", FormatRfc3339(until)}}},
                   {"runs", runs},
                   {"tasks", tasks},
                   {"censored", censored},
                   {"negative_intervals", negative},
                   {"run_states", run_states},
                   {"run_seconds", Quantiles(run_seconds)},
                   {"mix", std::move(mix)},
                   {"arrivals",
                    {{"file", kArrivalsFile},
                     {"mean_rate_per_second", window_seconds > 0 ? runs / window_seconds : 0.0},
                     {"rate_per_hour_by_hour_of_week", RateByHourOfWeek(arrivals, since, until)}}},
                   {"steps", std::move(step_models)},
                   {"tasks_without_spec", std::move(unlabelled_models)},
                   {"stub_durations", std::move(stub_durations)}};
  if (first) workload["arrivals"]["first"] = FormatRfc3339(*first);
  if (first && last_finished) workload["makespan_seconds"] = Seconds(*first, *last_finished);
  json calibration = {
      {"source", "kfpbench capture"},
      {"note", fmt::format("step models fitted to {} runs created between {} and {}", runs,
                           FormatRfc3339(since), FormatRfc3339(until))},
      {"steps", std::move(calibration_steps)}};
  if (Status s = WriteFileAtomically(folder / kArrivalsFile, arrivals_csv); !s.ok()) return s;
  if (!replay.empty()) {
    if (Status s = WriteFileAtomically(folder / kReplayFile, replay.dump(1) + "\n"); !s.ok()) {
      return s;
    }
  }
  if (Status s = WriteFileAtomically(folder / kCalibrationFile, calibration.dump(1) + "\n");
      !s.ok()) {
    return s;
  }
  return WriteFileAtomically(folder / kWorkloadFile, workload.dump(1) + "\n");
}

}  // namespace kfpbench::capture
