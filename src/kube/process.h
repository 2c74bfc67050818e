// Child processes for the drivers: replicas with their own environment and
// log file, and short commands (kubectl) whose output is captured.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "util/result.h"

namespace kfpbench::kube {

struct SpawnOptions {
  std::vector<std::string> argv;
  // Added to (and overriding) this process's environment.
  std::vector<std::pair<std::string, std::string>> env;
  std::filesystem::path cwd;
  std::filesystem::path log;  // stdout and stderr, appended
};

// Starts the child in its own process group, so a kill reaches everything it
// started (torchrun workers, mpirun ranks).
Result<pid_t> Spawn(const SpawnOptions& options);

// Non-blocking: the exit status once the child ended (128+signal when killed
// by a signal), nullopt while it runs.
std::optional<int> Poll(pid_t pid);

// SIGTERM to the group, SIGKILL after `grace`, then reaps.
void KillGroup(pid_t pid, std::chrono::milliseconds grace);

struct Captured {
  int exit_code = 0;
  std::string out;
  std::string err;
};
// Runs to completion (killed after `timeout`), capturing stdout and stderr.
Result<Captured> RunCapture(const std::vector<std::string>& argv,
                            std::chrono::milliseconds timeout);

std::string ReadFile(const std::filesystem::path& file);
// The last `lines` lines of `text`.
std::string Tail(const std::string& text, int lines);

}  // namespace kfpbench::kube
