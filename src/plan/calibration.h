// `kfpbench calibrate` as one call: measured load levels in, the simulator's
// step models and shared services fitted to them (sim/calibrate.h), the
// calibration file `simulate` reads out, and its summary in words.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "sim/calibrate.h"
#include "util/result.h"

namespace kfpbench::plan {

struct CalibrationRequest {
  std::vector<std::filesystem::path> results;  // one per load level: a folder or its results.json
  std::filesystem::path pipeline;  // maps tasks to executor labels; empty: all "default"
  std::filesystem::path cluster;   // what the levels ran on; empty: shared services not fitted
  std::map<std::string, int64_t> artifact_bytes;  // what a step uploads, by executor label
  bool fifo = false;                              // the store serves one upload at a time
  std::filesystem::path out;                      // the calibration file
};

// Loads the pipeline, the cluster and every level (a results.json kfpbench
// run wrote gives CreateRun latencies too; a hand-made {"runs": ...} run
// records only), fits with sim::CalibrateLevels and writes `out` through a
// temporary file. An error in the inputs or the fit is BadInput(); one that
// is not is the file not written.
Result<sim::Calibration> CalibrateFromFiles(const CalibrationRequest& request);

// The summary `calibrate` prints: overhead, each label's duration and
// uploads, and for several levels the shared services fitted (each level's
// measured and predicted figures) or why not.
std::string Describe(const sim::Calibration& c, const CalibrationRequest& request);

}  // namespace kfpbench::plan
