#include "plan/profile_results.h"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "plan/profile_run.h"
#include "util/time.h"

namespace kfpbench::plan {
namespace {

std::optional<double> Number(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::vector<double> Numbers(const nlohmann::json& j, const char* key) {
  std::vector<double> out;
  auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return out;
  for (const auto& v : *it) {
    if (v.is_number()) out.push_back(v.get<double>());
  }
  return out;
}

// {"peak": x, "p95": y} (p95 defaults to the peak).
std::optional<Usage> UsageObject(const nlohmann::json& j) {
  if (!j.is_object()) return std::nullopt;
  auto peak = Number(j, "peak");
  if (!peak) return std::nullopt;
  return Usage{*peak, Number(j, "p95").value_or(*peak)};
}

std::optional<Usage> Flat(const nlohmann::json& task, const char* peak_key, const char* p95_key) {
  auto peak = Number(task, peak_key);
  if (!peak) return std::nullopt;
  return Usage{*peak, Number(task, p95_key).value_or(*peak)};
}

Duration TaskDuration(const nlohmann::json& task) {
  auto start = ParseRfc3339(task.value("started_at", ""));
  auto end = ParseRfc3339(task.value("finished_at", ""));
  if (!start.ok() || !end.ok() || *end <= *start) return Duration::zero();
  return *end - *start;
}

}  // namespace

const nlohmann::json* RunRecords(const nlohmann::json& results) {
  auto runs = results.find("runs");
  if (runs == results.end()) return nullptr;
  if (runs->is_array()) return &*runs;
  if (runs->is_object() && runs->contains("records") && (*runs)["records"].is_array()) {
    return &(*runs)["records"];
  }
  return nullptr;
}

Result<std::vector<StepExecution>> ExecutionsFromResults(
    const nlohmann::json& results, const std::map<std::string, std::string>& labels) {
  const nlohmann::json* runs = RunRecords(results);
  if (runs == nullptr) return Error{"no runs.records array: not a kfpbench results.json"};
  std::vector<StepExecution> out;
  size_t tasks_seen = 0;
  for (const auto& run : *runs) {
    if (run.value("state", "") != "SUCCEEDED" || !run.contains("tasks")) continue;
    for (const auto& task : run["tasks"]) {
      if (!task.is_object() || task.value("dag", false)) continue;
      if (task.value("state", "SUCCEEDED") != "SUCCEEDED") continue;
      ++tasks_seen;
      StepExecution e;
      e.step = task.value("name", "");
      if (auto l = labels.find(e.step); l != labels.end()) e.executor_label = l->second;
      e.duration = TaskDuration(task);
      e.cpu_seconds = Number(task, "cpu_seconds").value_or(0);
      const nlohmann::json resources = task.value("resources", nlohmann::json::object());
      e.cpu_cores = Numbers(task, "cpu_cores_samples");
      e.memory_bytes = Numbers(task, "memory_bytes_samples");
      e.cpu_summary = UsageObject(resources.value("cpu_cores", nlohmann::json()));
      if (!e.cpu_summary) e.cpu_summary = Flat(task, "cpu_cores_peak", "cpu_cores_p95");
      double seconds = std::chrono::duration<double>(e.duration).count();
      if (!e.cpu_summary && Number(task, "cpu_seconds") && seconds > 0) {
        double average = e.cpu_seconds / seconds;
        e.cpu_summary = Usage{average, average};
      }
      e.memory_summary = UsageObject(resources.value("memory_bytes", nlohmann::json()));
      if (!e.memory_summary) e.memory_summary = Flat(task, "memory_bytes_peak", "memory_bytes_p95");
      // What `run --prometheus` records per step (see docs/RESULTS.md).
      if (!e.memory_summary)
        e.memory_summary = Flat(task, "peak_memory_bytes", "peak_memory_bytes");
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

void AnnotateResults(nlohmann::json& results, const std::vector<StepExecution>& executions) {
  auto it = results.find("runs");
  if (it == results.end()) return;
  nlohmann::json* runs = it->is_array() ? &*it : nullptr;
  if (it->is_object() && it->contains("records")) runs = &(*it)["records"];
  if (runs == nullptr || !runs->is_array()) return;
  for (auto& run : *runs) {
    if (!run.contains("tasks")) continue;
    const std::string run_id = run.value("run_id", "");
    for (auto& task : run["tasks"]) {
      if (task.value("dag", false)) continue;
      for (const auto& e : executions) {
        if (e.run_id != run_id || e.step != task.value("name", "")) continue;
        ProfileReport one = BuildProfile({e}, {});
        const StepProfile& s = one.steps.front();
        task["resources"] = {
            {"cpu_cores", {{"peak", s.cpu_cores.peak}, {"p95", s.cpu_cores.p95}}},
            {"memory_bytes", {{"peak", s.memory_bytes.peak}, {"p95", s.memory_bytes.p95}}},
            {"samples", s.samples}};
        task["cpu_seconds"] = e.cpu_seconds;
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
  std::ifstream in(file, std::ios::binary);
  if (!in) return Error{fmt::format("cannot read {}", file.string())};
  std::ostringstream text;
  text << in.rdbuf();
  auto results = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (results.is_discarded() || !results.is_object()) {
    return Error{fmt::format("{}: not valid JSON", file.string())};
  }
  std::map<std::string, std::string> labels;
  if (pipeline != nullptr) labels = ExecutorLabels(*pipeline);
  auto executions = ExecutionsFromResults(results, labels);
  if (!executions.ok())
    return Error{fmt::format("{}: {}", file.string(), executions.error().message)};
  ProfileReport report = BuildProfile(*executions, options);
  report.pipeline = pipeline != nullptr ? pipeline->name : "(from results)";
  report.source = file.string();
  int runs = 0;
  for (const auto& run : *RunRecords(results)) runs += run.value("state", "") == "SUCCEEDED";
  report.repeats = runs;
  return report;
}

}  // namespace kfpbench::plan
