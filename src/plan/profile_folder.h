// `kfpbench profile` as one call: a profile from a results file's task
// figures or from runs on the embedded backend, written to a folder.
#pragma once

#include <filesystem>
#include <functional>

#include "plan/profile.h"
#include "plan/profile_run.h"
#include "util/result.h"

namespace kfpbench::plan {

struct ProfileRequest {
  // From a results.json (or its folder) whose tasks carry resource figures,
  // with `run.pipeline_path`, when given, mapping step names to executors;
  // empty: run `run.pipeline_path` on the embedded backend.
  std::filesystem::path from_results;
  ProfileRunOptions run;      // its `profile` is used either way
  std::filesystem::path out;  // the folder, created
};

struct ProfileFolder {
  ProfileReport report;
  std::filesystem::path profile;  // profile.json
  std::filesystem::path results;  // the runs as a benchmark's results.json; empty from results
  std::filesystem::path sized;    // the pipeline with the requests and limits; empty from results
};

// Profiles, creates `out`, tells `on_report` (before any file is written, so
// the recommendation shows even when a file then cannot be), and writes
// profile.json, and for runs results.json (each task with its figures, as
// `--from-results` reads them) and pipeline-sized.json. Errors: BadInput()
// for the inputs and the folder, any other when a run or a file failed.
Result<ProfileFolder> ProfileToFolder(
    const ProfileRequest& request, const std::function<void(const ProfileReport&)>& on_report = {});

}  // namespace kfpbench::plan
