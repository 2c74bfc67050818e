#include "cli/preflight.h"

#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "cli/target_config.h"
#include "engine/run_parameters.h"
#include "harness/runner.h"
#include "ir/pipeline_spec.h"
#include "report/thresholds.h"

namespace kfpbench::cli {
namespace {

Result<ir::PipelineSpec> LoadPipeline(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{"cannot read pipeline file " + path.string()};
  std::stringstream text;
  text << in.rdbuf();
  auto spec = ir::ParsePipelineSpec(text.str());
  if (!spec.ok()) return Error{fmt::format("{}: {}", path.string(), spec.error().message)};
  return spec;
}

// The modes whose runs carry the scenario's params as runtime parameters.
bool RunsWithParams(harness::Mode mode) {
  return mode == harness::Mode::kPipelineRun || mode == harness::Mode::kExperiment ||
         mode == harness::Mode::kScheduledRuns || mode == harness::Mode::kLargeDataset;
}

void AddLines(std::vector<std::string>& out, const std::string& prefix, const std::string& text) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) out.push_back(prefix + line);
}

}  // namespace

Preflight CheckScenarioFile(const harness::ScenarioFile& file) {
  Preflight out;
  const std::string name = file.path.string();
  const bool object_form = file.source.is_object() && file.source.contains("scenarios");
  std::map<std::filesystem::path, Result<ir::PipelineSpec>> pipelines;  // each parsed once
  for (const auto& s : file.scenarios) {
    const std::string at = fmt::format("{}: {}[{}]", name, object_form ? "scenarios" : "", s.index);
    if (auto r = harness::MakeRunner(s.mode); !r.ok()) {
      out.problems.push_back(fmt::format("{}.mode: {}", at, r.error().message));
    }
    if (auto t = s.source.find("runTime"); t != s.source.end() && t->is_number()) {
      out.notes.push_back(fmt::format(
          "{}.runTime: {} is minutes (perf-tests' unit); write \"{}m\" or a duration such as "
          "\"30s\" to say so",
          at, t->dump(), t->dump()));
    }
    if (s.pipeline_path.empty()) continue;
    auto it = pipelines.find(s.pipeline_path);
    if (it == pipelines.end())
      it = pipelines.emplace(s.pipeline_path, LoadPipeline(s.pipeline_path)).first;
    if (!it->second.ok()) {
      out.problems.push_back(
          fmt::format("{}.pipelineFileName: {}", at, it->second.error().message));
      continue;
    }
    if (RunsWithParams(s.mode)) {
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

}  // namespace kfpbench::cli
