#include "server/status_writer.h"

#include <chrono>

#include <spdlog/spdlog.h>

namespace kfpbench::server {

namespace {
constexpr Duration kRetryInterval = std::chrono::seconds(1);
}  // namespace

StatusWriter::StatusWriter(store::Store& store) : store_(store), thread_([this] { Run(); }) {}

StatusWriter::~StatusWriter() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void StatusWriter::Submit(const std::string& run_id, store::RunStatus status,
                          std::optional<KeptTasks> kept) {
  {
    std::lock_guard lock(mu_);
    ++submitted_;
    auto [it, inserted] = pending_.try_emplace(run_id);
    Pending& p = it->second;
    if (!inserted) {
      if (!p.refused) ++settled_;  // replaced before its turn: never written
      if (!kept) kept = std::move(p.kept);
    }
    p = Pending{std::move(status), std::move(kept), false, {}};
  }
  changed_.notify_all();
}

bool StatusWriter::Write(const std::string& run_id, Pending& p) {
  if (p.kept) {
    if (Status s = store_.PutRetryTasks(run_id, *p.kept); !s.ok()) {
      spdlog::error("cannot keep the tasks of run {} for a retry: {}", run_id, s.error().message);
    }
    p.kept.reset();  // kept (or logged): not again with a retried status
  }
  Status s = store_.UpdateRunStatus(run_id, p.status);
  // A run deleted while it executes has no row left; nothing to keep.
  if (s.ok() || s.error().NotFound()) {
    if (p.refused) {
      spdlog::info("recorded run {} ({}) after all", run_id, RuntimeStateName(p.status.state));
    }
    return true;
  }
  if (!p.refused) {
    spdlog::error("cannot record run {} ({}); trying again every {}s: {}", run_id,
                  RuntimeStateName(p.status.state),
                  std::chrono::duration_cast<std::chrono::seconds>(kRetryInterval).count(),
                  s.error().message);
  }
  return false;
}

bool StatusWriter::WriteNow(const std::string& run_id) {
  std::unique_lock lock(mu_);
  changed_.wait(lock, [&] { return !writing_.contains(run_id); });
  auto it = pending_.find(run_id);
  if (it == pending_.end()) return false;
  Pending p = std::move(it->second);
  pending_.erase(it);
  writing_.insert(run_id);
  lock.unlock();
  const bool was_refused = p.refused;
  const bool written = Write(run_id, p);
  lock.lock();
  writing_.erase(run_id);
  if (!was_refused) ++settled_;
  if (!written && !pending_.contains(run_id)) {
    p.refused = true;
    p.retry_at = WallClock::now() + kRetryInterval;
    pending_.emplace(run_id, std::move(p));
  }
  lock.unlock();
  changed_.notify_all();
  return true;
}

void StatusWriter::Drain() {
  std::unique_lock lock(mu_);
  const uint64_t target = submitted_;
  changed_.wait(lock, [&] { return settled_ >= target; });
}

void StatusWriter::Run() {
  std::unique_lock lock(mu_);
  while (true) {
    // What is due: every status not refused, and refused ones whose retry
    // time has come (all of them when stopping: each gets a last try).
    std::vector<std::pair<std::string, Pending>> batch;
    WallTime now = WallClock::now();
    WallTime next_retry = WallTime::max();
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (it->second.refused && it->second.retry_at > now && !stop_) {
        next_retry = std::min(next_retry, it->second.retry_at);
        ++it;
        continue;
      }
      writing_.insert(it->first);
      batch.emplace_back(it->first, std::move(it->second));
      it = pending_.erase(it);
    }
    if (batch.empty()) {
      if (stop_) return;
      if (next_retry == WallTime::max()) {
        changed_.wait(lock);
      } else {
        changed_.wait_until(lock, next_retry);
      }
      continue;
    }
    lock.unlock();
    std::vector<bool> written(batch.size());
    for (size_t i = 0; i < batch.size(); ++i) {
      written[i] = Write(batch[i].first, batch[i].second);
    }
    lock.lock();
    for (size_t i = 0; i < batch.size(); ++i) {
      auto& [run_id, p] = batch[i];
      writing_.erase(run_id);
      if (!p.refused) ++settled_;
      // Refused: tried again later, unless a newer status came meanwhile.
      if (!written[i] && !stop_ && !pending_.contains(run_id)) {
        p.refused = true;
        p.retry_at = WallClock::now() + kRetryInterval;
        pending_.emplace(run_id, std::move(p));
      }
    }
    changed_.notify_all();
  }
}

}  // namespace kfpbench::server
