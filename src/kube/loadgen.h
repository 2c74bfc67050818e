// `kfpbench kube loadgen`: spreads one scenario over an Indexed Job whose pods
// each run a shard of it (`kfpbench run --shard $JOB_COMPLETION_INDEX/N`), so
// N pods send what one machine would, and `kfpbench merge` combines them.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/result.h"

namespace kfpbench::kube {

struct LoadgenOptions {
  std::string name = "kfpbench-loadgen";
  std::string namespace_ = "default";
  std::string image = "ghcr.io/kfpbench/kfpbench:latest";
  std::string scenario_file;  // its name inside the pod
  std::string scenario_text;  // shipped in a ConfigMap
  std::string host;           // the KFP API the shards load
  int shards = 1;
  std::string results_claim;  // PVC for the shards' results; empty: <name>-results
  std::string storage = "1Gi";
};

// ConfigMap (the scenario), PersistentVolumeClaim (results, ReadWriteMany:
// every shard writes to it at once) and the Indexed Job, in apply order.
Result<std::vector<nlohmann::json>> RenderLoadgen(const LoadgenOptions& options);

}  // namespace kfpbench::kube
