#include "results/results_json.h"

#include <charconv>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>

namespace kfpbench::results {
namespace {

using nlohmann::json;

Error At(const std::string& path, const std::string& why) {
  return Error{path.empty() ? why : path + ": " + why};
}

// Each getter accepts a missing field as its zero value only where
// ResultsToJson may legitimately omit it; type mismatches are always errors.
Result<std::string> String(const json& j, const char* key, const std::string& path,
                           bool required = false) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    if (required) return At(path, fmt::format("missing field '{}'", key));
    return std::string();
  }
  if (!it->is_string()) return At(path + "." + key, "must be a string");
  return it->get<std::string>();
}

Result<WallTime> Time(const json& j, const char* key, const std::string& path) {
  auto text = String(j, key, path);
  if (!text.ok()) return text.error();
  if (text->empty()) return WallTime{};  // "never happened", see ResultsToJson
  auto t = ParseRfc3339(*text);
  if (!t.ok()) return At(path + "." + key, t.error().message);
  return *t;
}

template <typename T>
Result<T> Number(const json& j, const char* key, const std::string& path, bool required) {
  auto it = j.find(key);
  if (it == j.end()) {
    if (required) return At(path, fmt::format("missing field '{}'", key));
    return T{};
  }
  if constexpr (std::is_unsigned_v<T>) {
    if (!it->is_number_unsigned()) return At(path + "." + key, "must be a non-negative integer");
  } else if constexpr (std::is_integral_v<T>) {
    if (!it->is_number_integer()) return At(path + "." + key, "must be an integer");
  } else {
    if (!it->is_number()) return At(path + "." + key, "must be a number");
  }
  return it->get<T>();
}

Result<RuntimeState> State(const json& j, const char* key, const std::string& path) {
  auto name = String(j, key, path);
  if (!name.ok()) return name.error();
  if (name->empty()) return RuntimeState::kUnspecified;
  auto s = ParseRuntimeState(*name);
  if (!s) return At(path + "." + key, fmt::format("unknown state '{}'", *name));
  return *s;
}

Result<std::vector<std::string>> Strings(const json& j, const char* key, const std::string& path) {
  std::vector<std::string> out;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return out;
  if (!it->is_array()) return At(path + key, "must be an array of strings");
  for (const auto& s : *it) {
    if (!s.is_string()) return At(path + key, "must be an array of strings");
    out.push_back(s.get<std::string>());
  }
  return out;
}

#define KFPBENCH_ASSIGN(lhs, expr)   \
  do {                               \
    auto _r = (expr);                \
    if (!_r.ok()) return _r.error(); \
    lhs = std::move(_r).value();     \
  } while (0)

Result<metrics::OperationStats> Operation(const json& j, const std::string& path) {
  if (!j.is_object()) return At(path, "must be an object");
  metrics::OperationStats op;
  auto h = j.find("histogram");
  if (h == j.end()) return At(path, "missing field 'histogram'");
  auto hist = metrics::Histogram::FromJson(*h);
  if (!hist.ok()) return At(path + ".histogram", hist.error().message);
  op.latency_us = std::move(*hist);
  KFPBENCH_ASSIGN(op.errors, Number<uint64_t>(j, "errors", path, true));
  if (auto it = j.find("by_status"); it != j.end()) {
    if (!it->is_object()) return At(path + ".by_status", "must be an object");
    for (const auto& [status, n] : it->items()) {
      int code = 0;
      auto [end, ec] = std::from_chars(status.data(), status.data() + status.size(), code);
      if (ec != std::errc() || end != status.data() + status.size() || !n.is_number_unsigned()) {
        return At(path + ".by_status." + status, "must map an HTTP status to a count");
      }
      op.by_status[code] = n.get<uint64_t>();
    }
  }
  if (auto it = j.find("error_messages"); it != j.end()) {  // since 0.1: optional
    if (!it->is_object()) return At(path + ".error_messages", "must be an object");
    for (const auto& [message, n] : it->items()) {
      if (!n.is_number_unsigned()) {
        return At(path + ".error_messages", "must map a message to a count");
      }
      op.error_messages[message] = n.get<uint64_t>();
    }
  }
  if (auto it = j.find("timeseries"); it != j.end()) {
    if (!it->is_array()) return At(path + ".timeseries", "must be an array");
    for (size_t i = 0; i < it->size(); ++i) {
      const json& w = (*it)[i];
      std::string wp = fmt::format("{}.timeseries[{}]", path, i);
      if (!w.is_object()) return At(wp, "must be an object");
      metrics::Window win;
      KFPBENCH_ASSIGN(win.second, Number<int64_t>(w, "t", wp, true));
      KFPBENCH_ASSIGN(win.count, Number<uint64_t>(w, "count", wp, true));
      KFPBENCH_ASSIGN(win.errors, Number<uint64_t>(w, "errors", wp, false));
      KFPBENCH_ASSIGN(win.p50_us, Number<int64_t>(w, "p50_us", wp, false));
      KFPBENCH_ASSIGN(win.p95_us, Number<int64_t>(w, "p95_us", wp, false));
      KFPBENCH_ASSIGN(win.p99_us, Number<int64_t>(w, "p99_us", wp, false));
      KFPBENCH_ASSIGN(win.max_us, Number<int64_t>(w, "max_us", wp, false));
      op.windows.push_back(win);
    }
  }
  return op;
}

std::optional<double> OptionalNumber(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

// {"peak": x, "p95": y}, or the flat "<name>_peak" and "<name>_p95" keys of
// figures assembled by hand; p95 defaults to the peak.
std::optional<TaskTiming::Usage> Usage(const json& task, const std::string& name) {
  auto resources = task.find("resources");
  if (resources != task.end() && resources->is_object()) {
    auto it = resources->find(name);
    if (it != resources->end() && it->is_object()) {
      if (auto peak = OptionalNumber(*it, "peak")) {
        return TaskTiming::Usage{*peak, OptionalNumber(*it, "p95").value_or(*peak)};
      }
    }
  }
  auto peak = OptionalNumber(task, (name + "_peak").c_str());
  if (!peak) return std::nullopt;
  return TaskTiming::Usage{*peak, OptionalNumber(task, (name + "_p95").c_str()).value_or(*peak)};
}

std::vector<double> Samples(const json& task, const char* key) {
  std::vector<double> out;
  auto it = task.find(key);
  if (it == task.end() || !it->is_array()) return out;
  for (const auto& v : *it) {
    if (v.is_number()) out.push_back(v.get<double>());
  }
  return out;
}

// Every shape of per-step resource figures docs/CAPACITY.md accepts.
void ReadUsage(const json& t, TaskTiming& task) {
  task.cpu_cores = Usage(t, "cpu_cores");
  task.memory_bytes = Usage(t, "memory_bytes");
  task.cpu_cores_samples = Samples(t, "cpu_cores_samples");
  task.memory_bytes_samples = Samples(t, "memory_bytes_samples");
  if (auto r = t.find("resources"); r != t.end() && r->is_object()) {
    task.resource_samples = static_cast<int>(OptionalNumber(*r, "samples").value_or(0));
  }
}

Result<RunRecord> Run(const json& j, const std::string& path) {
  if (!j.is_object()) return At(path, "must be an object");
  RunRecord r;
  KFPBENCH_ASSIGN(r.scenario, Number<size_t>(j, "scenario", path, false));
  KFPBENCH_ASSIGN(r.run_id, String(j, "run_id", path));
  KFPBENCH_ASSIGN(r.state, State(j, "state", path));
  KFPBENCH_ASSIGN(r.error, String(j, "error", path));
  KFPBENCH_ASSIGN(r.intended, Time(j, "intended_at", path));
  KFPBENCH_ASSIGN(r.recurring_run_id, String(j, "recurring_run_id", path));
  KFPBENCH_ASSIGN(r.scheduled, Time(j, "scheduled_at", path));
  KFPBENCH_ASSIGN(r.submitted, Time(j, "submitted_at", path));
  KFPBENCH_ASSIGN(r.created, Time(j, "created_at", path));
  KFPBENCH_ASSIGN(r.finished, Time(j, "finished_at", path));
  KFPBENCH_ASSIGN(r.observed, Time(j, "observed_at", path));
  if (auto it = j.find("tasks"); it != j.end()) {
    if (!it->is_array()) return At(path + ".tasks", "must be an array");
    for (size_t i = 0; i < it->size(); ++i) {
      const json& t = (*it)[i];
      std::string tp = fmt::format("{}.tasks[{}]", path, i);
      if (!t.is_object()) return At(tp, "must be an object");
      TaskTiming task;
      KFPBENCH_ASSIGN(task.name, String(t, "name", tp));
      KFPBENCH_ASSIGN(task.state, State(t, "state", tp));
      KFPBENCH_ASSIGN(task.created, Time(t, "created_at", tp));
      KFPBENCH_ASSIGN(task.started, Time(t, "started_at", tp));
      KFPBENCH_ASSIGN(task.finished, Time(t, "finished_at", tp));
      if (auto d = t.find("dag"); d != t.end()) {
        if (!d->is_boolean()) return At(tp + ".dag", "must be true or false");
        task.dag = d->get<bool>();
      }
      if (auto p = t.find("pod_name"); p != t.end() && p->is_string()) task.pod_name = *p;
      if (auto c = t.find("cpu_seconds"); c != t.end() && c->is_number()) {
        task.cpu_seconds = c->get<double>();
      }
      if (auto m = t.find("peak_memory_bytes"); m != t.end() && m->is_number()) {
        task.peak_memory_bytes = m->get<int64_t>();
      }
      if (auto s = t.find("resource_source"); s != t.end() && s->is_string()) {
        task.resource_source = *s;
      }
      ReadUsage(t, task);
      r.tasks.push_back(std::move(task));
    }
  }
  return r;
}

// One growth scenario's levels (fits are derived and recomputed).
Result<GrowthCurve> GrowthFromJson(const json& entry, size_t scenario, const std::string& path) {
  if (!entry.is_object()) return At(path, "must be an object");
  GrowthCurve curve;
  curve.scenario = scenario;
  KFPBENCH_ASSIGN(curve.extrapolate_to, Number<int64_t>(entry, "extrapolate_to", path, false));
  KFPBENCH_ASSIGN(curve.stopped_because, String(entry, "stopped_because", path));
  auto levels = entry.find("levels");
  if (levels == entry.end()) return curve;
  if (!levels->is_array()) return At(path + ".levels", "must be an array");
  for (size_t i = 0; i < levels->size(); ++i) {
    const json& l = (*levels)[i];
    std::string p = fmt::format("{}.levels[{}]", path, i);
    if (!l.is_object()) return At(p, "must be an object");
    GrowthLevel level;
    KFPBENCH_ASSIGN(level.target_runs, Number<int64_t>(l, "target_runs", p, true));
    KFPBENCH_ASSIGN(level.runs_stored, Number<int64_t>(l, "runs_stored", p, true));
    KFPBENCH_ASSIGN(level.experiments_stored, Number<int64_t>(l, "experiments_stored", p, false));
    KFPBENCH_ASSIGN(level.pipelines_stored, Number<int64_t>(l, "pipelines_stored", p, false));
    KFPBENCH_ASSIGN(level.measure_seconds, Number<double>(l, "measure_seconds", p, false));
    KFPBENCH_ASSIGN(level.deepest_page, Number<int64_t>(l, "deepest_page", p, false));
    if (auto fill = l.find("fill"); fill != l.end()) {
      std::string f = p + ".fill";
      if (!fill->is_object()) return At(f, "must be an object");
      KFPBENCH_ASSIGN(level.runs_created, Number<int64_t>(*fill, "runs_created", f, false));
      KFPBENCH_ASSIGN(level.experiments_created,
                      Number<int64_t>(*fill, "experiments_created", f, false));
      KFPBENCH_ASSIGN(level.pipelines_created,
                      Number<int64_t>(*fill, "pipelines_created", f, false));
      KFPBENCH_ASSIGN(level.versions_created, Number<int64_t>(*fill, "versions_created", f, false));
      KFPBENCH_ASSIGN(level.fill_failures, Number<int64_t>(*fill, "failures", f, false));
      KFPBENCH_ASSIGN(level.fill_seconds, Number<double>(*fill, "seconds", f, false));
      KFPBENCH_ASSIGN(level.settle_seconds, Number<double>(*fill, "settle_seconds", f, false));
      KFPBENCH_ASSIGN(level.unsettled_runs, Number<int64_t>(*fill, "unsettled_runs", f, false));
    }
    if (auto ops = l.find("operations"); ops != l.end()) {
      if (!ops->is_object()) return At(p + ".operations", "must be an object");
      for (const auto& [name, op] : ops->items()) {
        std::string o = p + ".operations." + name;
        if (!op.is_object() || !op.contains("histogram")) return At(o, "missing field 'histogram'");
        auto hist = metrics::Histogram::FromJson(op["histogram"]);
        if (!hist.ok()) return At(o + ".histogram", hist.error().message);
        level.latency_us[name] = std::move(*hist);
        uint64_t errors = 0;
        KFPBENCH_ASSIGN(errors, Number<uint64_t>(op, "errors", o, false));
        if (errors > 0) level.errors[name] = errors;
      }
    }
    curve.levels.push_back(std::move(level));
  }
  return curve;
}

// The sections added as modes grew: shard, scenarios, stress, schedules and
// collectors. Each is optional; present, it must have its written shape.
Status ReadExtensions(const json& j, BenchmarkResults& r) {
  if (auto s = j.find("shard"); s != j.end()) {
    if (!s->is_object()) return At("shard", "must be an object");
    KFPBENCH_ASSIGN(r.shard_index, Number<int>(*s, "index", "shard", false));
    KFPBENCH_ASSIGN(r.shard_count, Number<int>(*s, "count", "shard", false));
    if (r.shard_count < 1) r.shard_count = 1;
  }
  if (auto list = j.find("scenarios"); list != j.end()) {
    if (!list->is_array()) return At("scenarios", "must be an array");
    for (size_t i = 0; i < list->size(); ++i) {
      std::string p = fmt::format("scenarios[{}]", i);
      ScenarioInfo info;
      KFPBENCH_ASSIGN(info.index, Number<size_t>((*list)[i], "index", p, false));
      KFPBENCH_ASSIGN(info.mode, String((*list)[i], "mode", p));
      KFPBENCH_ASSIGN(info.artifact_bytes, Number<int64_t>((*list)[i], "artifact_bytes", p, false));
      r.scenarios.push_back(std::move(info));
    }
  }
  // Keyed by scenario index; other keys (trigger_lag_*) are summaries.
  auto scenario_key = [](const std::string& key) -> std::optional<size_t> {
    size_t v = 0;
    auto [p, ec] = std::from_chars(key.data(), key.data() + key.size(), v);
    if (ec != std::errc() || p != key.data() + key.size()) return std::nullopt;
    return v;
  };
  if (auto stress = j.find("stress"); stress != j.end() && stress->is_object()) {
    for (const auto& [key, entry] : stress->items()) {
      auto index = scenario_key(key);
      if (!index || !entry.is_object() || !entry.contains("steps")) continue;
      for (const auto& step : entry["steps"]) {
        std::string p = "stress." + key;
        StressStep s;
        s.scenario = *index;
        KFPBENCH_ASSIGN(s.rate_per_minute, Number<double>(step, "rate_per_minute", p, true));
        KFPBENCH_ASSIGN(s.runs, Number<int>(step, "runs", p, false));
        KFPBENCH_ASSIGN(s.failed, Number<int>(step, "failed", p, false));
        KFPBENCH_ASSIGN(s.p95_ms, Number<int64_t>(step, "p95_latency_from_intended_ms", p, false));
        KFPBENCH_ASSIGN(s.error_rate, Number<double>(step, "error_rate", p, false));
        s.held = step.value("held", false);
        r.stress_steps.push_back(s);
      }
      if (auto stopped = entry.find("stopped"); stopped != entry.end()) {
        std::string p = "stress." + key + ".stopped";
        auto reason = stopped->is_string() ? ParseStressStopReason(stopped->get<std::string>())
                                           : std::nullopt;
        if (!reason) {
          return Error{p +
                       ": must be slo_broken, runtime_reached, max_rate_reached or interrupted"};
        }
        StressStop stop{.scenario = *index, .reason = *reason, .detail = ""};
        KFPBENCH_ASSIGN(stop.detail, String(entry, "stopped_because", "stress." + key));
        r.stress_stops.push_back(std::move(stop));
      }
    }
  }
  // Files written before growth scenarios existed have no "growth": none ran.
  if (auto growth = j.find("growth"); growth != j.end()) {
    if (!growth->is_object()) return At("growth", "must be an object");
    for (const auto& [key, entry] : growth->items()) {
      auto index = scenario_key(key);
      if (!index) return At("growth." + key, "must be keyed by scenario index");
      auto curve = GrowthFromJson(entry, *index, "growth." + key);
      if (!curve.ok()) return curve.error();
      r.growth.push_back(std::move(*curve));
    }
  }
  if (auto schedules = j.find("schedules"); schedules != j.end() && schedules->is_object()) {
    for (const auto& [key, entry] : schedules->items()) {
      auto index = scenario_key(key);
      if (!index || !entry.is_object()) continue;
      std::string p = "schedules." + key;
      ScheduleSummary s;
      s.scenario = *index;
      KFPBENCH_ASSIGN(s.recurring_runs, Number<int>(entry, "recurring_runs", p, false));
      KFPBENCH_ASSIGN(s.expected_fires, Number<int>(entry, "expected_fires", p, false));
      KFPBENCH_ASSIGN(s.observed_fires, Number<int>(entry, "observed_fires", p, false));
      r.schedules.push_back(s);
    }
  }
  if (auto c = j.find("collectors"); c != j.end()) {
    if (!c->is_array()) return At("collectors", "must be an array");
    r.collectors = *c;
  }
  if (auto p = j.find("pod_lifecycle"); p != j.end() && !p->is_null()) {
    auto section = PodLifecycleFromJson(*p);
    if (!section.ok()) return Error{section.error().message};
    r.pod_lifecycle = std::move(*section);
  }
  if (auto reps = j.find("repetitions"); reps != j.end()) {
    KFPBENCH_ASSIGN(r.repetitions, RepetitionsFromJson(*reps));
  }
  return Ok();
}

}  // namespace

Result<BenchmarkResults> ResultsFromJson(const json& j) {
  if (!j.is_object()) return Error{"not a kfpbench results object"};
  if (j.value("schema", std::string()) != "kfpbench/results") {
    return Error{"not a kfpbench results file (\"schema\" is not \"kfpbench/results\")"};
  }
  auto version = j.find("schema_version");
  if (version == j.end() || !version->is_number_integer()) {
    return Error{"schema_version: missing or not an integer"};
  }
  if (version->get<int>() != BenchmarkResults::kSchemaVersion) {
    return Error{fmt::format(
        "schema_version {} is not supported: this kfpbench ({}) reads version {}{}",
        version->get<int>(), KFPBENCH_VERSION, BenchmarkResults::kSchemaVersion,
        version->get<int>() > BenchmarkResults::kSchemaVersion ? "; use a newer kfpbench" : "")};
  }
  BenchmarkResults r;
  KFPBENCH_ASSIGN(r.kfpbench_version, String(j, "kfpbench_version", ""));
  KFPBENCH_ASSIGN(r.started, Time(j, "started_at", ""));
  KFPBENCH_ASSIGN(r.finished, Time(j, "finished_at", ""));
  if (auto it = j.find("partial"); it != j.end()) {
    if (!it->is_boolean()) return Error{"partial: must be true or false"};
    r.partial = it->get<bool>();
  }
  KFPBENCH_ASSIGN(r.partial_reason, String(j, "partial_reason", ""));
  if (auto t = j.find("target"); t != j.end()) {
    if (!t->is_object()) return Error{"target: must be an object"};
    KFPBENCH_ASSIGN(r.target.url, String(*t, "url", "target"));
    r.target.embedded = t->value("embedded", false);
    KFPBENCH_ASSIGN(r.target.api_version, String(*t, "api_version", "target"));
    r.target.healthz = t->value("healthz", json());
  }
  if (auto s = j.find("scenario"); s != j.end()) {
    if (!s->is_object()) return Error{"scenario: must be an object"};
    KFPBENCH_ASSIGN(r.scenario_path, String(*s, "path", "scenario"));
    r.scenario_source = s->value("source", json());
  }
  auto ops = j.find("operations");
  if (ops == j.end() || !ops->is_object()) return Error{"operations: missing or not an object"};
  for (const auto& [name, op] : ops->items()) {
    KFPBENCH_ASSIGN(r.operations[name], Operation(op, "operations." + name));
  }
  auto runs = j.find("runs");
  if (runs == j.end() || !runs->is_object()) return Error{"runs: missing or not an object"};
  KFPBENCH_ASSIGN(r.runs, RunRecordsFromJson(j));
  KFPBENCH_ASSIGN(r.errors, Strings(j, "errors", ""));
  KFPBENCH_ASSIGN(r.cleanup_failures, Strings(j, "cleanup_failures", ""));
  KFPBENCH_ASSIGN(r.resent_requests, Number<uint64_t>(j, "resent_requests", "", false));
  if (Status s = ReadExtensions(j, r); !s.ok()) return s.error();
  return r;
}

Result<std::vector<RunRecord>> RunRecordsFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return Error{"not a kfpbench results object"};
  auto runs = j.find("runs");
  if (runs == j.end()) return Error{"runs: missing (is this a kfpbench results.json?)"};
  const json* records = runs->is_array() ? &*runs : nullptr;
  std::string where = "runs";
  if (runs->is_object()) {
    auto it = runs->find("records");
    if (it != runs->end() && it->is_array()) records = &*it;
    where = "runs.records";
  }
  if (records == nullptr) return Error{where + ": missing or not an array"};
  std::vector<RunRecord> out;
  for (size_t i = 0; i < records->size(); ++i) {
    RunRecord rec;
    KFPBENCH_ASSIGN(rec, Run((*records)[i], fmt::format("{}[{}]", where, i)));
    out.push_back(std::move(rec));
  }
  return out;
}

namespace {

// RESULTS_DIR/results.json or the file itself, parsed; errors name the file.
Result<json> ReadJsonFile(const std::filesystem::path& path, std::filesystem::path& file) {
  file = path;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) file = path / "results.json";
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    return Error{fmt::format("{}: cannot read{}", file.string(),
                             std::filesystem::exists(file, ec) ? "" : " (no such file)")};
  }
  std::stringstream text;
  text << in.rdbuf();
  json j;
  try {
    j = json::parse(text.str());
  } catch (const json::parse_error& e) {
    // A configuration boundary: nlohmann reports where parsing stopped only
    // through its exception.
    return Error{fmt::format("{}: not valid JSON (at byte {}); the file is corrupt or truncated",
                             file.string(), e.byte)};
  } catch (const json::exception& e) {
    return Error{fmt::format("{}: not readable as results: {}", file.string(), e.what())};
  }
  return j;
}

}  // namespace

Result<BenchmarkResults> LoadResults(const std::filesystem::path& path) {
  std::filesystem::path file;
  auto j = ReadJsonFile(path, file);
  if (!j.ok()) return j.error();
  auto r = ResultsFromJson(*j);
  if (!r.ok()) return Error{file.string() + ": " + r.error().message};
  return r;
}

Result<std::vector<RunRecord>> LoadRunRecords(const std::filesystem::path& path) {
  std::filesystem::path file;
  auto j = ReadJsonFile(path, file);
  if (!j.ok()) return j.error();
  auto r = RunRecordsFromJson(*j);
  if (!r.ok()) return Error{file.string() + ": " + r.error().message};
  return r;
}

Result<std::vector<RepetitionSummary>> RepetitionsFromJson(const nlohmann::json& j) {
  if (!j.is_array()) return Error{"repetitions: must be an array"};
  std::vector<RepetitionSummary> out;
  for (size_t i = 0; i < j.size(); ++i) {
    std::string path = fmt::format("repetitions[{}]", i);
    const auto& item = j[i];
    if (!item.is_object()) return Error{path + ": must be an object"};
    RepetitionSummary r;
    auto started = Time(item, "started_at", path);
    if (!started.ok()) return started.error();
    r.started = *started;
    auto finished = Time(item, "finished_at", path);
    if (!finished.ok()) return finished.error();
    r.finished = *finished;
    auto ops = item.find("latency_us");
    if (ops == item.end() || !ops->is_object()) {
      return Error{path + ".latency_us: missing or not an object"};
    }
    for (const auto& [name, h] : ops->items()) {
      auto hist = metrics::Histogram::FromJson(h);
      if (!hist.ok())
        return Error{fmt::format("{}.latency_us.{}: {}", path, name, hist.error().message)};
      r.latency_us[name] = std::move(*hist);
    }
    auto runs = item.find("run_duration_ms");
    if (runs == item.end()) return Error{path + ": missing field 'run_duration_ms'"};
    auto hist = metrics::Histogram::FromJson(*runs);
    if (!hist.ok()) return Error{path + ".run_duration_ms: " + hist.error().message};
    r.run_duration_ms = std::move(*hist);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace kfpbench::results
