// Child processes, the one way every part starts them: posix_spawn (glibc
// runs it with CLONE_VFORK, reports exec failures as a return value, and needs
// no async-signal-safety care from us), never a shell line built from text.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "util/result.h"

namespace kfpbench {

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
  std::filesystem::path cwd;     // empty: ours
  // The child's stdout, and its stderr unless stderr_fd is given; -1 keeps
  // ours. stdin is /dev/null.
  int stdout_fd = -1;
  int stderr_fd = -1;
};

// Starts the child as the leader of a new process group, with every signal at
// its default disposition and unblocked, and no descriptors but 0, 1 and 2.
// Returns its pid; errors name the command and errno.
Result<pid_t> Spawn(const SpawnRequest& request);

// Non-blocking: the exit status once the child ended (128+signal when killed
// by a signal), nullopt while it runs.
std::optional<int> PollExit(pid_t pid);

// SIGTERM to the child's process group, SIGKILL after `grace` (and to
// stragglers the leader left behind), then reaps the child.
void KillGroup(pid_t pid, std::chrono::milliseconds grace);

struct CaptureRequest {
  std::vector<std::string> argv;  // argv[0] found on PATH, see FindExecutable
  // Added to (and overriding) this process's environment.
  std::vector<std::pair<std::string, std::string>> env;
  std::chrono::milliseconds timeout{60000};
};

struct Captured {
  int exit_code = 0;  // 128+signal when killed by a signal
  std::string out;
  std::string err;
  bool timed_out = false;  // killed at the timeout; out and err hold what it printed
};

// Runs a command to completion, its stdout and stderr captured apart (a JSON
// printer's warnings must not mix with its JSON). A command that cannot start
// is an Error naming it; one still running after `timeout` has its process
// group killed and comes back timed_out.
Result<Captured> Capture(const CaptureRequest& request);

// Capture, with a timeout an Error "ARGV0 did not finish within N ms".
Result<Captured> RunCapture(const std::vector<std::string>& argv,
                            std::chrono::milliseconds timeout);

}  // namespace kfpbench
