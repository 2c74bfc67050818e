// Starting a child process safely from a multithreaded program: posix_spawn
// (glibc runs it with CLONE_VFORK, reports exec failures as a return value,
// and needs no async-signal-safety care from us).
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "util/result.h"

namespace kfpbench::exec {

// `parent` ("K=V" entries, e.g. from environ) with `overrides` set on top,
// later overrides winning; order of first appearance is kept.
std::vector<std::string> MergeEnv(
    const std::vector<std::string>& parent,
    const std::vector<std::pair<std::string, std::string>>& overrides);
// This process's environment as "K=V" entries.
std::vector<std::string> CurrentEnv();

// Resolves a command the way execvp would, but against `env`'s PATH (the
// child's, not ours) and relative to `cwd`. Names containing '/' are returned
// as they are.
Result<std::string> FindExecutable(const std::string& name, const std::vector<std::string>& env,
                                   const std::filesystem::path& cwd);

struct SpawnRequest {
  std::string path;  // an executable, see FindExecutable
  std::vector<std::string> argv;
  std::vector<std::string> env;  // "K=V"
  std::filesystem::path cwd;
  int stdout_fd = -1;  // becomes the child's stdout and stderr; stdin is /dev/null
};

// Starts the child as the leader of a new process group, with every signal at
// its default disposition and unblocked, and no descriptors but 0, 1 and 2.
// Returns its pid; errors name the command and errno.
Result<pid_t> Spawn(const SpawnRequest& request);

}  // namespace kfpbench::exec
