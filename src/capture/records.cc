#include "capture/records.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "util/secrets.h"
#include "util/time.h"

namespace kfpbench::capture {
namespace {

using nlohmann::json;

std::string Sha256Hex(std::string_view data, size_t digits) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(), nullptr);
  std::string hex;
  for (unsigned int i = 0; i < length && hex.size() < digits; ++i) {
    hex += fmt::format("{:02x}", digest[i]);
  }
  return hex.substr(0, digits);
}

bool LooksLikeCredential(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  for (const char* word : {"password", "passwd", "token", "secret", "key", "credential"}) {
    if (name.find(word) != std::string::npos) return true;
  }
  return false;
}

void SetTime(json& j, const char* name, WallTime t) {
  if (t != WallTime{}) j[name] = FormatRfc3339(t);
}

std::string Quantity(double cores) { return fmt::format("{:g}", cores); }

}  // namespace

json StepResources(const ir::PipelineSpec& spec) {
  json steps = json::object();
  for (const auto& [label, executor] : spec.executors) {
    if (executor.runs_in_driver()) continue;
    const ir::ResourceSpec& r = executor.container.resources;
    json s = json::object();
    if (r.cpu_request > 0) s["cpu_request"] = Quantity(r.cpu_request);
    if (r.cpu_limit > 0) s["cpu_limit"] = Quantity(r.cpu_limit);
    if (r.memory_request > 0) s["memory_request"] = r.memory_request;
    if (r.memory_limit > 0) s["memory_limit"] = r.memory_limit;
    if (!r.accelerator_type.empty()) {
      s["accelerator"] = {{"type", r.accelerator_type}, {"count", r.accelerator_count}};
    }
    if (!r.templated.empty()) s["templated"] = r.templated;
    if (!executor.scheduling.node_selector.empty()) {
      s["node_selector"] = executor.scheduling.node_selector;
    }
    for (const auto& t : executor.scheduling.tolerations) {
      s["tolerations"].push_back(
          {{"key", t.key}, {"operator", t.op}, {"value", t.value}, {"effect", t.effect}});
    }
    steps[label] = std::move(s);
  }
  return steps;
}

std::string HashedValue(const json& value) { return "sha256:" + Sha256Hex(value.dump(), 16); }

std::string VersionId(const kfp::Run& run) {
  if (!run.pipeline_version_reference_id.empty()) return run.pipeline_version_reference_id;
  return run.pipeline_version_id;
}

bool IsSafeKey(std::string_view key) {
  if (key.empty() || key.size() > 128 || key[0] == '.' || key[0] == '-') return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

std::string VersionKey(const kfp::Run& run) {
  if (std::string id = VersionId(run); !id.empty()) {
    // "id-" and "inline-" are the hashes' own: an id spelled like one is
    // hashed too, so two versions never share a file.
    bool ours = id.starts_with("id-") || id.starts_with("inline-") || id == "unknown";
    return IsSafeKey(id) && !ours ? id : "id-" + Sha256Hex(id, 32);
  }
  if (!run.pipeline_spec.is_null()) return "inline-" + Sha256Hex(run.pipeline_spec.dump(), 16);
  return "unknown";
}

json VersionFile(const std::string& key, const kfp::PipelineVersion& version, TaskLabels& labels) {
  json out = {{"key", key},
              {"pipeline_id", version.pipeline_id},
              {"pipeline_version_id", version.pipeline_version_id},
              {"name", version.name},
              {"display_name", version.display_name},
              {"missing", false}};
  SetTime(out, "created_at", version.created_at);
  if (version.pipeline_spec.is_null()) {
    out["spec"] = nullptr;
    out["spec_error"] = "the target sent no pipeline_spec (v1beta1 sends none)";
    return out;
  }
  out["spec"] = version.pipeline_spec;
  auto spec = ir::ParsePipelineSpecJson(version.pipeline_spec);
  if (!spec.ok()) {
    out["spec_error"] = spec.error().message;
    return out;
  }
  out["pipeline_name"] = spec->name;
  labels = spec->TaskExecutorLabels();
  out["steps"] = StepResources(*spec);
  return out;
}

json MissingVersionFile(const std::string& key, const std::string& version_id,
                        const std::string& pipeline_id, const std::string& reason) {
  return {{"key", key},
          {"pipeline_id", pipeline_id},
          {"pipeline_version_id", version_id},
          {"missing", true},
          {"spec", nullptr},
          {"spec_error", reason}};
}

int Attempts(const kfp::PipelineTaskDetail& task) {
  int retries = 0;
  bool ran = task.start_time != WallTime{};
  for (const auto& s : task.state_history) {
    if (s.state != RuntimeState::kRunning) continue;
    ran = true;
    if (s.error) ++retries;
  }
  return ran ? 1 + retries : 0;
}

json RunLine(const kfp::Run& run, const std::string& version_key, const TaskLabels& labels,
             const RunLineOptions& options) {
  json line = {{"run_id", run.run_id},
               {"display_name", run.display_name},
               {"experiment_id", run.experiment_id},
               {"pipeline_id", run.pipeline_id},
               {"pipeline_version", version_key},
               {"state", RuntimeStateName(run.state)},
               {"censored", !IsTerminal(run.state)}};
  SetTime(line, "created_at", run.created_at);
  SetTime(line, "scheduled_at", run.scheduled_at);
  if (IsTerminal(run.state)) SetTime(line, "finished_at", run.finished_at);
  if (run.error && !run.error->message.empty()) line["error"] = Redact(run.error->message);
  if (!run.recurring_run_id.empty()) line["recurring_run_id"] = run.recurring_run_id;
  json parameters = json::object();
  if (run.runtime_config.parameters.is_object()) {
    for (const auto& [name, value] : run.runtime_config.parameters.items()) {
      const bool keep = options.keep_parameters && !LooksLikeCredential(name);
      parameters[name] = keep ? value : json(HashedValue(value));
    }
  }
  line["parameters"] = std::move(parameters);
  line["parameters_hashed"] = !options.keep_parameters;
  json tasks = json::array();
  for (const auto& t : run.task_details) {
    json task = {{"task_id", t.task_id},
                 {"name", t.display_name},
                 {"state", RuntimeStateName(t.state)},
                 {"cached", t.state == RuntimeState::kSkipped && !t.cache_fingerprint.empty()},
                 {"attempts", Attempts(t)}};
    if (auto it = labels.find(t.display_name); it != labels.end()) task["executor"] = it->second;
    SetTime(task, "create_time", t.create_time);
    SetTime(task, "start_time", t.start_time);
    SetTime(task, "end_time", t.end_time);
    if (!t.parent_task_id.empty()) task["parent_task_id"] = t.parent_task_id;
    if (t.error && !t.error->message.empty()) task["error"] = Redact(t.error->message);
    tasks.push_back(std::move(task));
  }
  line["tasks"] = std::move(tasks);
  return line;
}

}  // namespace kfpbench::capture
