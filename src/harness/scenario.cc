#include "harness/scenario.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/modes.h"
#include "harness/replay_steps.h"
#include "harness/shapes.h"
#include "ir/pipeline_spec.h"
#include "util/files.h"
#include "util/json_reader.h"

namespace kfpbench::harness {
namespace {

using nlohmann::json;

// Fields every mode reads; a shape adds its settings (ShapeSpec::field), a
// mode its own fields (ModeSpec::fields).
constexpr std::string_view kCommonFields[] = {
    "mode",    "startTime", "runTime",     "numTimes",       "pipelineFileName",
    "params",  "cron",      "concurrency", "resourceLimits", "rate",
    "arrival", "seed",      "shape",       "cache"};

// The common fields, then each shape's settings and each mode's own fields,
// in registration order.
std::vector<std::string_view> KnownFields() {
  std::vector<std::string_view> out(std::begin(kCommonFields), std::end(kCommonFields));
  for (const ShapeSpec* shape : Shapes()) {
    if (!shape->field.empty()) out.push_back(shape->field);
  }
  for (const ModeSpec* mode : Modes()) {
    for (const auto& field : mode->fields) {
      if (std::find(out.begin(), out.end(), field.name) == out.end()) out.push_back(field.name);
    }
  }
  return out;
}

Result<std::filesystem::path> FindPipeline(const std::string& name,
                                           const std::filesystem::path& scenario_path,
                                           const LoadOptions& options, const std::string& where) {
  std::vector<std::filesystem::path> candidates;
  std::filesystem::path given(name);
  if (given.is_absolute()) {
    candidates.push_back(given);
  } else {
    candidates.push_back(scenario_path.parent_path() / given);
    for (const auto& dir : options.pipeline_dirs) candidates.push_back(dir / given);
  }
  std::string looked;
  for (const auto& c : candidates) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(c, ec)) return c;
    looked += (looked.empty() ? "" : ", ") + c.string();
  }
  return Error{
      fmt::format("{}: pipeline file '{}' not found (looked in {}{})", where, name, looked,
                  options.pipeline_dirs.empty() ? "; add folders with --pipelines DIR" : "")};
}

Result<Scenario> ReadScenario(const json& entry, size_t index, const std::filesystem::path& path,
                              const LoadOptions& options) {
  std::string at = fmt::format("[{}]", index);
  if (!entry.is_object()) return Error{at + ": each scenario must be a JSON object"};
  std::vector<std::string> unknown;  // every typo at once, not one per attempt
  const auto known = KnownFields();
  for (const auto& [key, value] : entry.items()) {
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      unknown.push_back(
          fmt::format("{}.{}: unknown field (known: {})", at, key, fmt::join(known, ", ")));
    }
  }
  if (!unknown.empty()) return Error{fmt::format("{}", fmt::join(unknown, "\n"))};
  Scenario s;
  s.index = index;
  s.source = entry;
  auto mode = entry.find("mode");
  if (mode == entry.end()) return Error{at + ".mode: missing (expected one of " + ModeList() + ")"};
  if (!mode->is_string()) return Error{at + ".mode: must be a string"};
  const ModeSpec* info = FindMode(mode->get<std::string>());
  if (!info) {
    return Error{fmt::format("{}.mode: unknown mode '{}' (expected one of {})", at,
                             mode->get<std::string>(), ModeList())};
  }
  s.mode = info;
  s.time_scale = options.time_scale;
  // A field another mode reads is no typo, but this mode would ignore it.
  for (const ModeSpec* other : Modes()) {
    if (other == info) continue;
    for (const auto& field : other->fields) {
      bool own = std::any_of(info->fields.begin(), info->fields.end(),
                             [&](const auto& f) { return f.name == field.name; });
      if (entry.contains(field.name) && !own) {
        return Error{fmt::format("{}.{}: only {} {}", at, field.name, other->name, field.does)};
      }
    }
  }

  if (auto v = entry.find("startTime"); v != entry.end()) {
    auto t = ReadScenarioTime(*v, at + ".startTime", options.time_scale);
    if (!t.ok()) return t.error();
    s.start_time = *t;
  }
  if (auto run_time = entry.find("runTime"); run_time != entry.end()) {
    auto t = ReadScenarioTime(*run_time, at + ".runTime", options.time_scale);
    if (!t.ok()) return t.error();
    s.run_time = *t;
    if (s.run_time <= Duration::zero()) return Error{at + ".runTime: must be greater than zero"};
  } else if (info->needs_run_time) {
    return Error{at + ".runTime: missing"};
  }

  auto read_count = [&](const char* name, int& out) -> Status {
    auto v = entry.find(name);
    if (v == entry.end()) return Ok();
    if (!v->is_number_integer() || v->get<int64_t>() < 1 || v->get<int64_t>() > 100000) {
      return Error{fmt::format("{}.{}: must be a whole number from 1 to 100000 (got {})", at, name,
                               v->dump())};
    }
    out = v->get<int>();
    return Ok();
  };
  if (Status st = read_count("numTimes", s.num_times); !st.ok()) return st.error();
  if (entry.contains("concurrency")) {
    int c = 0;
    if (Status st = read_count("concurrency", c); !st.ok()) return st.error();
    s.concurrency = c;
  }
  if (auto v = entry.find("params"); v != entry.end()) {
    if (!v->is_object()) return Error{at + ".params: must be an object of parameter values"};
    s.params = *v;
  }
  if (auto v = entry.find("cron"); v != entry.end()) {
    if (!v->is_string()) return Error{at + ".cron: must be a string"};
    s.cron = v->get<std::string>();
  }
  if (auto v = entry.find("resourceLimits"); v != entry.end()) s.resource_limits = *v;
  if (auto v = entry.find("rate"); v != entry.end()) {
    if (!v->is_number() || !(v->get<double>() > 0) || v->get<double>() > 1e7) {
      return Error{fmt::format("{}.rate: must be runs per minute, greater than zero (got {})", at,
                               v->dump())};
    }
    // --time-scale shortens the test, not the load: the rate stays as given.
    s.rate_per_minute = v->get<double>();
  }
  if (auto v = entry.find("arrival"); v != entry.end()) {
    if (*v == "constant") {
      s.arrival = Scenario::Arrival::kConstant;
    } else if (*v == "poisson") {
      s.arrival = Scenario::Arrival::kPoisson;
    } else {
      return Error{
          fmt::format("{}.arrival: must be \"constant\" or \"poisson\" (got {})", at, v->dump())};
    }
    if (!s.rate_per_minute) return Error{at + ".arrival: needs a rate"};
  }
  if (auto v = entry.find("seed"); v != entry.end()) {
    if (!v->is_number_unsigned()) return Error{at + ".seed: must be a non-negative integer"};
    s.seed = v->get<uint64_t>();
  }
  if (auto v = entry.find("cache"); v != entry.end()) {
    if (!v->is_boolean()) return Error{at + ".cache: must be true or false"};
    s.cache = v->get<bool>();
  }
  s.cache = s.cache && options.cache;
  if (Status st = ReadShape(entry, at, options.time_scale, s); !st.ok()) return st.error();
  if (auto v = entry.find("pipelineFileName"); v != entry.end()) {
    if (!v->is_string() || v->get<std::string>().empty()) {
      return Error{at + ".pipelineFileName: must be a file name"};
    }
    s.pipeline_file_name = v->get<std::string>();
  }
  if (info->needs_pipeline) {
    if (s.pipeline_file_name.empty()) {
      return Error{fmt::format("{}.pipelineFileName: required for mode {}", at, info->name)};
    }
    auto p = FindPipeline(s.pipeline_file_name, path, options, at + ".pipelineFileName");
    if (!p.ok()) return p.error();
    s.pipeline_path = *p;
  }
  if (info->read != nullptr) {
    if (Status st = info->read(entry, at, path, s); !st.ok()) return st.error();
  }
  return s;
}

}  // namespace

Result<Duration> ReadScenarioTime(const nlohmann::json& v, const std::string& where, double scale) {
  // Far beyond any benchmark, and far below where time arithmetic overflows.
  constexpr double kMaxMinutes = 366 * 24 * 60;
  Duration d;
  if (v.is_number()) {
    double minutes = v.get<double>();
    if (!std::isfinite(minutes) || minutes < 0) {
      return Error{fmt::format("{}: must not be negative (got {})", where, v.dump())};
    }
    if (minutes > kMaxMinutes) {
      return Error{fmt::format("{}: {} minutes is more than a year", where, v.dump())};
    }
    d = FromSeconds(minutes * 60.0);
  } else if (v.is_string()) {
    auto parsed = ParseDuration(v.get<std::string>());
    if (!parsed.ok()) return Error{where + ": " + parsed.error().message};
    d = *parsed;
  } else {
    return Error{where + ": must be minutes (a number) or a duration string like \"30s\""};
  }
  return FromSeconds(ToSeconds(d) * scale);
}

std::string_view Scenario::mode_name() const { return mode != nullptr ? mode->name : ""; }

Result<ScenarioFile> ParseScenarios(const std::string& text, const std::filesystem::path& path,
                                    const LoadOptions& options) {
  auto fail = [&](const std::string& message) {
    return Error{fmt::format("{}: {}", path.string(), message)};
  };
  if (!(options.time_scale > 0) || !std::isfinite(options.time_scale)) {
    return fail(fmt::format("--time-scale must be greater than zero (got {})", options.time_scale));
  }
  auto parsed = ParseJsonText(text);
  if (!parsed.ok()) return fail("malformed JSON: " + parsed.error().message);
  json doc = std::move(*parsed);
  ScenarioFile file;
  file.path = path;
  file.time_scale = options.time_scale;
  file.source = doc;
  json entries = doc;
  json defaults = json::object();
  std::string prefix;  // JSON path of the scenario list
  if (doc.is_object() && doc.contains("mode") && !doc.contains("scenarios")) {
    // perf-tests' docs show one scenario as a bare object: a one-scenario file.
    entries = json::array({doc});
  } else if (doc.is_object()) {
    for (const auto& [key, value] : doc.items()) {
      if (key != "target" && key != "defaults" && key != "thresholds" && key != "scenarios" &&
          key != "replay") {
        return fail(fmt::format(
            "{}: unknown field (known: target, defaults, thresholds, scenarios, replay)", key));
      }
    }
    for (const char* key : {"target", "defaults", "thresholds"}) {
      if (doc.contains(key) && !doc[key].is_object()) {
        return fail(fmt::format("{}: must be an object", key));
      }
    }
    if (!doc.contains("scenarios")) return fail("scenarios: missing");
    entries = doc["scenarios"];
    defaults = doc.value("defaults", json::object());
    file.target = doc.value("target", json::object());
    file.thresholds = doc.value("thresholds", json::object());
    if (auto replay = doc.find("replay"); replay != doc.end()) {
      if (Status st = ReadReplaySteps(*replay, options.time_scale, file); !st.ok()) {
        return fail(st.error().message);
      }
    }
    prefix = "scenarios";
  } else if (!doc.is_array()) {
    return fail(
        "a scenario file is a JSON array of scenarios, one scenario object, or an object with "
        "\"scenarios\"");
  }
  if (!entries.is_array()) return fail(prefix + ": must be an array");
  if (entries.empty()) return fail("the file has no scenarios");
  // Every scenario is read, so each one's problems are named in one go.
  std::vector<std::string> problems;
  for (size_t i = 0; i < entries.size(); ++i) {
    json entry = entries[i];
    if (entry.is_object()) {
      for (const auto& [key, value] : defaults.items()) {
        if (!entry.contains(key)) entry[key] = value;
      }
    }
    auto s = ReadScenario(entry, i, path, options);
    if (!s.ok()) {
      std::istringstream lines(s.error().message);
      for (std::string line; std::getline(lines, line);) problems.push_back(prefix + line);
      continue;
    }
    file.scenarios.push_back(std::move(*s));
  }
  if (!problems.empty()) {
    std::string all;
    for (const auto& p : problems) all += (all.empty() ? "" : "\n") + fail(p).message;
    return Error{all};
  }
  return file;
}

Status ApplyShard(ScenarioFile& file, const std::string& shard) {
  int index = -1, count = 0;
  char slash = 0;
  std::istringstream in(shard);
  if (!(in >> index >> slash >> count) || slash != '/' || !in.eof()) {
    return Error{"--shard: expected i/N, e.g. 0/4 (got '" + shard + "')"};
  }
  return ApplyShard(file, index, count);
}

Status ApplyShard(ScenarioFile& file, int index, int count) {
  if (count < 1 || index < 0 || index >= count) {
    return Error{fmt::format("--shard {}/{}: expected i/N with 0 <= i < N", index, count)};
  }
  if (count == 1) {
    file.shard_index = index;
    file.shard_count = count;
    return Ok();
  }
  // Split on a copy: a shape that cannot be split leaves the file as it was.
  std::vector<Scenario> scenarios = file.scenarios;
  for (auto& s : scenarios) {
    // Workers dealt round-robin: shard i gets one more while i < total % N.
    int total = s.InFlight();
    int mine = total / count + (index < total % count ? 1 : 0);
    s.num_times = mine;
    if (s.concurrency) s.concurrency = mine;
    if (s.rate_per_minute) {
      *s.rate_per_minute /= count;
      s.arrival_offset = static_cast<double>(index) / count;
      // Poisson streams must differ per shard; their sum is again Poisson.
      s.seed = s.seed * 1000003 + static_cast<uint64_t>(index);
    }
    if (s.shape != nullptr && s.shape->shard != nullptr) {
      if (Status st = s.shape->shard(s, count); !st.ok()) return st;
    }
  }
  file.scenarios = std::move(scenarios);
  file.shard_index = index;
  file.shard_count = count;
  return Ok();
}

Result<ScenarioFile> LoadScenarioFile(const std::filesystem::path& path,
                                      const LoadOptions& options) {
  constexpr size_t kMaxScenarioFileBytes = size_t{64} << 20;
  auto text = ReadRegularFile(path, kMaxScenarioFileBytes);
  if (!text.ok()) return Error{fmt::format("scenario file: {}", text.error().message)};
  return ParseScenarios(*text, path, options);
}

}  // namespace kfpbench::harness
