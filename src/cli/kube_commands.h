// `kfpbench job ...` (benchmark ML jobs) and `kfpbench kube ...` (Kubernetes helpers).
#pragma once

#include <CLI/CLI.hpp>

#include "cli/commands.h"

namespace kfpbench::cli {

Command AddJobCommand(CLI::App& app);

}  // namespace kfpbench::cli
