// `kfpbench profile` (step resources and recommended requests and limits) and
// `kfpbench orchestrate` (one run per CSV row), for capacity planning.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/commands.h"

namespace kfpbench::cli {

Command AddProfileCommand(CLI::App& app);
Command AddOrchestrateCommand(CLI::App& app);

}  // namespace kfpbench::cli
