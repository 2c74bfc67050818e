#include "harness/shapes.h"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/modes.h"
#include "harness/preflight.h"
#include "util/time.h"

namespace kfpbench::harness {
namespace {

using nlohmann::json;

// {"stepTime": "1m", "rateFactor": 2, "maxRate": 600,
//  "slo": {"p95": "30s", "errorRate": "1%"}}
Status ReadStress(const json& entry, const std::string& at, double time_scale, Scenario& s) {
  if (!s.rate_per_minute) return Error{at + ".rate: the stress shape starts from a rate"};
  auto v = entry.find("stress");
  if (v == entry.end() || !v->is_object()) {
    return Error{at + ".stress: required with \"shape\": \"stress\" (stepTime, slo)"};
  }
  Scenario::Stress st;
  for (const auto& [key, value] : v->items()) {
    std::string where = at + ".stress." + key;
    if (key == "stepTime") {
      auto t = ReadScenarioTime(value, where, time_scale);
      if (!t.ok()) return t.error();
      st.step_time = *t;
    } else if (key == "rateFactor") {
      if (!value.is_number() || !(value.get<double>() > 1)) {
        return Error{where + ": must be a number greater than 1"};
      }
      st.rate_factor = value.get<double>();
    } else if (key == "maxRate") {
      if (!value.is_number() || !(value.get<double>() > 0)) return Error{where + ": must be > 0"};
      st.max_rate = value.get<double>();
    } else if (key == "slo") {
      if (!value.is_object()) return Error{where + ": must be an object (p95, errorRate)"};
      for (const auto& [k, x] : value.items()) {
        if (k == "p95") {
          auto t = x.is_string() ? ParseDuration(x.get<std::string>())
                                 : Result<Duration>(Error{"must be a duration string"});
          if (!t.ok()) return Error{where + ".p95: " + t.error().message};
          st.slo_p95 = *t;
        } else if (k == "errorRate") {
          std::string text = x.is_string() ? x.get<std::string>() : x.dump();
          bool percent = !text.empty() && text.back() == '%';
          if (percent) text.pop_back();
          char* end = nullptr;
          double rate = std::strtod(text.c_str(), &end);
          if (text.empty() || end != text.c_str() + text.size() || rate < 0) {
            return Error{where + ".errorRate: must be a rate like \"1%\""};
          }
          st.slo_error_rate = percent ? rate / 100 : rate;
        } else {
          return Error{where + "." + k + ": unknown field (known: p95, errorRate)"};
        }
      }
    } else {
      return Error{where + ": unknown field (known: stepTime, rateFactor, maxRate, slo)"};
    }
  }
  if (st.step_time <= Duration::zero()) return Error{at + ".stress.stepTime: required, > 0"};
  if (st.slo_p95 <= Duration::zero()) return Error{at + ".stress.slo.p95: required"};
  s.stress = st;
  return Ok();
}

// Far above what any KFP deployment stores; keeps every count in range.
constexpr int64_t kMaxGrowthLevel = 100'000'000;

Result<int64_t> WholeNumber(const json& value, const std::string& where, int64_t low,
                            int64_t high) {
  if (!value.is_number_integer() || value.get<int64_t>() < low || value.get<int64_t>() > high ||
      (value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(high))) {
    return Error{fmt::format("{}: must be a whole number from {} to {} (got {})", where, low, high,
                             value.dump())};
  }
  return value.get<int64_t>();
}

// growth.levels: increasing run counts, each from 1 to kMaxGrowthLevel.
Result<std::vector<int64_t>> ReadGrowthLevels(const json& value, const std::string& where) {
  if (!value.is_array() || value.empty()) {
    return Error{where + ": must be a non-empty array of run counts, e.g. [1000, 10000]"};
  }
  std::vector<int64_t> levels;
  for (size_t i = 0; i < value.size(); ++i) {
    std::string item = fmt::format("{}[{}]", where, i);
    const json& level = value[i];
    if (!level.is_number()) {
      return Error{fmt::format("{}: must be a number of runs (got {})", item, level.dump())};
    }
    if (!level.is_number_integer()) {
      return Error{fmt::format("{}: must be a whole number of runs (got {})", item, level.dump())};
    }
    if (level.get<int64_t>() <= 0 || level.get<int64_t>() > kMaxGrowthLevel ||
        (level.is_number_unsigned() &&
         level.get<uint64_t>() > static_cast<uint64_t>(kMaxGrowthLevel))) {
      return Error{fmt::format("{}: must be from 1 to {} runs (got {})", item, kMaxGrowthLevel,
                               level.dump())};
    }
    int64_t runs = level.get<int64_t>();
    if (!levels.empty() && runs <= levels.back()) {
      return Error{
          fmt::format("{}: levels must increase ({} follows {}); each level adds runs to the last",
                      item, runs, levels.back())};
    }
    levels.push_back(runs);
  }
  return levels;
}

// {"levels": [1000, 10000, 100000], "measureTime": "30s", "fillConcurrency": 8, ...}
Status ReadGrowth(const json& entry, const std::string& at, double time_scale, Scenario& s) {
  if (s.rate_per_minute) {
    return Error{at + ".rate: the growth shape fills and measures in closed loop; remove rate"};
  }
  auto v = entry.find("growth");
  if (v == entry.end() || !v->is_object()) {
    return Error{at + ".growth: required with \"shape\": \"growth\" (levels, measureTime)"};
  }
  Scenario::Growth g;
  for (const auto& [key, value] : v->items()) {
    std::string where = at + ".growth." + key;
    if (key == "levels") {
      auto levels = ReadGrowthLevels(value, where);
      if (!levels.ok()) return levels.error();
      g.levels = std::move(*levels);
    } else if (key == "measureTime") {
      auto t = ReadScenarioTime(value, where, time_scale);
      if (!t.ok()) return t.error();
      g.measure_time = *t;
    } else if (key == "settleTimeout") {
      auto t = ReadScenarioTime(value, where, time_scale);
      if (!t.ok()) return t.error();
      g.settle_timeout = *t;
    } else if (key == "fillConcurrency" || key == "measureConcurrency" ||
               key == "runsPerExperiment" || key == "runsPerPipeline" ||
               key == "versionsPerPipeline") {
      int64_t high = key == "fillConcurrency" || key == "measureConcurrency" ? 256
                     : key == "versionsPerPipeline"                          ? 100
                                                                             : kMaxGrowthLevel;
      auto n = WholeNumber(value, where, 1, high);
      if (!n.ok()) return n.error();
      int as_int = static_cast<int>(*n);
      if (key == "fillConcurrency") g.fill_concurrency = as_int;
      if (key == "measureConcurrency") g.measure_concurrency = as_int;
      if (key == "runsPerExperiment") g.runs_per_experiment = as_int;
      if (key == "runsPerPipeline") g.runs_per_pipeline = as_int;
      if (key == "versionsPerPipeline") g.versions_per_pipeline = as_int;
    } else if (key == "extrapolateTo") {
      auto n = WholeNumber(value, where, 0, int64_t{1} << 40);
      if (!n.ok()) return n.error();
      g.extrapolate_to = *n;
    } else {
      return Error{where +
                   ": unknown field (known: levels, measureTime, fillConcurrency, "
                   "measureConcurrency, runsPerExperiment, runsPerPipeline, versionsPerPipeline, "
                   "settleTimeout, extrapolateTo)"};
    }
  }
  if (g.levels.empty()) return Error{at + ".growth.levels: required, e.g. [1000, 10000, 100000]"};
  if (g.measure_time <= Duration::zero()) {
    return Error{at + ".growth.measureTime: required, > 0 (how long the mix runs at each level)"};
  }
  s.growth = std::move(g);
  return Ok();
}

// A stress search runs one step of stepTime per rate, multiplying the rate
// by rateFactor, until the SLO breaks, maxRate is passed or runTime ends.
// Says which rates runTime holds; a runTime that holds no step is a problem,
// one that ends before maxRate a note (the search may end without breaking).
void PlanStress(const Scenario& s, const std::string& at, Preflight& out) {
  if (!s.stress || !s.rate_per_minute || *s.rate_per_minute <= 0) return;
  const Scenario::Stress& st = *s.stress;
  if (st.step_time <= Duration::zero() || st.rate_factor <= 1) return;
  const auto fits = static_cast<int>(s.run_time / st.step_time);
  if (fits == 0) {
    out.problems.push_back(fmt::format("{}.runTime: {} is shorter than one stress step ({})", at,
                                       FormatDuration(s.run_time), FormatDuration(st.step_time)));
    return;
  }
  std::vector<std::string> rates;
  double rate = *s.rate_per_minute;
  int steps = 0;
  for (; steps < fits && (st.max_rate <= 0 || rate <= st.max_rate);
       ++steps, rate *= st.rate_factor) {
    if (rates.size() < 8) rates.push_back(fmt::format("{:g}", rate));
  }
  if (steps > static_cast<int>(rates.size())) rates.push_back("…");
  out.notes.push_back(
      fmt::format("{}.stress: {} step(s) of {} at {} runs/min, until the SLO breaks", at, steps,
                  FormatDuration(st.step_time), fmt::join(rates, ", ")));
  if (st.max_rate > 0 && rate <= st.max_rate) {
    int needed = steps;
    for (double r = rate; r <= st.max_rate; r *= st.rate_factor) ++needed;
    out.notes.push_back(fmt::format(
        "{}.stress: reaching maxRate {:g}/min takes {} steps ({}), but runTime {} holds {}: the "
        "search may end with the SLO still holding",
        at, st.max_rate, needed, FormatDuration(st.step_time * needed), FormatDuration(s.run_time),
        steps));
  }
}

// A growth scenario fills to each level and measures there for measureTime:
// runTime must at least hold every level's measurement (the fills come on
// top, at a rate only the target knows). Says what the last level creates.
void PlanGrowth(const Scenario& s, const std::string& at, Preflight& out) {
  if (!s.growth) return;
  const Scenario::Growth& g = *s.growth;
  const int64_t top = g.levels.back();
  const auto levels = static_cast<int64_t>(g.levels.size());
  const Duration measuring = g.measure_time * levels;
  if (s.run_time < measuring) {
    out.problems.push_back(fmt::format(
        "{}.runTime: {} cannot hold {} level(s) of growth.measureTime {} ({}), let alone the fills",
        at, FormatDuration(s.run_time), levels, FormatDuration(g.measure_time),
        FormatDuration(measuring)));
    return;
  }
  out.notes.push_back(fmt::format(
      "{}.growth: {} level(s) up to {} runs stored ({} experiments, {} pipelines of {} "
      "version(s) at the top), filled {} CreateRun at a time, then {} of the mix at each level "
      "with {} worker(s); runTime {} bounds it all",
      at, levels, top, (top + g.runs_per_experiment - 1) / g.runs_per_experiment,
      (top + g.runs_per_pipeline - 1) / g.runs_per_pipeline, g.versions_per_pipeline,
      g.fill_concurrency, FormatDuration(g.measure_time), g.measure_concurrency,
      FormatDuration(s.run_time)));
}

// Each shard's share of the rate search's ceiling, as the rates themselves
// are divided.
Status ShardStress(Scenario& s, int count) {
  s.stress->max_rate /= count;
  return Ok();
}

// Levels count the runs one target stores: N processes filling it would each
// count the others' runs.
Status ShardGrowth(Scenario& s, int /*count*/) {
  return Error{fmt::format(
      "--shard: scenario [{}] has the growth shape, whose levels count the runs one target "
      "stores; run it from one process",
      s.index)};
}

// "mode PIPELINE_RUN", "modes PIPELINE_RUN, EXPERIMENT": the modes that take `shape`.
std::string ModesTaking(const ShapeSpec& shape) {
  std::vector<std::string_view> names;
  for (const ModeSpec* mode : Modes()) {
    if (TakesShape(*mode, shape)) names.push_back(mode->name);
  }
  return fmt::format("{} {}", names.size() == 1 ? "mode" : "modes", fmt::join(names, ", "));
}

}  // namespace

const ShapeSpec& SmokeShape() {
  static const ShapeSpec shape{.name = "smoke", .every_mode = true};
  return shape;
}
const ShapeSpec& LoadShape() {
  static const ShapeSpec shape{.name = "load", .every_mode = true};
  return shape;
}
// Open-loop steps of rising rate until the SLO breaks (PipelineRunRunner::RunStress).
const ShapeSpec& StressShape() {
  static const ShapeSpec shape{.name = "stress",
                               .field = "stress",
                               .read = ReadStress,
                               .plan = PlanStress,
                               .shard = ShardStress};
  return shape;
}
const ShapeSpec& SoakShape() {
  static const ShapeSpec shape{.name = "soak", .every_mode = true};
  return shape;
}
// Fill to each level of runs stored, then measure a mix there (harness/growth_runner.h).
const ShapeSpec& GrowthShape() {
  static const ShapeSpec shape{.name = "growth",
                               .field = "growth",
                               .read = ReadGrowth,
                               .plan = PlanGrowth,
                               .shard = ShardGrowth};
  return shape;
}

std::span<const ShapeSpec* const> Shapes() {
  static const ShapeSpec* const kShapes[] = {
      &SmokeShape(), &LoadShape(), &StressShape(), &SoakShape(), &GrowthShape(),
  };
  return kShapes;
}

const ShapeSpec* FindShape(std::string_view name) {
  for (const ShapeSpec* shape : Shapes()) {
    if (shape->name == name) return shape;
  }
  return nullptr;
}

std::string ShapeList() {
  std::string out;
  const auto shapes = Shapes();
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (i > 0) out += i + 1 == shapes.size() ? " or " : ", ";
    out += shapes[i]->name;
  }
  return out;
}

bool TakesShape(const ModeSpec& mode, const ShapeSpec& shape) {
  return shape.every_mode ||
         std::find(mode.shapes.begin(), mode.shapes.end(), shape.name) != mode.shapes.end();
}

Status ReadShape(const json& entry, const std::string& at, double time_scale, Scenario& scenario) {
  const ShapeSpec* shape = nullptr;
  if (auto v = entry.find("shape"); v != entry.end()) {
    if (v->is_string()) shape = FindShape(v->get<std::string>());
    if (shape == nullptr) {
      return Error{fmt::format("{}.shape: must be {} (got {})", at, ShapeList(), v->dump())};
    }
  }
  for (const ShapeSpec* other : Shapes()) {
    if (other == shape || other->field.empty() || !entry.contains(other->field)) continue;
    return Error{fmt::format("{}.{}: goes with \"shape\": \"{}\"", at, other->field, other->name)};
  }
  scenario.shape = shape;
  if (shape == nullptr) return Ok();
  if (!TakesShape(*scenario.mode, *shape)) {
    return Error{fmt::format("{}.shape: {} works with {}", at, shape->name, ModesTaking(*shape))};
  }
  return shape->read != nullptr ? shape->read(entry, at, time_scale, scenario) : Ok();
}

}  // namespace kfpbench::harness
