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
#include "util/json_checks.h"
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
                                           const LoadOptions& options) {
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
      fmt::format("pipeline file '{}' not found (looked in {}{})", name, looked,
                  options.pipeline_dirs.empty() ? "; add folders with --pipelines DIR" : "")};
}

// How many runs (numTimes, concurrency): far beyond one machine's share.
constexpr checks::WholeNumber kRunCount{1, 100000};

// Refuses a field only another mode reads: no typo, but this mode would
// ignore it ("[0].mix: only RANDOM_GETS draws a mix").
void RefuseOtherModesFields(JsonReader& r, const ModeSpec& mode) {
  for (const ModeSpec* other : Modes()) {
    if (other == &mode) continue;
    for (const auto& field : other->fields) {
      bool own = std::any_of(mode.fields.begin(), mode.fields.end(),
                             [&](const auto& f) { return f.name == field.name; });
      if (!own && r.Has(std::string(field.name).c_str())) {
        return r.Fail(std::string(field.name).c_str(),
                      fmt::format("only {} {}", other->name, field.does));
      }
    }
  }
}

const ModeSpec* ReadMode(JsonReader& r) {
  if (!r.Has("mode")) {
    r.Fail("mode", "missing (expected one of " + ModeList() + ")");
    return nullptr;
  }
  std::string name;
  r.String("mode", name);
  if (!r.ok()) return nullptr;
  const ModeSpec* mode = FindMode(name);
  if (mode == nullptr) {
    r.Fail("mode", fmt::format("unknown mode '{}' (expected one of {})", name, ModeList()));
  }
  return mode;
}

// The common fields, in the order their problems are reported.
void ReadCommonFields(JsonReader& r, const LoadOptions& options, Scenario& s) {
  r.Field("startTime", s.start_time, ScenarioTime{options.time_scale});
  r.Field("runTime", s.run_time, ScenarioTime{options.time_scale, /*positive=*/true});
  if (s.mode->needs_run_time && !r.Has("runTime")) r.Fail("runTime", "missing");
  r.Field("numTimes", s.num_times, kRunCount);
  r.Field("concurrency", s.concurrency, kRunCount);
  r.Field("params", s.params, checks::JsonObject{"must be an object of parameter values"});
  r.String("cron", s.cron);
  r.Any("resourceLimits", s.resource_limits);
  // --time-scale shortens the test, not the load: the rate stays as given.
  r.Field("rate", s.rate_per_minute,
          checks::Number{0, 1e7, "must be runs per minute, greater than zero"});
  r.Field("arrival", s.arrival,
          checks::OneOf<Scenario::Arrival>{{{"constant", Scenario::Arrival::kConstant},
                                            {"poisson", Scenario::Arrival::kPoisson}}});
  if (r.Has("arrival") && !s.rate_per_minute) r.Fail("arrival", "needs a rate");
  r.Number("seed", s.seed);
  r.Bool("cache", s.cache);
  s.cache = s.cache && options.cache;
}

// `at` is the scenario's JSON path ("[3]"), empty for a file that is one
// scenario object.
Result<Scenario> ReadScenario(const json& entry, size_t index, const std::string& at,
                              const std::filesystem::path& path, const LoadOptions& options) {
  if (!entry.is_object()) return Error{at + ": each scenario must be a JSON object"};
  JsonReader r = JsonReader::Config(entry, at);
  r.Known(KnownFields());  // every typo at once, not one per attempt
  Scenario s;
  s.index = index;
  s.source = entry;
  s.time_scale = options.time_scale;
  s.mode = ReadMode(r);
  if (s.mode == nullptr) return r.status().error();
  RefuseOtherModesFields(r, *s.mode);
  ReadCommonFields(r, options, s);
  if (r.ok()) ReadShape(r, options.time_scale, s);
  r.Field("pipelineFileName", s.pipeline_file_name, checks::NonEmptyString{"must be a file name"});
  if (r.ok() && s.mode->needs_pipeline) {
    if (s.pipeline_file_name.empty()) {
      r.Fail("pipelineFileName", fmt::format("required for mode {}", s.mode->name));
    } else if (auto p = FindPipeline(s.pipeline_file_name, path, options); p.ok()) {
      s.pipeline_path = *p;
    } else {
      r.Fail("pipelineFileName", p.error().message);
    }
  }
  if (r.ok() && s.mode->read != nullptr) s.mode->read(r, path, s);
  if (Status st = r.Finish(); !st.ok()) return st.error();
  return s;
}

}  // namespace

std::string ScenarioTime::operator()(const nlohmann::json& v, Duration& out) const {
  // Far beyond any benchmark, and far below where time arithmetic overflows.
  constexpr double kMaxMinutes = 366 * 24 * 60;
  Duration d;
  if (v.is_number()) {
    double minutes = v.get<double>();
    if (!std::isfinite(minutes) || minutes < 0) {
      return fmt::format("must not be negative (got {})", v.dump());
    }
    if (minutes > kMaxMinutes) return fmt::format("{} minutes is more than a year", v.dump());
    d = FromSeconds(minutes * 60.0);
  } else if (v.is_string()) {
    auto parsed = ParseDuration(v.get<std::string>());
    if (!parsed.ok()) return parsed.error().message;
    d = *parsed;
  } else {
    return "must be minutes (a number) or a duration string like \"30s\"";
  }
  Duration scaled = FromSeconds(ToSeconds(d) * scale);
  if (positive && scaled <= Duration::zero()) return "must be greater than zero";
  out = scaled;
  return {};
}

std::string_view Scenario::mode_name() const { return mode != nullptr ? mode->name : ""; }

Result<ScenarioFile> ParseScenarios(const std::string& text, const std::filesystem::path& path,
                                    const LoadOptions& options) {
  // Each line of a message names the file: several problems are several lines.
  // A document with no file (a command's flags) names none.
  auto fail = [&](const std::string& message) {
    std::string all;
    std::istringstream lines(message);
    for (std::string line; std::getline(lines, line);) {
      all += fmt::format("{}{}{}", all.empty() ? "" : "\n",
                         path.empty() ? "" : path.string() + ": ", line);
    }
    return Error{all};
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
  bool one_object = doc.is_object() && doc.contains("mode") && !doc.contains("scenarios");
  if (one_object) {
    // perf-tests' docs show one scenario as a bare object: a one-scenario file.
    entries = json::array({doc});
  } else if (doc.is_object()) {
    JsonReader r = JsonReader::Config(doc, "");
    constexpr std::string_view kFileFields[] = {"target", "defaults", "thresholds", "scenarios",
                                                "replay"};
    r.Known(kFileFields);
    r.Object("target", file.target);
    r.Object("defaults", defaults);
    r.Object("thresholds", file.thresholds);
    if (r.ok() && !r.Has("scenarios")) r.Fail("scenarios", "missing");
    r.Any("scenarios", entries);
    r.Message("replay",
              [&](JsonReader& replay) { ReadReplaySteps(replay, options.time_scale, file); });
    if (Status st = r.Finish(); !st.ok()) return fail(st.error().message);
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
    auto s = ReadScenario(entry, i, one_object ? "" : fmt::format("[{}]", i), path, options);
    if (!s.ok()) {
      std::istringstream lines(s.error().message);
      for (std::string line; std::getline(lines, line);) problems.push_back(prefix + line);
      continue;
    }
    file.scenarios.push_back(std::move(*s));
  }
  if (!problems.empty()) return fail(fmt::format("{}", fmt::join(problems, "\n")));
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
