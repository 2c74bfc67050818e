// `kfpbench profile PIPELINE`: runs the pipeline on the embedded backend with
// the process executor and no requests or limits, samples every step's process
// group (exec::ResourceSampler), and turns the samples into a ProfileReport.
#pragma once

#include <atomic>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/pipeline_spec.h"
#include "plan/profile.h"
#include "results/results.h"
#include "util/result.h"

namespace kfpbench::plan {

struct ProfileRunOptions {
  std::filesystem::path pipeline_path;
  std::vector<std::pair<std::string, std::string>> params;  // from --params k=v
  int repeats = 1;
  Duration sample_interval = std::chrono::milliseconds(100);
  Duration run_timeout = std::chrono::hours(1);  // per run
  std::string self_binary;  // what a step's "kfpbench" runs; empty: this program
  ProfileOptions profile;
  const std::atomic<bool>* interrupted = nullptr;
};

struct ProfileRun {
  ProfileReport report;
  // The profiled runs as a benchmark (results.json), so `kfpbench calibrate`
  // fits step durations from the same runs.
  results::BenchmarkResults results;
  // The pipeline's IR with the recommended requests and limits.
  nlohmann::json sized_pipeline;
  // Every step execution with its samples (AnnotateResults puts them into
  // results.json).
  std::vector<StepExecution> executions;
};

// Errors: BadInput() for bad input (unreadable or invalid pipeline, bad params),
// any other Error when the backend or a run failed.
Result<ProfileRun> ProfileOnEmbeddedBackend(const ProfileRunOptions& options);

// The IR without any requests or limits, so no step is throttled or placed
// by what it asks for while it is measured.
nlohmann::json WithoutResources(const nlohmann::json& pipeline_spec);

}  // namespace kfpbench::plan
