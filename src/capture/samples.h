// What Derive reads from runs.jsonl in one pass, a line at a time: per step,
// per pipeline version and per run, the samples the models, the simulator's
// files and the capture's page are made of.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/result.h"
#include "util/time.h"

namespace kfpbench::capture {

struct StepSamples {
  std::vector<double> durations;  // SUCCEEDED executions, start -> end
  std::vector<double> overheads;  // create -> start, every execution
  int64_t succeeded = 0, failed = 0, cached = 0, not_run = 0, other = 0;
  int64_t attempts = 0, retried = 0;
};

struct VersionSamples {
  std::string pipeline_name;
  int64_t runs = 0, censored = 0;
  std::map<std::string, int64_t> states;
  std::vector<double> run_seconds;                          // created -> finished, final runs
  std::vector<std::pair<double, nlohmann::json>> arrivals;  // offset, parameters kept as given
};

// A run on the capture's clock, seconds from its first run: when it arrived
// and ended (nullopt: censored, or its end is unknown).
struct RunSpan {
  double created = 0;
  std::optional<double> finished;
  bool failed = false;
};

struct Samples {
  std::map<std::string, StepSamples> steps;       // executor label
  std::map<std::string, StepSamples> unlabelled;  // version/task, spec missing
  std::map<std::string, VersionSamples> versions;
  std::map<std::string, int64_t> run_states;
  std::vector<WallTime> arrivals;
  std::vector<double> run_seconds;
  std::vector<RunSpan> spans;
  // arrivals.csv, and the whole mix's simulator arrivals (offset, version).
  std::string arrivals_csv = "created_at,offset_seconds,pipeline_version,run_id,state\n";
  std::string mix_csv = "offset,pipeline\n";
  std::optional<WallTime> first, last_finished;
  int64_t runs = 0, censored = 0, tasks = 0;
  int64_t negative = 0;  // intervals that ended before they started: clock skew

  void AddRun(const nlohmann::json& run);

 private:
  void AddTask(const nlohmann::json& task, const std::string& version, bool censored);
};

// Reads the folder's runs.jsonl into `samples`.
Status ReadSamples(const std::filesystem::path& runs_file, Samples& samples);

}  // namespace kfpbench::capture
