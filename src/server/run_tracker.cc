#include "server/run_tracker.h"

namespace kfpbench::server {

void RunTracker::SetHistoryPrefix(const std::string& run_id,
                                  std::vector<kfp::RuntimeStatus> prior) {
  std::lock_guard lock(mu_);
  prefixes_[run_id] = std::move(prior);
}

std::vector<kfp::RuntimeStatus> RunTracker::WithPrefix(const std::string& run_id,
                                                       std::vector<kfp::RuntimeStatus> history,
                                                       bool terminal) {
  std::lock_guard lock(mu_);
  auto it = prefixes_.find(run_id);
  if (it == prefixes_.end()) return history;
  std::vector<kfp::RuntimeStatus> out = it->second;
  out.insert(out.end(), std::make_move_iterator(history.begin()),
             std::make_move_iterator(history.end()));
  if (terminal) prefixes_.erase(it);
  return out;
}

void RunTracker::OnSnapshot(const engine::RunSnapshot& snapshot) {
  Counts counts;
  if (!IsTerminal(snapshot.state)) {
    for (const auto& t : snapshot.tasks) {
      if (t.executor_label.empty()) continue;  // DAGs take no room
      if (t.state == RuntimeState::kPending) ++counts.pending;
      if (t.state == RuntimeState::kRunning) ++counts.running_by_node[t.node];
    }
  }
  std::lock_guard lock(mu_);
  if (IsTerminal(snapshot.state)) {
    runs_.erase(snapshot.run_id);
  } else {
    runs_[snapshot.run_id] = std::move(counts);
  }
}

int64_t RunTracker::PendingTasks() const {
  std::lock_guard lock(mu_);
  int64_t n = 0;
  for (const auto& [id, c] : runs_) n += c.pending;
  return n;
}

std::map<std::string, int64_t> RunTracker::RunningTasksByNode() const {
  std::lock_guard lock(mu_);
  std::map<std::string, int64_t> out;
  for (const auto& [id, c] : runs_) {
    for (const auto& [node, n] : c.running_by_node) out[node] += n;
  }
  return out;
}

}  // namespace kfpbench::server
