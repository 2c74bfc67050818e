// Commands that work on results already written: merge, report, compare,
// history. They read results.json (report::LoadResults) and never contact a
// KFP server.
#pragma once

#include <vector>

#include <CLI/CLI.hpp>

#include "cli/commands.h"

namespace kfpbench::cli {

// Adds the subcommands to `app` and to `commands`.
void AddReportCommands(CLI::App& app, std::vector<Command>& commands);

}  // namespace kfpbench::cli
