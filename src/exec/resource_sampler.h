// Samples the CPU and memory of running steps, the way `kubectl top` would see
// a pod: every process in the step's process group, summed. The process
// executor starts each task as the leader of its own process group, so a step
// that forks helpers (a shell, a Python worker pool) is measured whole.
//
// Where a step runs in a cgroup of its own (the executor's limits), the
// cgroup's counters are used instead: they also count processes that left the
// group (setsid) and memory the kernel charges to the step (page cache).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "util/time.h"

namespace kfpbench::exec {

// One reading of a process group: cumulative CPU and current memory.
struct GroupUsage {
  double cpu_seconds = 0;    // user + system since the processes started
  int64_t memory_bytes = 0;  // RSS summed over the group (or cgroup memory.current)
  int processes = 0;
  bool from_cgroup = false;
};

// Reads the group led by `pgid` now; nullopt when no process of it is left.
// CPU counts each live member's own time and the time of members it has
// already waited for (cutime), so a helper that exits between two readings is
// not lost.
std::optional<GroupUsage> ReadGroupUsage(pid_t pgid);

struct ResourceSample {
  Duration at{};  // since the group was first seen
  double cpu_cores = 0;
  int64_t memory_bytes = 0;
};

// Everything sampled of one process group.
struct GroupProfile {
  pid_t pgid = 0;
  // From the leader's environment, as the process executor sets them; empty
  // for groups tracked explicitly that have none.
  std::string task_id;
  std::string run_id;
  WallTime first_seen{}, last_seen{};
  double cpu_seconds = 0;  // the last cumulative reading
  bool from_cgroup = false;
  std::vector<ResourceSample> samples;
};

struct ResourceSamplerOptions {
  Duration interval = std::chrono::milliseconds(100);
  // Groups led by children of this process are found and sampled on their
  // own (0: this process). Negative: only groups passed to Track().
  pid_t discover_children_of = 0;
};

// A background thread that samples every interval. Thread-safe.
class ResourceSampler {
 public:
  explicit ResourceSampler(ResourceSamplerOptions options = {});
  ~ResourceSampler();  // stops
  ResourceSampler(const ResourceSampler&) = delete;
  ResourceSampler& operator=(const ResourceSampler&) = delete;

  // Samples `pgid` from now on, whoever its parent is.
  void Track(pid_t pgid);
  // Takes one more reading and ends the thread. Idempotent.
  void Stop();
  // Every group seen so far, in the order first seen.
  std::vector<GroupProfile> Profiles() const;
  // The group for `pgid`, if seen.
  std::optional<GroupProfile> Profile(pid_t pgid) const;

 private:
  struct Tracked {
    GroupProfile profile;
    std::optional<GroupUsage> last;
    std::chrono::steady_clock::time_point last_at{};
    bool gone = false;
    int unseen = 0;  // readings that found none of a group not yet seen
  };
  void Loop();
  void SampleOnce();

  ResourceSamplerOptions options_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Tracked>> groups_;
  std::map<pid_t, Tracked*> live_;  // pgid -> group still being sampled
  std::vector<pid_t> requested_;    // from Track(), not yet picked up
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace kfpbench::exec
