#include "kube/job_results.h"

#include <fmt/format.h>

#include <set>

#include "util/files.h"
#include "util/json_reader.h"
#include "util/strings.h"

namespace kfpbench::kube {
namespace {

std::string Number(double v) { return fmt::format("{:.6g}", v); }

}  // namespace

Params UserParams(const Params& params) {
  Params out = params;
  for (const char* builtin : {"job_name", "namespace", "config_dir"}) out.erase(builtin);
  return out;
}

std::string ToCsv(const JobSweepResult& result) {
  std::set<std::string> params;
  std::set<std::string> metrics;
  for (const auto& run : result.runs) {
    for (const auto& [k, v] : run.params) params.insert(k);
    for (const auto& [k, v] : run.metrics) metrics.insert(k);
  }
  std::string out = "config,run,job_name,status,duration_s";
  for (const auto& p : params) out.append(",").append(CsvField(p));
  for (const auto& m : metrics) out.append(",").append(CsvField(m));
  out.append("\n");
  for (const auto& run : result.runs) {
    out.append(CsvField(result.config_name))
        .append(",")
        .append(std::to_string(run.index))
        .append(",");
    out.append(CsvField(run.job_name)).append(",").append(run.succeeded ? "Succeeded" : "Failed");
    out.append(",").append(Number(run.duration_seconds));
    for (const auto& p : params) {
      out.append(",");
      auto it = run.params.find(p);
      if (it != run.params.end()) out.append(CsvField(it->second));
    }
    for (const auto& m : metrics) {
      out.append(",");
      auto it = run.metrics.find(m);
      if (it != run.metrics.end() && it->second) out.append(Number(*it->second));
    }
    out.append("\n");
  }
  return out;
}

nlohmann::json ToJson(const JobSweepResult& result) {
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& run : result.runs) {
    nlohmann::json metrics = nlohmann::json::object();
    for (const auto& [k, v] : run.metrics) {
      metrics[k] = v ? nlohmann::json(*v) : nlohmann::json(nullptr);
    }
    nlohmann::json r = {{"run", run.index},
                        {"jobName", run.job_name},
                        {"status", run.succeeded ? "Succeeded" : "Failed"},
                        {"durationSeconds", run.duration_seconds},
                        {"parameters", run.params},
                        {"metrics", metrics}};
    if (!run.error.empty()) r["error"] = run.error;
    runs.push_back(std::move(r));
  }
  return {{"config", result.config_name},
          {"kind", result.kind},
          {"driver", result.driver},
          {"swept", result.swept},
          {"runs", runs}};
}

Status WriteJobResults(const JobSweepResult& result, const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Error{fmt::format("cannot create {}: {}", dir.string(), ec.message())};
  if (auto st = WriteFileAtomically(dir / kJobResultsCsv, ToCsv(result)); !st.ok()) return st;
  nlohmann::json doc = {{"jobs", ToJson(result)}};
  // A failed run's error holds its replica's log tail, bytes of any kind.
  return WriteFileAtomically(dir / kJobResultsJson, DumpJson(doc, 2) + "\n");
}

}  // namespace kfpbench::kube
