// `kfpbench calibrate` as one call: measured load levels in, the simulator's
// step models and shared services fitted to them (sim/calibrate.h), the
// calibration file `simulate` reads out, and its summary in words.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/calibrate.h"
#include "util/result.h"

namespace kfpbench::plan {

struct CalibrationRequest {
  // One per load level: a folder or its results.json; or one summary-levels
  // file (sim/summary_levels.h) holding several levels as summary figures.
  std::vector<std::filesystem::path> results;
  std::filesystem::path pipeline;  // maps tasks to executor labels; empty: all "default"
  std::filesystem::path cluster;   // what the levels ran on; empty: shared services not fitted
  std::map<std::string, int64_t> artifact_bytes;  // what a step uploads, by executor label
  bool fifo = false;                              // the store serves one upload at a time
  std::filesystem::path out;                      // the calibration file
  sim::SummaryFitOptions summary_options;         // for a summary-levels file among `results`
  std::filesystem::path html;  // with summary levels, the page of their fit; empty: none
};

// Loads the pipeline, the cluster and every level (a results.json kfpbench
// run wrote gives CreateRun latencies too; a hand-made {"runs": ...} run
// records only), fits with sim::CalibrateLevels (a summary-levels file with
// sim::FitSummaryLevels, the results' step split pinning its own) and writes
// `out`, and `html` when there are summary levels, each through a temporary
// file. An error in the inputs or the fit is BadInput(); one that
// is not is the file not written.
Result<sim::Calibration> CalibrateFromFiles(const CalibrationRequest& request);

// The summary `calibrate` prints: overhead, each label's duration and
// uploads, and for several levels the shared services fitted (each level's
// measured and predicted figures) or why not.
std::string Describe(const sim::Calibration& c, const CalibrationRequest& request);

// The summary fit (fit.summary) of the calibration file a WORKLOAD.yaml
// names, for the capacity page; null when it names none or the file has no
// summary fit.
nlohmann::json SummaryFitOfWorkload(const std::filesystem::path& workload);

// When the summary fit behind a WORKLOAD.yaml's calibration could not
// decide (its near-equal fits disagree on levels not fitted), the warning
// `plan` and `simulate` print beside their answer, with the fit's numbers;
// empty otherwise.
std::string UndecidedWarning(const std::filesystem::path& workload);

// The largest error of the summary fit behind a WORKLOAD.yaml's calibration
// on levels it did not see (held out, or left out in turn), as a fraction;
// 0 when it names no such fit or none was checked.
double UnseenError(const std::filesystem::path& workload);

// The line `plan` and `simulate` print when their figures are rounded to an
// UnseenError of `error`; empty when it is 0.
std::string PrecisionNote(double error);

}  // namespace kfpbench::plan
