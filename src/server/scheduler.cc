#include "server/scheduler.h"

#include <spdlog/spdlog.h>

#include "util/cron.h"

namespace kfpbench::server {
namespace {

using std::chrono::seconds;

WallTime TruncateToSeconds(WallTime t) {
  return WallTime(std::chrono::duration_cast<seconds>(t.time_since_epoch()));
}

bool IsSet(WallTime t) { return t.time_since_epoch().count() != 0; }

// How long to wait before trying a schedule again whose run could not be
// created (e.g. its pipeline was deleted), and before looking again at one
// held back by max_concurrency.
constexpr auto kRetryDelay = std::chrono::seconds(5);
constexpr auto kConcurrencyPoll = std::chrono::milliseconds(100);
constexpr auto kIdlePoll = std::chrono::seconds(1);

}  // namespace

Result<std::optional<WallTime>> NextFireTime(const kfp::RecurringRun& r, WallTime last_fire) {
  WallTime start_time{}, end_time{};
  if (r.cron_schedule) {
    start_time = r.cron_schedule->start_time;
    end_time = r.cron_schedule->end_time;
  } else if (r.periodic_schedule) {
    start_time = r.periodic_schedule->start_time;
    end_time = r.periodic_schedule->end_time;
  } else {
    return Error{"recurring run has no trigger", kHttpBadRequest};
  }
  WallTime base = last_fire;
  if (!IsSet(base)) base = std::max(r.created_at, start_time);
  base = TruncateToSeconds(base);
  std::optional<WallTime> next;
  if (r.cron_schedule) {
    auto cron = CronSchedule::Parse(r.cron_schedule->cron);
    if (!cron.ok()) return cron.error();
    next = cron->Next(base);
  } else {
    if (r.periodic_schedule->interval_second <= 0) {
      return Error{"trigger.periodic_schedule.interval_second must be positive", kHttpBadRequest};
    }
    next = base + seconds(r.periodic_schedule->interval_second);
  }
  if (next && IsSet(end_time) && *next > end_time) return std::optional<WallTime>();
  return next;
}

Scheduler::Scheduler(store::Store& store, CreateRunFn create_run)
    : store_(store), create_run_(std::move(create_run)) {}

Scheduler::~Scheduler() { Stop(); }

void Scheduler::Start() {
  std::lock_guard lock(mu_);
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] { Loop(); });
}

void Scheduler::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Scheduler::Wake() {
  {
    std::lock_guard lock(mu_);
    woken_ = true;
  }
  cv_.notify_all();
}

void Scheduler::Loop() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    woken_ = false;
    lock.unlock();
    WallTime next = Pass(WallClock::now());
    lock.lock();
    if (stop_) break;
    cv_.wait_until(lock, next, [this] { return stop_ || woken_; });
  }
}

WallTime Scheduler::Pass(WallTime now) {
  WallTime wake = now + kIdlePoll;
  auto schedules = store_.EnabledSchedules();
  if (!schedules.ok()) {
    spdlog::error("scheduler: cannot read recurring runs: {}", schedules.error().message);
    return now + kRetryDelay;
  }
  for (const auto& s : *schedules) {
    const kfp::RecurringRun& r = s.recurring_run;
    if (auto it = retry_after_.find(r.recurring_run_id); it != retry_after_.end()) {
      if (it->second > now) {
        wake = std::min(wake, it->second);
        continue;
      }
      retry_after_.erase(it);
    }
    auto next = NextFireTime(r, s.last_fire);
    if (!next.ok() || !*next) continue;  // bad or ended: nothing to do
    WallTime fire = **next;
    if (fire > now) {
      wake = std::min(wake, fire);
      continue;
    }
    if (r.no_catchup) {
      // Only the latest fire time that is due.
      for (;;) {
        auto later = NextFireTime(r, fire);
        if (!later.ok() || !*later || **later > now) break;
        fire = **later;
      }
    }
    auto active = store_.CountActiveRuns(r.recurring_run_id);
    if (!active.ok()) continue;
    if (*active >= std::max<int64_t>(1, r.max_concurrency)) {
      wake = std::min(wake, now + kConcurrencyPoll);
      continue;
    }
    if (Status st = create_run_(r, fire); !st.ok()) {
      spdlog::warn("scheduler: recurring run {} could not start a run: {}", r.recurring_run_id,
                   st.error().message);
      retry_after_[r.recurring_run_id] = now + kRetryDelay;
      continue;
    }
    wake = now;  // more may be due (catch-up)
  }
  return wake;
}

}  // namespace kfpbench::server
