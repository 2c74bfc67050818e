// Fits the simulator's step models from measured runs (a results.json):
// per-step duration distributions, the per-task overhead between a task
// becoming ready and starting, and the scheduling delay seen.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "ir/pipeline_spec.h"
#include "results/results.h"
#include "sim/sim_executor.h"
#include "util/result.h"

namespace kfpbench::sim {

struct Calibration {
  StepModels models;
  std::map<std::string, int64_t> samples;  // by executor label ("default" too)
  int64_t runs = 0;
  Duration overhead_p50{0};
};

// Lognormal by log-moments (median = exp(mean ln d), sigma = sd ln d); a
// constant when sigma is below 2% (a stub, or a deterministic step).
exec::DurationDist FitDuration(const std::vector<double>& seconds);

// `runs` are the run records of a results.json. Task names map to executor
// labels through `pipeline` (root DAG tasks) when given; every step also feeds
// "default". Runs that did not succeed are skipped.
Result<Calibration> Calibrate(const std::vector<results::RunRecord>& runs,
                              const ir::PipelineSpec* pipeline);
// RESULTS_DIR/results.json (or a results.json path).
Result<Calibration> CalibrateFile(const std::filesystem::path& path,
                                  const ir::PipelineSpec* pipeline);

// The file `simulate` reads back (ParseCalibration).
nlohmann::json ToJson(const Calibration& c);

}  // namespace kfpbench::sim
