// Enforces a task's CPU and memory limits the way a kubelet would, with the
// controllers this machine offers: cgroup v1 memory, cpu and cpuacct
// hierarchies, nested under this process's own cgroup where it may create
// children. Each executor gets a parent cgroup ("kfpbench-<pid>-<n>") and each
// task a child under it, so a task's usage and OOM kills are its own and
// everything is removed again by rmdir.
//
// Where no writable memory cgroup exists, memory falls back to RLIMIT_AS
// (address space, a coarser bound than RSS) and the task's log says that CPU
// is not enforced.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/resources.h"
#include "util/result.h"

namespace kfpbench::exec {

struct LimiterOptions {
  // false: never use cgroups (tests of the fallback; machines where nesting
  // under our cgroup is not wanted).
  bool use_cgroups = true;
  // Where the process's cgroup membership and mounts are read from (tests).
  std::filesystem::path proc_self_cgroup = "/proc/self/cgroup";
  std::filesystem::path proc_self_mountinfo = "/proc/self/mountinfo";
};

// One task's cgroups (empty paths for controllers not in use).
struct TaskCgroup {
  std::filesystem::path memory;
  std::filesystem::path cpu;
  std::filesystem::path cpuacct;    // may equal `cpu` when co-mounted
  int64_t memory_limit = 0;         // bytes, 0 when none was set
  int64_t address_space_limit = 0;  // fallback RLIMIT_AS in bytes, 0 when none
  bool empty() const { return memory.empty() && cpu.empty() && cpuacct.empty(); }
};

// What Spawn runs instead of `path argv...` so that the step is in its
// cgroups (or under its rlimit) before its first instruction: /bin/sh writes
// its own pid into each cgroup.procs, then execs the step. cgroup v1 has no
// spawning straight into a cgroup, and moving the step after posix_spawn
// returns would race with whatever it forks first. Unchanged when there is
// nothing to apply.
struct WrappedCommand {
  std::string path;
  std::vector<std::string> argv;
};
WrappedCommand WrapForLimits(const TaskCgroup& cgroup, std::string path,
                             std::vector<std::string> argv);

// What the cgroups saw of a finished task. Unset fields were not measured.
struct TaskUsage {
  std::optional<int64_t> peak_memory_bytes;  // memory.max_usage_in_bytes
  std::optional<double> cpu_seconds;         // cpuacct.usage
  bool oom_killed = false;                   // the kernel killed a process for the limit
};

// Kubernetes' reason for a container killed at its memory limit, e.g.
// "OOMKilled: exceeded memory limit 64Mi".
std::string OomKilledMessage(int64_t memory_limit);

class Limiter {
 public:
  // Finds the controllers and creates the parent cgroups. Never fails: what
  // cannot be used is left out and said by Describe().
  explicit Limiter(LimiterOptions options = {});
  // Kills whatever is left in task cgroups and removes them and the parents.
  ~Limiter();
  Limiter(const Limiter&) = delete;
  Limiter& operator=(const Limiter&) = delete;

  bool memory_cgroups() const { return !memory_parent_.empty(); }
  bool cpu_cgroups() const { return !cpu_parent_.empty(); }
  const std::filesystem::path& memory_parent() const { return memory_parent_; }
  const std::filesystem::path& cpu_parent() const { return cpu_parent_; }
  // One line: which controllers are in use, or why none are.
  std::string Describe() const;

  // Creates `task_id`'s cgroups with `resources`' limits (or decides the
  // rlimit fallback), before the task is spawned through WrapForLimits.
  // `note` receives a line for the task's log when a limit is not enforced as
  // asked (empty otherwise). An error means the limits cannot be applied; the
  // task then fails without running.
  Result<TaskCgroup> Prepare(const std::string& task_id, const engine::Resources& resources,
                             std::string& note);

  // Reads usage once the task's main process has exited.
  TaskUsage Collect(const TaskCgroup& cgroup) const;

  // SIGKILLs what is still in the task's cgroups (descendants that left the
  // process group) and removes them. Safe to call on an empty TaskCgroup.
  void Remove(const TaskCgroup& cgroup) const;

 private:
  LimiterOptions options_;
  std::filesystem::path memory_parent_;
  std::filesystem::path cpu_parent_;
  std::filesystem::path cpuacct_parent_;
  std::string why_not_;               // why cgroups are not (fully) used
  std::atomic<uint64_t> next_id_{0};  // Prepare runs on any thread
};

}  // namespace kfpbench::exec
