// What a job's pods read from the config's folder: `{{config_dir}}/FILE` in
// its command or env (the DDP example's training script). On a cluster no pod
// has this machine's folder, so the files go in a ConfigMap `<name>-files`
// mounted at kJobFilesMount and `{{config_dir}}` points there; a config that
// names the folder itself, or a file that cannot be shipped, is refused with
// the flag to set instead (`--set config_dir=FOLDER-IN-THE-IMAGE`).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kube/job_config.h"
#include "kube/shipped_files.h"
#include "util/result.h"

namespace kfpbench::kube {

inline constexpr const char* kJobFilesMount = "/etc/kfpbench/job";

struct ClusterJob {
  // The files {{config_dir}} names, relative to it; empty when none are
  // named or config_dir was set to a folder in the image.
  std::vector<ShippedFile> files;
  std::optional<nlohmann::json> config_map;  // holds `files`
  nlohmann::json volume_source;              // configMap volume putting them in place
};

// Reads and checks the files once for the whole sweep.
Result<ClusterJob> PrepareClusterJob(const JobConfig& config);

// The manifest of one sweep point for a cluster: {{config_dir}} is the mount
// of the shipped files, which every replica's pod mounts.
Result<nlohmann::json> RenderClusterManifest(const JobConfig& config, const ClusterJob& cluster,
                                             SweepPoint point);

}  // namespace kfpbench::kube
