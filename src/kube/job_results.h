// Results of a job sweep: one row per run, Kubebench-style CSV and a
// results.json section.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kube/job_config.h"

namespace kfpbench::kube {

struct JobRunResult {
  std::string job_name;
  int index = 0;
  Params params;  // the user's parameters (no built-ins)
  bool succeeded = false;
  std::string error;  // why it failed, with the failing replica's log tail
  double duration_seconds = 0;
  std::map<std::string, std::optional<double>> metrics;
};

struct JobSweepResult {
  std::string config_name;
  std::string kind;
  std::string driver;
  std::vector<JobRunResult> runs;
  // The parameters the sweep sets (sorted): the report charts each metric
  // against each of them.
  std::vector<std::string> swept = {};
};

// Parameters as they appear in a result: defaults and sweep values, without
// the built-ins (job_name, namespace, config_dir).
Params UserParams(const Params& params);

// Header: config,run,job_name,status,duration_s,<params...>,<metrics...>;
// a metric no replica logged is an empty cell.
std::string ToCsv(const JobSweepResult& result);
nlohmann::json ToJson(const JobSweepResult& result);

}  // namespace kfpbench::kube
