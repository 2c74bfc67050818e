#include "capture/samples.h"

#include "capture/records.h"
#include "util/json_reader.h"

#include <algorithm>
#include <fstream>

#include <fmt/format.h>

namespace kfpbench::capture {
namespace {

using nlohmann::json;

std::optional<WallTime> TimeOf(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return std::nullopt;
  auto t = ParseRfc3339(it->get<std::string>());
  if (!t.ok()) return std::nullopt;
  return *t;
}

}  // namespace

void Samples::AddRun(const json& run) {
  auto created = TimeOf(run, "created_at");
  if (!created) return;
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
  const double offset = std::max(0.0, ToSeconds(*created - *first));
  arrivals_csv += fmt::format("{},{:.6f},{},{},{}\n", FormatRfc3339(*created), offset, key,
                              run.value("run_id", ""), state);
  mix_csv += fmt::format("{:.6f},{}\n", offset, key);
  json kept = run.value("parameters_hashed", true) ? json::object() : run["parameters"];
  v.arrivals.emplace_back(offset, std::move(kept));
  RunSpan span{offset, std::nullopt, state == "FAILED"};
  const bool is_censored = run.value("censored", false);
  if (is_censored) {
    ++censored;
    ++v.censored;
  } else if (auto finished = TimeOf(run, "finished_at")) {
    double s = ToSeconds(*finished - *created);
    if (s >= 0) {
      run_seconds.push_back(s);
      v.run_seconds.push_back(s);
      span.finished = offset + s;
      if (!last_finished || *finished > *last_finished) last_finished = *finished;
    } else {
      ++negative;
    }
  }
  spans.push_back(span);
  for (const auto& task : run.value("tasks", json::array())) AddTask(task, key, is_censored);
}

void Samples::AddTask(const json& task, const std::string& version, bool run_censored) {
  ++tasks;
  StepSamples* s = nullptr;
  if (task.contains("executor")) {
    s = &steps[task["executor"].get<std::string>()];
  } else if (run_censored || version.empty()) {
    return;
  } else {
    // Only a run whose spec is missing has container tasks without a label;
    // DAG and driver tasks (no start of their own) are left out.
    if (!task.contains("start_time") && !task.value("cached", false)) return;
    s = &unlabelled[version + "/" + task.value("name", "")];
  }
  const std::string task_state = task.value("state", "");
  const int attempts = task.value("attempts", 0);
  s->attempts += attempts;
  if (attempts > 1) ++s->retried;
  if (task.value("cached", false)) {
    ++s->cached;
    return;
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
    double o = ToSeconds(*start - *create);
    o >= 0 ? s->overheads.push_back(o) : void(++negative);
  }
  if (task_state == "SUCCEEDED" && start && end) {
    double d = ToSeconds(*end - *start);
    d >= 0 ? s->durations.push_back(d) : void(++negative);
  }
}

Status ReadSamples(const std::filesystem::path& runs_file, Samples& samples) {
  // Never a device or a FIFO (read without end, or waited on forever).
  std::error_code ec;
  if (!std::filesystem::is_regular_file(runs_file, ec)) {
    return Error{fmt::format("cannot read {}: not a regular file", runs_file.string())};
  }
  std::ifstream in(runs_file);
  if (!in) return Error{fmt::format("cannot read {}", runs_file.string())};
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    auto bad = [&](const std::string& why) {
      return Error{fmt::format("{}: line {}: {}", runs_file.filename().string(), n, why)};
    };
    auto run = ParseJson(line);
    if (!run.is_object()) return bad("not a JSON object");
    // The key names files and YAML keys (records.h): a folder edited by
    // hand may not make it a path.
    auto version = run.find("pipeline_version");
    if (version == run.end() || !version->is_string() ||
        !IsSafeKey(version->get_ref<const std::string&>())) {
      return bad("pipeline_version is not a key capture writes (letters, digits, '.', '_', '-')");
    }
    try {
      samples.AddRun(run);
    } catch (const nlohmann::json::exception& e) {
      return bad(fmt::format("a field of the wrong type ({})", e.what()));
    }
  }
  return Ok();
}

}  // namespace kfpbench::capture
