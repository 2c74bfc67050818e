// `kfpbench job ...` (benchmark ML jobs) and `kfpbench kube ...` (Kubernetes helpers).
#pragma once

#include <CLI/CLI.hpp>

#include "cli/commands.h"

namespace kfpbench::cli {

Command AddJobCommand(CLI::App& app);
// `kube loadgen SCENARIO --shards N`: prints the manifests of a sharded load test.
Command AddKubeCommand(CLI::App& app);

}  // namespace kfpbench::cli
