#include "sim/shared_server.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace kfpbench::sim {

SharedServer::SharedServer(engine::EventLoop& loop, Discipline discipline, int servers)
    : loop_(loop), discipline_(discipline), servers_(std::max(servers, 1)) {}

Duration SharedServer::busy() const {
  if (discipline_ == Discipline::kProcessorSharing && !transfers_.empty()) {
    return busy_ + (loop_.Now() - busy_since_);
  }
  return busy_ / servers_;
}

void SharedServer::Submit(Duration work, std::function<void()> done) {
  ++in_system_;
  if (work < Duration::zero()) work = Duration::zero();
  work_submitted_ += work;
  Waiting w{work, loop_.Now(), std::move(done)};
  if (discipline_ == Discipline::kFifo) {
    if (busy_servers_ < servers_) {
      StartFifo(std::move(w));
    } else {
      queue_.push_back(std::move(w));
    }
    return;
  }
  Account();
  if (transfers_.empty()) busy_since_ = loop_.Now();
  transfers_.push({attained_ + ToSeconds(w.work), seq_++, w.submitted, std::move(w.done)});
  Reschedule();
}

void SharedServer::StartFifo(Waiting w) {
  ++busy_servers_;
  busy_ += w.work;
  loop_.After(w.work, [this, submitted = w.submitted, done = std::move(w.done)]() mutable {
    --busy_servers_;
    --in_system_;
    ++served_;
    total_sojourn_ += loop_.Now() - submitted;
    if (!queue_.empty()) {
      Waiting next = std::move(queue_.front());
      queue_.pop_front();
      StartFifo(std::move(next));
    }
    done();
  });
}

void SharedServer::Account() {
  WallTime now = loop_.Now();
  if (!transfers_.empty()) {
    attained_ += ToSeconds(now - last_) / static_cast<double>(transfers_.size());
  }
  last_ = now;
}

void SharedServer::Reschedule() {
  if (timer_set_) loop_.Cancel(timer_);
  timer_set_ = false;
  if (transfers_.empty()) return;
  double remaining = std::max(0.0, transfers_.top().tag - attained_);
  // Round up to the clock's resolution so the first transfer is done when it fires.
  auto wait = std::chrono::duration_cast<Duration>(std::chrono::duration<double>(
      std::ceil(remaining * static_cast<double>(transfers_.size()) * 1e9) / 1e9));
  timer_ = loop_.After(wait, [this] { OnPsTimer(); });
  timer_set_ = true;
}

void SharedServer::OnPsTimer() {
  timer_set_ = false;
  Account();
  std::vector<std::function<void()>> finished;
  // Within a nanosecond of service: done (the clock cannot resolve finer).
  while (!transfers_.empty() && transfers_.top().tag <= attained_ + 1e-9) {
    Transfer t = transfers_.top();
    transfers_.pop();
    --in_system_;
    ++served_;
    total_sojourn_ += loop_.Now() - t.submitted;
    finished.push_back(std::move(t.done));
  }
  if (transfers_.empty()) {
    busy_ += loop_.Now() - busy_since_;
    attained_ = 0;  // nothing in progress: restart the tags near zero
  }
  Reschedule();
  for (auto& fn : finished) fn();
}

}  // namespace kfpbench::sim
