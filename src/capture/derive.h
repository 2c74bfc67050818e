// What a capture derives from runs.jsonl and versions/, in plain files beside
// them: workload.json (the whole model), arrivals.csv, calibration.json (step
// models by executor label, the form `simulate` and `calibrate` read) and one
// simulator workload per pipeline version under simulate/<version>/, and
// replay.json, a scenario file that starts the captured runs again.
#pragma once

#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/model.h"
#include "util/result.h"
#include "util/time.h"

namespace kfpbench::capture {

inline constexpr const char* kWorkloadFile = "workload.json";
inline constexpr const char* kArrivalsFile = "arrivals.csv";
inline constexpr const char* kCalibrationFile = "calibration.json";
inline constexpr const char* kSimulateDir = "simulate";
// A scenario file for `kfpbench run`: one ORCHESTRATE scenario per version
// with a spec, its runs started at their recorded offsets.
inline constexpr const char* kReplayFile = "replay.json";
// The captured load as a page (capture/capture_page.h).
inline constexpr const char* kPageFile = "capture.html";

// Reads the folder's runs.jsonl a line at a time and writes the derived
// files (each atomically). The window is the manifest's or checkpoint's.
// With the cluster the history ran on, the per-step overhead is fitted on it
// (overhead_fit.h); without, it is a low quantile of created -> started.
// `overhead_note`, when given, gets a sentence on the overhead's basis.
Status Derive(const std::filesystem::path& folder, WallTime since, WallTime until,
              const sim::ClusterSpec* cluster = nullptr, std::string* overhead_note = nullptr);

// Arrivals per hour of each hour of the week (Monday 00:00 UTC first, 168
// entries): runs created in that hour of the week, over how long the window
// covered it; null where it never did.
nlohmann::json RateByHourOfWeek(const std::vector<WallTime>& arrivals, WallTime since,
                                WallTime until);

// The files of the folder, relative, for the manifest.
nlohmann::json FolderFiles(const std::filesystem::path& folder);

}  // namespace kfpbench::capture
