// Capacity planning commands: simulate, calibrate and plan. They
// run the cluster simulator (src/sim) and never contact a KFP server.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/commands.h"

namespace kfpbench::cli {

Command AddSimulateCommand(CLI::App& app);
Command AddCalibrateCommand(CLI::App& app);
Command AddPlanCommand(CLI::App& app);

}  // namespace kfpbench::cli
