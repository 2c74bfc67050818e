// Replicas of a local job: each started with its own environment and log
// file, in its own process group so a kill reaches everything it started
// (torchrun workers, mpirun ranks). Starting, polling, killing and capturing
// are util/process.h's.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "util/process.h"
#include "util/result.h"

namespace kfpbench::kube {

struct SpawnOptions {
  std::vector<std::string> argv;  // argv[0] found on the child's PATH, from `cwd`
  // Added to (and overriding) this process's environment.
  std::vector<std::pair<std::string, std::string>> env;
  std::filesystem::path cwd;
  std::filesystem::path log;  // stdout and stderr, appended
};

// Starts the replica; a command that is not there or cannot run is an Error
// naming it.
Result<pid_t> SpawnLogged(const SpawnOptions& options);

// The last `lines` lines of `text`.
std::string Tail(const std::string& text, int lines);

}  // namespace kfpbench::kube
