// What the backend remembers about runs in flight beside the store: the
// history a retried run started with, and task counts for /metrics. Fed by
// the engine's observer (on the loop thread) and read by handlers; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "kfp/model.h"

namespace kfpbench::server {

class RunTracker {
 public:
  // A retried run keeps its history: the engine's snapshots of the new
  // attempt are appended to `prior`.
  void SetHistoryPrefix(const std::string& run_id, std::vector<kfp::RuntimeStatus> prior);
  // `history` with the prefix of `run_id` in front; forgets it once terminal.
  std::vector<kfp::RuntimeStatus> WithPrefix(const std::string& run_id,
                                             std::vector<kfp::RuntimeStatus> history,
                                             bool terminal);

  void OnSnapshot(const engine::RunSnapshot& snapshot);

  // Container tasks created but not yet running (waiting for inputs or room).
  int64_t PendingTasks() const;
  // Container tasks running, per node.
  std::map<std::string, int64_t> RunningTasksByNode() const;

 private:
  struct Counts {
    int64_t pending = 0;
    std::map<std::string, int64_t> running_by_node;
  };
  mutable std::mutex mu_;
  std::map<std::string, std::vector<kfp::RuntimeStatus>> prefixes_;
  std::map<std::string, Counts> runs_;
};

}  // namespace kfpbench::server
