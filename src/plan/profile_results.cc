#include "plan/profile_results.h"

#include "plan/pipeline_fit.h"

#include <fmt/format.h>

#include "plan/profile_run.h"
#include "results/results_json.h"
#include "util/time.h"

namespace kfpbench::plan {

Result<std::vector<StepExecution>> ExecutionsFromResults(
    const std::vector<results::RunRecord>& runs, const std::map<std::string, std::string>& labels) {
  std::vector<StepExecution> out;
  size_t tasks_seen = 0;
  auto usage = [](const std::optional<results::TaskTiming::Usage>& u) -> std::optional<Usage> {
    if (!u) return std::nullopt;
    return Usage{u->peak, u->p95};
  };
  for (const auto& run : runs) {
    if (run.state != RuntimeState::kSucceeded) continue;
    for (const auto& task : run.tasks) {
      if (task.dag) continue;
      if (task.state != RuntimeState::kSucceeded && task.state != RuntimeState::kUnspecified) {
        continue;
      }
      ++tasks_seen;
      StepExecution e;
      e.run_id = run.run_id;
      e.step = task.name;
      if (auto l = labels.find(e.step); l != labels.end()) e.executor_label = l->second;
      if (task.finished > task.started && task.started != WallTime{}) {
        e.duration = task.finished - task.started;
      }
      e.cpu_seconds = task.cpu_seconds.value_or(0);
      e.cpu_cores = task.cpu_cores_samples;
      e.memory_bytes = task.memory_bytes_samples;
      e.cpu_summary = usage(task.cpu_cores);
      double seconds = std::chrono::duration<double>(e.duration).count();
      if (!e.cpu_summary && task.cpu_seconds && seconds > 0) {
        double average = e.cpu_seconds / seconds;
        e.cpu_summary = Usage{average, average};
      }
      e.memory_summary = usage(task.memory_bytes);
      // What `run --prometheus` records per step (see docs/RESULTS.md).
      if (!e.memory_summary && task.peak_memory_bytes) {
        double peak = static_cast<double>(*task.peak_memory_bytes);
        e.memory_summary = Usage{peak, peak};
      }
      bool has_cpu = !e.cpu_cores.empty() || e.cpu_summary;
      bool has_memory = !e.memory_bytes.empty() || e.memory_summary;
      if (!has_cpu && !has_memory) continue;
      out.push_back(std::move(e));
    }
  }
  if (out.empty()) {
    return Error{fmt::format(
        "none of its {} succeeded step(s) carries resource figures (looked for tasks[].resources, "
        "cpu_cores_samples, cpu_cores_peak, cpu_seconds, memory_bytes_peak, peak_memory_bytes; see "
        "docs/CAPACITY.md)",
        tasks_seen)};
  }
  return out;
}

void AnnotateResults(std::vector<results::RunRecord>& runs,
                     const std::vector<StepExecution>& executions) {
  for (auto& run : runs) {
    for (auto& task : run.tasks) {
      if (task.dag) continue;
      for (const auto& e : executions) {
        if (e.run_id != run.run_id || e.step != task.name) continue;
        ProfileReport one = BuildProfile({e}, {});
        const StepProfile& s = one.steps.front();
        task.cpu_cores = results::TaskTiming::Usage{s.cpu_cores.peak, s.cpu_cores.p95};
        task.memory_bytes = results::TaskTiming::Usage{s.memory_bytes.peak, s.memory_bytes.p95};
        task.resource_samples = static_cast<int>(s.samples);
        task.cpu_seconds = e.cpu_seconds;
      }
    }
  }
}

Result<ProfileReport> ProfileFromResultsFile(const std::filesystem::path& path,
                                             const ir::PipelineSpec* pipeline,
                                             const ProfileOptions& options) {
  std::filesystem::path file = path;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) file /= "results.json";
  auto runs = results::LoadRunRecords(file);
  if (!runs.ok()) return runs.error();
  std::map<std::string, std::string> labels;
  if (pipeline != nullptr) labels = pipeline->TaskExecutorLabels();
  auto executions = ExecutionsFromResults(*runs, labels);
  if (!executions.ok())
    return Error{fmt::format("{}: {}", file.string(), executions.error().message)};
  ProfileReport report = BuildProfile(*executions, options);
  if (pipeline != nullptr) AddPipelineFit(*pipeline, report);
  if (pipeline != nullptr) AddRequestedAccelerators(*pipeline, report);
  report.pipeline = pipeline != nullptr ? pipeline->name : "(from results)";
  report.source = file.string();
  int succeeded = 0;
  for (const auto& run : *runs) succeeded += run.state == RuntimeState::kSucceeded;
  report.repeats = succeeded;
  return report;
}

}  // namespace kfpbench::plan
