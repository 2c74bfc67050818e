#include "harness/run_follower.h"

#include <fmt/format.h>

namespace kfpbench::harness {

void AbsorbRun(const kfp::Run& run, results::RunRecord& record) {
  record.state = run.state;
  record.created = run.created_at;
  record.finished = run.finished_at;
  record.recurring_run_id = run.recurring_run_id;
  record.scheduled = run.scheduled_at;
  if (run.error) record.error = run.error->message;
  record.tasks.clear();
  for (const auto& t : run.task_details) {
    results::TaskTiming task;
    task.name = t.display_name;
    task.state = t.state;
    task.created = t.create_time;
    task.started = t.start_time;
    task.finished = t.end_time;
    task.dag = !t.child_tasks.empty();
    task.cached = t.state == RuntimeState::kSkipped && !t.cache_fingerprint.empty();
    task.pod_name = t.pod_name;
    task.pods.push_back(t.pod_name);
    for (const auto& c : t.child_tasks) task.pods.push_back(c.pod_name);
    record.tasks.push_back(std::move(task));
  }
}

bool PollRun(Context& context, results::RunRecord& record) {
  auto run = context.client().GetRun(record.run_id);
  if (!run.ok()) {
    record.error = run.error().message;
    // A deleted run will never finish; any other error may pass.
    return run.error().NotFound();
  }
  AbsorbRun(*run, record);
  if (!IsTerminal(record.state)) return false;
  record.observed = WallClock::now();
  return true;
}

RunFollower::RunFollower(Context& context, int threads) : context_(context) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Loop(); });
}

RunFollower::~RunFollower() { Finish(WallClock::now()); }

void RunFollower::Add(results::RunRecord record) {
  std::lock_guard lock(mu_);
  queue_.push({WallClock::now() + context_.options().poll_interval, std::move(record)});
  cv_.notify_one();
}

size_t RunFollower::in_flight() const {
  std::lock_guard lock(mu_);
  return queue_.size() + polling_;
}

void RunFollower::Finish(WallTime give_up) {
  {
    std::lock_guard lock(mu_);
    if (threads_.empty()) return;
    finishing_ = true;
    give_up_ = give_up;
    cv_.notify_all();
  }
  for (auto& t : threads_) t.join();
  threads_.clear();
}

void RunFollower::Loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    WallTime now = WallClock::now();
    WallTime deadline = context_.StopWaitingAt(give_up_);
    if (finishing_ && now >= deadline) {
      // Out of time: what is still running is recorded as such.
      while (!queue_.empty()) {
        results::RunRecord r = queue_.top().record;
        queue_.pop();
        if (r.error.empty()) {
          r.error =
              fmt::format("still {} when kfpbench stopped waiting", RuntimeStateName(r.state));
        }
        context_.runs().Add(std::move(r));
      }
      return;
    }
    if (queue_.empty()) {
      if (finishing_) return;
      cv_.wait_for(lock, std::chrono::milliseconds(100));
      continue;
    }
    if (queue_.top().due > now) {
      // A copy: the queue may reallocate while the lock is released.
      const WallTime wake = std::min(queue_.top().due, now + std::chrono::milliseconds(100));
      cv_.wait_until(lock, wake);
      continue;
    }
    Item item = queue_.top();
    queue_.pop();
    ++polling_;
    lock.unlock();
    bool done = PollRun(context_, item.record);
    if (done) context_.runs().Add(std::move(item.record));
    lock.lock();
    --polling_;
    if (!done) {
      item.due = WallClock::now() + context_.options().poll_interval;
      queue_.push(std::move(item));
    }
  }
}

void FollowRun(Context& context, results::RunRecord& record, WallTime give_up) {
  for (;;) {
    if (PollRun(context, record)) return;
    WallTime now = WallClock::now();
    WallTime deadline = context.StopWaitingAt(give_up);
    if (now >= deadline) {
      if (record.error.empty()) {
        record.error =
            fmt::format("still {} when kfpbench stopped waiting", RuntimeStateName(record.state));
      }
      return;
    }
    // Interruptions must not cut the grace period short, so sleep plainly.
    std::this_thread::sleep_for(
        std::min<Duration>(context.options().poll_interval, deadline - now));
  }
}

}  // namespace kfpbench::harness
