#include "harness/preflight.h"

#include <algorithm>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "engine/run_parameters.h"
#include "exec/process_executor.h"
#include "harness/modes.h"
#include "harness/shapes.h"
#include "harness/target_config.h"
#include "ir/pipeline_spec.h"
#include "kube/images.h"
#include "report/thresholds.h"
#include "util/time.h"

namespace kfpbench::harness {
namespace {

// A load this long is worth an estimate before it starts, and the hint that
// --time-scale shortens it.
constexpr Duration kLongRun = std::chrono::minutes(2);

// The text is kept for the upload, which then reads nothing again.
Result<ir::PipelineSpec> LoadPipeline(const std::filesystem::path& path,
                                      std::map<std::string, std::string>& texts) {
  std::string text;
  auto spec = ir::LoadPipelineSpec(path, &text);
  if (!text.empty()) texts[path.string()] = std::move(text);
  return spec;
}

// "executor 'exec-add' (image python:3.9) is a Python component of KFP's
// SDK" out of the executor's whole refusal (exec::CheckRunsAsProcesses).
std::string ShortReason(const std::string& refusal) {
  size_t end = refusal.find(';');
  return end == std::string::npos ? refusal : refusal.substr(0, end);
}

void AddLines(std::vector<std::string>& out, const std::string& prefix, const std::string& text) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) out.push_back(prefix + line);
}

}  // namespace

Preflight CheckScenarioFile(const ScenarioFile& file, const PreflightOptions& options) {
  Preflight out;
  const bool check_processes = !options.remote_target && options.executor != "stub";
  std::vector<std::string> stubbed;  // pipeline files that cannot run as processes
  std::string stub_reason;
  const std::string name = file.path.string();
  const bool object_form = file.source.is_object() && file.source.contains("scenarios");
  std::map<std::filesystem::path, Result<ir::PipelineSpec>> pipelines;  // each parsed once
  std::vector<std::string> unpullable;  // pipeline files whose steps name the placeholder image
  std::vector<std::string> in_minutes;  // runTimes written as bare numbers: perf-tests' minutes
  Duration longest{};                   // when the last scenario's runTime ends
  for (const auto& s : file.scenarios) {
    const std::string at = fmt::format("{}: {}[{}]", name, object_form ? "scenarios" : "", s.index);
    if (auto t = s.source.find("runTime"); t != s.source.end() && t->is_number()) {
      in_minutes.push_back(fmt::format("[{}] {}", s.index, t->dump()));
    }
    longest = std::max(longest, s.start_time + s.run_time);
    if (s.shape != nullptr && s.shape->plan != nullptr) s.shape->plan(s, at, out);
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
    if (!s.mode->starts_runs) continue;
    if (auto text = out.pipeline_texts.find(s.pipeline_path.string());
        options.remote_target && options.image.empty() && text != out.pipeline_texts.end() &&
        text->second.find(kube::kUnpublishedImage) != std::string::npos) {
      std::string file_name = s.pipeline_path.filename().string();
      if (std::find(unpullable.begin(), unpullable.end(), file_name) == unpullable.end()) {
        unpullable.push_back(file_name);
      }
    }
    auto params = engine::ResolveRunParameters(*it->second, s.params);
    if (!params.ok()) {
      out.problems.push_back(fmt::format("{}.params: {}", at, params.error().message));
    }
    if (!check_processes) continue;
    Status runs = exec::CheckRunsAsProcesses(*it->second);
    if (runs.ok()) continue;
    if (!options.executor.empty()) {
      // --executor process: CreateRun would refuse every run of it.
      out.problems.push_back(fmt::format("{}.pipelineFileName: {}", at, runs.error().message));
    } else if (std::string file_name = s.pipeline_path.filename().string();
               std::find(stubbed.begin(), stubbed.end(), file_name) == stubbed.end()) {
      stubbed.push_back(file_name);
      if (stub_reason.empty()) stub_reason = runs.error().message;
    }
  }
  if (!in_minutes.empty()) {
    // Said once for the file, however many scenarios write it so.
    out.notes.push_back(fmt::format(
        "{}: runTime {} {} minutes (perf-tests' unit); write \"10m\" or a duration such as "
        "\"30s\" to say so",
        name, fmt::join(in_minutes, ", "), in_minutes.size() == 1 ? "is" : "are"));
  }
  if (longest >= kLongRun) {
    out.notes.push_back(fmt::format(
        "the load runs for about {} (until the last scenario's startTime + runTime){}",
        FormatDuration(longest),
        file.time_scale == 1
            ? fmt::format("; --time-scale 0.1 multiplies every time in the file by 0.1 (about {})",
                          FormatDuration(longest / 10))
            : fmt::format(", times x{} already applied (--time-scale)", file.time_scale)));
  }
  const bool replay = !file.stub_durations.empty() && options.executor.empty();
  if (!options.remote_target) {
    out.executor = options.executor.empty() ? (stubbed.empty() && !replay ? "process" : "stub")
                                            : options.executor;
  }
  if (replay && !options.remote_target && stubbed.empty()) {
    out.executor_reason = fmt::format(
        "the file replays a capture: every step runs as a timed stub with the step times it "
        "recorded{}",
        file.time_scale != 1 ? fmt::format(", times x{}", file.time_scale) : "");
    out.notes.push_back("the embedded backend's executor is stub: " + out.executor_reason);
  }
  if (!stubbed.empty()) {
    out.executor_reason = fmt::format(
        "{} cannot run as processes on this host ({}), so every step runs as a timed stub "
        "holding its CPU and memory requests: the benchmark measures KFP's API and control "
        "plane, as perf-tests does. --executor process refuses such pipelines instead; --host "
        "runs them on a real KFP",
        fmt::join(stubbed, ", "), ShortReason(stub_reason));
    out.notes.push_back("the embedded backend's executor is stub: " + out.executor_reason);
  }
  if (!unpullable.empty()) {
    // A note, not a refusal: a kfpbench serve target runs these steps itself.
    out.notes.push_back(fmt::format(
        "the steps of {} run {}, an image no registry publishes: a KFP cluster cannot pull it, "
        "so their runs would wait on the pull until they time out. Build the image from the "
        "Dockerfile, push it and name it in the pipeline (kube loadgen --image does this for the "
        "files it ships); a kfpbench serve target runs the steps itself",
        fmt::join(unpullable, ", "), kube::kUnpublishedImage));
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

Status PrepareScenarioFile(ScenarioFile& file, const PreflightOptions& options,
                           const std::string& shard) {
  // Refuse up front, with validate's words, what would fail midway.
  auto preflight = CheckScenarioFile(file, options);
  if (!preflight.problems.empty()) {
    return Error{fmt::format("{}", fmt::join(preflight.problems, "\n"))};
  }
  for (const auto& note : preflight.notes) spdlog::info("{}", note);
  file.pipeline_texts = std::move(preflight.pipeline_texts);
  file.executor = std::move(preflight.executor);
  file.executor_reason = std::move(preflight.executor_reason);
  if (!shard.empty()) return ApplyShard(file, shard);
  return Ok();
}

Result<ScenarioFile> LoadCheckedScenarioFile(const std::filesystem::path& path,
                                             const LoadOptions& options, const std::string& shard,
                                             const PreflightOptions& preflight) {
  auto file = LoadScenarioFile(path, options);
  if (!file.ok()) return file.error();
  if (Status s = PrepareScenarioFile(*file, preflight, shard); !s.ok()) return s.error();
  return file;
}

}  // namespace kfpbench::harness
