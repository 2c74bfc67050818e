// kfpbench capture: a target's run history read through KFP's read API only
// (ListRuns paged on created_at, GetRun once per run, GetPipelineVersion
// once per version) into a capture folder, one run a line as each is read,
// within a calls-a-second budget, resumable, and marked complete last.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "capture/records.h"
#include "harness/session.h"
#include "kfp/client.h"
#include "sim/model.h"
#include "util/result.h"
#include "util/time.h"

namespace kfpbench::capture {

// The folder's files (docs/CAPACITY.md, "The capture folder").
inline constexpr const char* kRunsFile = "runs.jsonl";
inline constexpr const char* kVersionsDir = "versions";
inline constexpr const char* kCheckpointFile = "checkpoint.json";
inline constexpr const char* kManifestFile = "manifest.json";
// The most capture reads of one of its folder's files other than runs.jsonl
// (a version file holds a spec KFP caps at 32 MiB); only regular files are
// read, so a folder edited to point at a device or a FIFO is an error.
inline constexpr size_t kMaxFolderFileBytes = size_t{64} << 20;

struct CaptureOptions {
  std::filesystem::path out;
  // The window as given ("24h", an RFC 3339 time); resolved once, at the
  // first start, and kept in the checkpoint so a resumed capture reads the
  // same window.
  std::string since = "24h";
  std::string until;  // empty: now
  double qps = 5;     // calls a second to the target; <= 0: no limit
  int page_size = 100;
  // GetRun calls in flight at once (each still waits its turn under qps).
  int readers = 2;
  RunLineOptions record;
  // Experiments and pipelines to read, by name or id (capture/selection.h);
  // empty: all. Resolved at the first start and kept in the checkpoint.
  std::vector<std::string> experiments;
  std::vector<std::string> pipelines;
  std::string target;  // what the manifest says was read (a URL)
  // The cluster the history ran on: the per-step overhead is then fitted on
  // it (overhead_fit.h) instead of taken as a low quantile of the gaps.
  std::optional<sim::ClusterSpec> cluster;
  const std::atomic<bool>* interrupted = nullptr;
};

struct Progress {
  int64_t runs = 0;
  int64_t tasks = 0;
  int64_t censored = 0;
  int64_t versions = 0;
  int64_t missing_versions = 0;
  int64_t calls = 0;
  WallTime last_created_at{};
  bool resumed = false;
};

struct CaptureSummary {
  Progress progress;
  WallTime since{}, until{};
  bool interrupted = false;   // stopped early: the checkpoint holds where
  double seconds = 0;         // this invocation's
  std::string overhead_note;  // how the per-step overhead was found, with its numbers
};

// Error codes: 400 for bad input (window, a folder holding a finished or a
// different capture); the target's own status otherwise (403: listing
// refused). `on_progress` is called after each page.
Result<CaptureSummary> Capture(kfp::Client& client, const CaptureOptions& options,
                               const std::function<void(const Progress&)>& on_progress = {});

// The same from a target: a harness::Session opened on it (the embedded
// backend when no host is named), checked to answer, and read. An
// unreachable target is bad input (400), as for every command.
Result<CaptureSummary> CaptureTarget(const harness::TargetOptions& target, CaptureOptions options,
                                     const std::function<void(const Progress&)>& on_progress = {});

}  // namespace kfpbench::capture
