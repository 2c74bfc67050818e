#include "harness/run_follower.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace kfpbench::harness {

void AbsorbRun(const kfp::Run& run, results::RunRecord& record) {
  record.state = run.state;
  record.created = run.created_at;
  record.finished = run.finished_at;
  record.recurring_run_id = run.recurring_run_id;
  record.scheduled = run.scheduled_at;
  if (!run.experiment_id.empty()) record.experiment_id = run.experiment_id;
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

bool PollRun(Context& context, results::RunRecord& record, WallTime until) {
  if (!context.follower_calls().budget().Acquire(until)) return false;
  auto run = context.follower_calls().client().GetRun(record.run_id);
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

std::string InFlightFilter() {
  nlohmann::json states = nlohmann::json::array();
  for (RuntimeState s : {RuntimeState::kUnspecified, RuntimeState::kPending, RuntimeState::kRunning,
                         RuntimeState::kCanceling, RuntimeState::kPaused}) {
    states.push_back(RuntimeStateName(s));
  }
  nlohmann::json filter = {
      {"predicates",
       {{{"key", "state"}, {"operation", "IN"}, {"string_values", {{"values", states}}}}}}};
  return filter.dump();
}

namespace {

std::string StillRunning(const results::RunRecord& r) {
  return fmt::format("still {} when kfpbench stopped waiting", RuntimeStateName(r.state));
}

// A listing the target refuses for good (no `state` filter, no such
// parameter): its runs are polled instead. Other failures pass.
bool RefusedForGood(const Error& e) {
  return e.code == 400 || e.code == 404 || e.code == 405 || e.code == 501;
}

}  // namespace

RunFollower::RunFollower(Context& context, int threads) : context_(context) {
  threads_.emplace_back([this] { ListLoop(); });
  for (int i = 0; i < std::max(1, threads); ++i) threads_.emplace_back([this] { DetailLoop(); });
}

RunFollower::~RunFollower() { Finish(WallClock::now()); }

void RunFollower::Add(results::RunRecord record) {
  std::lock_guard lock(mu_);
  Tracked t;
  t.added = WallClock::now();
  // Listing by experiment is impossible without one (a server that answered
  // CreateRun without it), and under v1beta1, whose runs have no `state` to
  // filter on (only `status`, whose values follow the workflow engine): such
  // runs are polled one by one, as before the listing.
  if (listing_refused_ || context_.options().observe_each_run || record.experiment_id.empty() ||
      context_.client().api() != kfp::ApiVersion::kV2beta1) {
    t.listed = false;
    context_.follower_calls().NotePolling(
        context_.options().observe_each_run ? "asked for (--observer-poll-each-run)"
        : record.experiment_id.empty()
            ? "the server's CreateRun answer named no experiment to list the run by"
            : "v1beta1 runs have no state to list the runs in flight by");
    polls_.push({t.added + context_.options().poll_interval, record.run_id});
  }
  std::string id = record.run_id;
  t.record = std::move(record);
  tracked_.insert_or_assign(id, std::move(t));
  cv_.notify_all();
}

bool RunFollower::WaitRecorded(const std::string& run_id, WallTime until) {
  std::unique_lock lock(mu_);
  awaited_.insert(run_id);
  for (;;) {
    if (recorded_.erase(run_id) > 0) return true;
    const WallTime deadline = context_.StopWaitingAt(until);
    const WallTime now = WallClock::now();
    if (now >= deadline) {
      awaited_.erase(run_id);
      return false;
    }
    // Interruptions move the deadline, so it is read again now and then.
    cv_.wait_until(lock, std::min(deadline, now + std::chrono::milliseconds(100)));
  }
}

size_t RunFollower::in_flight() const {
  std::lock_guard lock(mu_);
  return tracked_.size() + fetching_;
}

bool RunFollower::PastDeadline(WallTime now) const {
  return finishing_ && now >= context_.StopWaitingAt(give_up_);
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
  // Out of time: what is still running is recorded as such.
  std::lock_guard lock(mu_);
  for (auto& [id, t] : tracked_) {
    if (t.record.error.empty()) {
      t.record.error = t.ended ? "ended (it left the listing of runs in flight), but kfpbench "
                                 "stopped before reading its details"
                               : StillRunning(t.record);
    }
    context_.runs().Add(std::move(t.record));
  }
  tracked_.clear();
}

Result<std::set<std::string>> RunFollower::ListInFlight(const std::string& experiment_id,
                                                        WallTime until) {
  std::set<std::string> ids;
  kfp::ListOptions list;
  list.experiment_id = experiment_id;
  list.page_size = kListPageSize;
  // Sorted on what never changes, so the keyset pages neither skip nor
  // repeat a run while others end.
  list.sort_by = "created_at";
  list.filter = InFlightFilter();
  for (;;) {
    if (!context_.follower_calls().budget().Acquire(until)) return Error{"out of time"};
    auto page = context_.follower_calls().client().ListRunIds(list);
    if (!page.ok()) return page.error();
    ids.insert(page->ids.begin(), page->ids.end());
    if (page->next_page_token.empty()) return ids;
    list.page_token = page->next_page_token;
  }
}

void RunFollower::Conclude(const std::string& experiment_id, const std::set<std::string>& in_flight,
                           WallTime sweep_start) {
  for (auto& [id, t] : tracked_) {
    if (!t.listed || t.ended || t.record.experiment_id != experiment_id) continue;
    // A run added after the sweep began may have been created after its
    // listing was read.
    if (t.added >= sweep_start || in_flight.count(id)) continue;
    t.ended = true;
    ready_.push_back(id);
  }
  cv_.notify_all();
}

void RunFollower::PollInstead(const std::string& experiment_id, const std::string& why) {
  context_.follower_calls().NotePolling(why);
  WallTime due = WallClock::now() + context_.options().poll_interval;
  for (auto& [id, t] : tracked_) {
    if (!t.listed || (!experiment_id.empty() && t.record.experiment_id != experiment_id)) continue;
    t.listed = false;
    if (!t.ended) polls_.push({due, id});
  }
  cv_.notify_all();
}

void RunFollower::ListLoop() {
  std::unique_lock lock(mu_);
  WallTime next_sweep = WallClock::now() + context_.options().poll_interval;
  for (;;) {
    WallTime now = WallClock::now();
    if (PastDeadline(now) || (finishing_ && tracked_.empty() && fetching_ == 0)) return;
    if (now < next_sweep) {
      cv_.wait_until(lock, std::min(next_sweep, now + std::chrono::milliseconds(100)));
      continue;
    }
    std::set<std::string> experiments;
    for (const auto& [id, t] : tracked_) {
      if (t.listed && !t.ended && t.added < now) experiments.insert(t.record.experiment_id);
    }
    if (listing_refused_ || experiments.empty()) {
      next_sweep = now + context_.options().poll_interval;
      continue;
    }
    const WallTime sweep_start = now;
    const WallTime until = finishing_ ? context_.StopWaitingAt(give_up_) : WallTime::max();
    lock.unlock();
    std::map<std::string, Result<std::set<std::string>>> listed;
    for (const auto& e : experiments) listed.emplace(e, ListInFlight(e, until));
    context_.follower_calls().CountSweep();
    lock.lock();
    for (auto& [e, ids] : listed) {
      if (ids.ok()) {
        Conclude(e, *ids, sweep_start);
      } else if (RefusedForGood(ids.error())) {
        listing_refused_ = true;
        PollInstead("", "the target refused a listing of runs in flight (" + ids.error().message +
                            "); every run is polled one by one");
      }
    }
    // Where pages outlast the interval (or the budget), the next sweep
    // follows at once: listing is paced by the budget, not by a timer.
    next_sweep = sweep_start + context_.options().poll_interval;
  }
}

void RunFollower::DetailLoop() {
  std::unique_lock lock(mu_);
  for (;;) {
    WallTime now = WallClock::now();
    const bool past = PastDeadline(now);
    // Past the deadline, only the runs the listing saw end are still read
    // (none once interrupted: the grace is over).
    if (past && (ready_.empty() || context_.Interrupted())) return;
    if (finishing_ && tracked_.empty() && fetching_ == 0) return;
    std::string id;
    if (!ready_.empty()) {
      id = std::move(ready_.front());
      ready_.pop_front();
    } else if (!polls_.empty() && polls_.top().first <= now) {
      id = polls_.top().second;
      polls_.pop();
    } else {
      WallTime wake = now + std::chrono::milliseconds(100);
      if (!polls_.empty()) wake = std::min(wake, polls_.top().first);
      cv_.wait_until(lock, wake);
      continue;
    }
    auto node = tracked_.extract(id);
    if (node.empty()) continue;  // already recorded
    Tracked& t = node.mapped();
    ++fetching_;
    lock.unlock();
    const WallTime until =
        past ? WallTime::max() : (finishing_ ? context_.StopWaitingAt(give_up_) : WallTime::max());
    const bool done = PollRun(context_, t.record, until);
    if (done) {
      context_.follower_calls().CountEnded(t.record, t.listed);
      context_.runs().Add(std::move(t.record));
    }
    lock.lock();
    --fetching_;
    if (done && awaited_.erase(id) > 0) recorded_.insert(id);
    if (done) {
      cv_.notify_all();
      continue;
    }
    now = WallClock::now();
    const WallTime due = now + context_.options().poll_interval;
    // A listing refused while this run was being read: it is polled too.
    if (listing_refused_) t.listed = false;
    if (t.ended && !IsTerminal(t.record.state) && t.record.error.empty()) {
      // The listing raced the run (or reads its state otherwise): list it
      // again, and poll it after a second disagreement.
      t.ended = false;
      if (++t.misses >= 2 && t.listed) {
        t.listed = false;
        context_.follower_calls().NotePolling(
            "runs the listing missed while GetRun showed them running are polled one by one");
      }
      if (!t.listed) polls_.push({due, id});
    } else {
      // A failed GetRun (or a polled run still running): again after an
      // interval, never in a tight loop.
      polls_.push({due, id});
    }
    tracked_.insert(std::move(node));
  }
}

}  // namespace kfpbench::harness
