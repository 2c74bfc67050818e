// CLUSTER.yaml and WORKLOAD.yaml for `kfpbench simulate` and `plan`. Strict:
// unknown keys and malformed values are errors naming the key.
#pragma once

#include <filesystem>
#include <string_view>

#include "sim/model.h"
#include "util/result.h"

namespace kfpbench::sim {

Result<ClusterSpec> ParseCluster(std::string_view yaml);
Result<ClusterSpec> LoadCluster(const std::filesystem::path& path);

// Relative paths in the workload (pipeline, arrivals CSV, calibration) are
// resolved against `base_dir`.
Result<WorkloadSpec> ParseWorkload(std::string_view yaml, const std::filesystem::path& base_dir);
Result<WorkloadSpec> LoadWorkload(const std::filesystem::path& path);

// "Monday x 3": `factor` times the runs over the same time. CSV arrivals: each
// row stands for `factor` runs (fractions carried to the next row), spread
// evenly over the gap to the next recorded arrival, so the rate by hour keeps
// its shape; a rate is multiplied; other kinds take `factor` times the runs.
Status ScaleArrivals(WorkloadSpec& workload, double factor);

// Arrivals from CSV text: a header row; an `offset` column (a duration such
// as "90s", or seconds) if present, every other column a run parameter
// (numbers stay numbers, everything else is a string).
Result<std::vector<Arrival>> ParseArrivalsCsv(std::string_view csv);

// Step models from a calibration file (`kfpbench calibrate` writes it):
// {"steps": {"exec-x": {"duration": "lognormal:..", "overhead": "1.2s"}},
//  "default": {...}, "artifactStore": {"bandwidth": 4194304, "sharing": "fair"}}.
Result<CalibratedModels> ParseCalibration(std::string_view text);

}  // namespace kfpbench::sim
