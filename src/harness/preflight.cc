#include "harness/preflight.h"

#include <map>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "engine/run_parameters.h"
#include "harness/modes.h"
#include "harness/target_config.h"
#include "ir/pipeline_spec.h"
#include "report/thresholds.h"
#include "util/time.h"

namespace kfpbench::harness {
namespace {

// The text is kept for the upload, which then reads nothing again.
Result<ir::PipelineSpec> LoadPipeline(const std::filesystem::path& path,
                                      std::map<std::string, std::string>& texts) {
  std::string text;
  auto spec = ir::LoadPipelineSpec(path, &text);
  if (!text.empty()) texts[path.string()] = std::move(text);
  return spec;
}

void AddLines(std::vector<std::string>& out, const std::string& prefix, const std::string& text) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) out.push_back(prefix + line);
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

}  // namespace

Preflight CheckScenarioFile(const ScenarioFile& file) {
  Preflight out;
  const std::string name = file.path.string();
  const bool object_form = file.source.is_object() && file.source.contains("scenarios");
  std::map<std::filesystem::path, Result<ir::PipelineSpec>> pipelines;  // each parsed once
  for (const auto& s : file.scenarios) {
    const std::string at = fmt::format("{}: {}[{}]", name, object_form ? "scenarios" : "", s.index);
    if (auto t = s.source.find("runTime"); t != s.source.end() && t->is_number()) {
      out.notes.push_back(fmt::format(
          "{}.runTime: {} is minutes (perf-tests' unit); write \"{}m\" or a duration such as "
          "\"30s\" to say so",
          at, t->dump(), t->dump()));
    }
    PlanStress(s, at, out);
    PlanGrowth(s, at, out);
    if (s.pipeline_path.empty()) continue;
    auto it = pipelines.find(s.pipeline_path);
    if (it == pipelines.end())
      it = pipelines.emplace(s.pipeline_path, LoadPipeline(s.pipeline_path, out.pipeline_texts))
               .first;
    if (!it->second.ok()) {
      out.problems.push_back(
          fmt::format("{}.pipelineFileName: {}", at, it->second.error().message));
      continue;
    }
    if (s.mode->starts_runs) {
      auto params = engine::ResolveRunParameters(*it->second, s.params);
      if (!params.ok()) {
        out.problems.push_back(fmt::format("{}.params: {}", at, params.error().message));
      }
    }
  }
  if (auto t = report::ParseThresholds(file.thresholds); !t.ok()) {
    AddLines(out.problems, name + ": ", t.error().message);
  }
  if (file.target.is_object() && !file.target.empty()) {
    if (auto t = ParseScenarioTarget(file.target, name); !t.ok()) {
      out.problems.push_back(t.error().message);
    }
  }
  return out;
}

Result<ScenarioFile> LoadCheckedScenarioFile(const std::filesystem::path& path,
                                             const LoadOptions& options, const std::string& shard) {
  auto file = LoadScenarioFile(path, options);
  if (!file.ok()) return file.error();
  // Refuse up front, with validate's words, what would fail midway.
  auto preflight = CheckScenarioFile(*file);
  if (!preflight.problems.empty()) {
    return Error{fmt::format("{}", fmt::join(preflight.problems, "\n"))};
  }
  for (const auto& note : preflight.notes) spdlog::info("{}", note);
  file->pipeline_texts = std::move(preflight.pipeline_texts);
  if (!shard.empty()) {
    if (Status s = ApplyShard(*file, shard); !s.ok()) return s.error();
  }
  return file;
}

}  // namespace kfpbench::harness
