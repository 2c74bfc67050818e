#include "results/results_json.h"

#include <charconv>
#include <optional>

#include <fmt/format.h>

#include "results/results_fields.h"
#include "util/files.h"
#include "util/json_reader.h"

namespace kfpbench::results {
namespace {

using nlohmann::json;

Error At(const std::string& path, const std::string& why) {
  return Error{path.empty() ? why : path + ": " + why};
}

// {"<key>": count}; `key` turns a key into the map's key (false: refused).
template <typename K, typename KeyFn>
void ReadCounts(JsonReader& r, const char* name, std::map<K, uint64_t>& out, KeyFn key,
                const char* why) {
  r.Custom(name, [&](const json& v) {
    if (!v.is_object()) return std::string("must be an object");
    for (const auto& [text, n] : v.items()) {
      K k{};
      if (!key(text, k) || !n.is_number_unsigned()) return fmt::format("{} (\"{}\")", why, text);
      out[k] = n.template get<uint64_t>();
    }
    return std::string();
  });
}

// A ReadCounts key that is the text itself (a message, an operation).
bool KeyAsGiven(const std::string& text, std::string& key) {
  key = text;
  return true;
}

void ReadOperation(JsonReader& r, metrics::OperationStats& op) {
  kOperationFields.Read(r, op);
  ReadCounts(
      r, "by_status", op.by_status,
      [](const std::string& text, int& code) {
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), code);
        return ec == std::errc() && end == text.data() + text.size();
      },
      "must map an HTTP status to a count");
  // since 0.1: optional
  ReadCounts(r, "error_messages", op.error_messages, KeyAsGiven, "must map a message to a count");
  r.Array("timeseries", [&](JsonReader& w) {
    metrics::Window win;
    kWindowFields.Read(w, win);
    op.windows.push_back(win);
  });
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

void ReadRun(JsonReader& r, RunRecord& rec) {
  kRunFields.Read(r, rec);
  r.String("error", rec.error);  // written only when there is one
  r.Array("tasks", [&](JsonReader& t) {
    TaskTiming task;
    kTaskFields.Read(t, task);
    t.Bool("cached", task.cached);  // written only when true
    // Figures added by hand or by newer versions: a wrong type is ignored.
    const json& raw = t.object();
    if (auto p = raw.find("pod_name"); p != raw.end() && p->is_string()) task.pod_name = *p;
    if (auto c = raw.find("cpu_seconds"); c != raw.end() && c->is_number()) {
      task.cpu_seconds = c->get<double>();
    }
    if (auto m = raw.find("peak_memory_bytes"); m != raw.end() && m->is_number()) {
      task.peak_memory_bytes = m->get<int64_t>();
    }
    if (auto s = raw.find("resource_source"); s != raw.end() && s->is_string()) {
      task.resource_source = *s;
    }
    ReadUsage(raw, task);
    rec.tasks.push_back(std::move(task));
  });
}

// One growth scenario's levels (fits are derived and recomputed).
Result<GrowthCurve> GrowthFromJson(const json& entry, size_t scenario, const std::string& path) {
  auto r = JsonReader::Plain(entry, path);
  GrowthCurve curve;
  curve.scenario = scenario;
  kGrowthCurveFields.Read(r, curve);
  r.Array("levels", [&](JsonReader& l) {
    GrowthLevel level;
    kGrowthLevelFields.Read(l, level);  // with its "fill"
    l.Entries("operations", [&](const std::string& name, JsonReader& o) {
      o.Require("histogram");
      ReadValue(o, "histogram", level.latency_us[name]);
      uint64_t errors = 0;
      o.Number("errors", errors);
      if (errors > 0) level.errors[name] = errors;
    });
    curve.levels.push_back(std::move(level));
  });
  if (Status s = r.Finish(); !s.ok()) return s.error();
  return curve;
}

// Keyed by scenario index; other keys (trigger_lag_*) are summaries.
std::optional<size_t> ScenarioKey(const std::string& key) {
  size_t v = 0;
  auto [p, ec] = std::from_chars(key.data(), key.data() + key.size(), v);
  if (ec != std::errc() || p != key.data() + key.size()) return std::nullopt;
  return v;
}

// One scenario's stress steps and why the stress stopped.
void ReadStress(JsonReader& e, size_t scenario, BenchmarkResults& r) {
  e.Array("steps", [&](JsonReader& step) {
    StressStep s;
    s.scenario = scenario;
    kStressStepFields.Read(step, s);
    r.stress_steps.push_back(s);
  });
  if (!e.Has("stopped")) return;
  StressStop stop{.scenario = scenario, .reason = {}, .detail = ""};
  e.Custom("stopped", [&](const json& v) {
    auto reason = v.is_string() ? ParseStressStopReason(v.get<std::string>()) : std::nullopt;
    if (!reason)
      return std::string("must be slo_broken, runtime_reached, max_rate_reached or interrupted");
    stop.reason = *reason;
    return std::string();
  });
  e.String("stopped_because", stop.detail);
  if (e.ok()) r.stress_stops.push_back(std::move(stop));
}

void ReadObserver(JsonReader& o, ObserverSummary& s) {
  kObserverFields.Read(o, s);
  o.Entries("operations", [&](const std::string& name, JsonReader& op) {
    ReadOperation(op, s.operations[name]);
  });
}

void ReadBackPressure(JsonReader& b, BackPressure& p) {
  kBackPressureFields.Read(b, p);
  ReadCounts(b, "by_operation", p.by_operation, KeyAsGiven, "counts must be non-negative integers");
}

// The sections of one object: scenarios, observer, harness usage,
// back-pressure and collectors.
Status ReadFlatExtensions(const json& j, BenchmarkResults& r) {
  auto in = JsonReader::Plain(j, "");
  in.Array("scenarios", [&](JsonReader& s) {
    ScenarioInfo info;
    kScenarioInfoFields.Read(s, info);
    r.scenarios.push_back(std::move(info));
  });
  // Files written before these sections have none: nothing was recorded.
  in.Message("observer", [&](JsonReader& o) { ReadObserver(o, r.observer); });
  in.Message("harness_usage", [&](JsonReader& u) { kHarnessUsageFields.Read(u, r.harness_usage); });
  in.Message("back_pressure", [&](JsonReader& b) { ReadBackPressure(b, r.back_pressure); });
  in.Custom("collectors", [&](const json& c) {
    if (!c.is_array()) return std::string("must be an array");
    r.collectors = c;
    return std::string();
  });
  return in.Finish();
}

Status ReadStressSection(const json& j, BenchmarkResults& r) {
  auto stress = j.find("stress");
  if (stress == j.end() || !stress->is_object()) return Ok();
  for (const auto& [key, entry] : stress->items()) {
    auto index = ScenarioKey(key);
    if (!index || !entry.is_object() || !entry.contains("steps")) continue;
    auto e = JsonReader::Plain(entry, "stress." + key);
    ReadStress(e, *index, r);
    if (Status s = e.Finish(); !s.ok()) return s;
  }
  return Ok();
}

// Files written before growth scenarios existed have no "growth": none ran.
Status ReadGrowthSection(const json& j, BenchmarkResults& r) {
  auto growth = j.find("growth");
  if (growth == j.end()) return Ok();
  if (!growth->is_object()) return At("growth", "must be an object");
  for (const auto& [key, entry] : growth->items()) {
    auto index = ScenarioKey(key);
    if (!index) return At("growth." + key, "must be keyed by scenario index");
    auto curve = GrowthFromJson(entry, *index, "growth." + key);
    if (!curve.ok()) return curve.error();
    r.growth.push_back(std::move(*curve));
  }
  return Ok();
}

Status ReadSchedulesSection(const json& j, BenchmarkResults& r) {
  auto schedules = j.find("schedules");
  if (schedules == j.end() || !schedules->is_object()) return Ok();
  for (const auto& [key, entry] : schedules->items()) {
    auto index = ScenarioKey(key);
    if (!index || !entry.is_object()) continue;
    auto e = JsonReader::Plain(entry, "schedules." + key);
    ScheduleSummary s;
    s.scenario = *index;
    kScheduleFields.Read(e, s);
    if (Status status = e.Finish(); !status.ok()) return status;
    r.schedules.push_back(s);
  }
  return Ok();
}

// The sections added as modes grew. Each is optional; present, it must have
// its written shape.
Status ReadExtensions(const json& j, BenchmarkResults& r) {
  for (auto read :
       {ReadFlatExtensions, ReadStressSection, ReadGrowthSection, ReadSchedulesSection}) {
    if (Status s = read(j, r); !s.ok()) return s;
  }
  if (auto p = j.find("pod_lifecycle"); p != j.end() && !p->is_null()) {
    auto section = PodLifecycleFromJson(*p);
    if (!section.ok()) return Error{section.error().message};
    r.pod_lifecycle = std::move(*section);
  }
  if (auto reps = j.find("repetitions"); reps != j.end()) {
    auto repetitions = RepetitionsFromJson(*reps);
    if (!repetitions.ok()) return repetitions.error();
    r.repetitions = std::move(*repetitions);
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
  auto runs = j.find("runs");
  if (runs == j.end() || !runs->is_object()) return Error{"runs: missing or not an object"};
  BenchmarkResults r;
  auto in = JsonReader::Plain(j, "");
  kResultsFields.Read(in, r);  // with its "scenario" and "shard"
  if (r.shard_count < 1) r.shard_count = 1;
  in.Message("target", [&](JsonReader& t) { kTargetFields.Read(t, r.target); });
  in.Require("operations");
  in.Entries("operations", [&](const std::string& name, JsonReader& op) {
    ReadOperation(op, r.operations[name]);
  });
  in.Message("created", [&](JsonReader& o) { kTargetObjectFields.Read(o, r.created); });
  in.Message("deleted", [&](JsonReader& o) { kTargetObjectFields.Read(o, r.deleted); });
  if (Status s = in.Finish(); !s.ok()) return s.error();
  auto records = RunRecordsFromJson(j);
  if (!records.ok()) return records.error();
  r.runs = std::move(*records);
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
  out.reserve(records->size());
  for (size_t i = 0; i < records->size(); ++i) {
    auto r = JsonReader::Plain((*records)[i], fmt::format("{}[{}]", where, i));
    RunRecord rec;
    ReadRun(r, rec);
    if (Status s = r.Finish(); !s.ok()) return s.error();
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
  auto text = ReadFile(file);
  if (!text.ok()) return text.error();
  auto parsed = ParseJsonText(*text);
  if (!parsed.ok()) {
    return Error{fmt::format("{}: not valid JSON ({}); the file is corrupt or truncated",
                             file.string(), parsed.error().message)};
  }
  json j = std::move(*parsed);
  return j;
}

// The file read and parsed with `from_json`; errors name the file.
template <typename T>
Result<T> Load(const std::filesystem::path& path, Result<T> (*from_json)(const json&)) {
  std::filesystem::path file;
  auto j = ReadJsonFile(path, file);
  if (!j.ok()) return j.error();
  auto r = from_json(*j);
  if (!r.ok()) return Error{file.string() + ": " + r.error().message};
  return r;
}

}  // namespace

Result<BenchmarkResults> LoadResults(const std::filesystem::path& path) {
  return Load(path, ResultsFromJson);
}

Result<std::vector<BenchmarkResults>> LoadAll(const std::vector<std::string>& paths) {
  std::vector<BenchmarkResults> out;
  for (const auto& p : paths) {
    auto r = LoadResults(p);
    if (!r.ok()) return r.error();
    out.push_back(std::move(*r));
  }
  return out;
}

Result<std::vector<RunRecord>> LoadRunRecords(const std::filesystem::path& path) {
  return Load(path, RunRecordsFromJson);
}

Result<std::vector<RepetitionSummary>> RepetitionsFromJson(const nlohmann::json& j) {
  if (!j.is_array()) return Error{"repetitions: must be an array"};
  std::vector<RepetitionSummary> out;
  for (size_t i = 0; i < j.size(); ++i) {
    auto in = JsonReader::Plain(j[i], fmt::format("repetitions[{}]", i));
    RepetitionSummary r;
    in.TimeOrEmpty("started_at", r.started);
    in.TimeOrEmpty("finished_at", r.finished);
    in.Require("latency_us");
    in.Entries("latency_us", [&](const std::string& name, JsonReader& h) {
      auto hist = metrics::Histogram::FromJson(h.object());
      if (!hist.ok()) return h.Refuse(hist.error().message);
      r.latency_us[name] = std::move(*hist);
    });
    in.Require("run_duration_ms");
    ReadValue(in, "run_duration_ms", r.run_duration_ms);
    if (Status s = in.Finish(); !s.ok()) return s.error();
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace kfpbench::results
