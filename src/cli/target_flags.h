// The flags of every command that talks to KFP: where (--host, --target,
// --config), as whom (--token, --token-file, --cookie, --header, --namespace),
// how (--ca-file, --insecure, --api, --request-timeout), and the embedded backend's own flags
// for when no host is named. One set, so no command lacks one.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "harness/session.h"
#include "util/result.h"

namespace kfpbench::cli {

struct TargetFlags {
  harness::TargetOptions options;
  BackendFlags backend;

  void Add(CLI::App& cmd);
  // The flags with the target they choose (and the scenario file's "target",
  // which may be empty) filled in; errors name the flag or file at fault.
  Result<harness::TargetOptions> Resolve(const nlohmann::json& scenario_target = {},
                                         const std::string& scenario_path = "") const;
};

}  // namespace kfpbench::cli
