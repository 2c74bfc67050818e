// Follows many runs at once without polling each: the runs' ends are found by
// listing what is still in flight (ListRuns on their experiments, 200 runs a
// page, once per poll interval), and each run that has left the listing gets
// one GetRun with its details. Every call goes through the context's
// FollowerCalls: its own client (recorded apart) and budget (--observer-qps).
// Open-loop load hands its runs over and goes on, because arrivals must never
// wait for earlier runs to finish; closed-loop workers hand theirs over and
// wait for them (WaitRecorded), so 50 workers cost one listing an interval,
// not 50 GetRuns.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <queue>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "harness/runner.h"

namespace kfpbench::harness {

// Threads that read the details of the runs an open-loop load created
// (orchestrate's and PIPELINE_RUN's); one more lists.
inline constexpr int kOpenLoopPollers = 4;

// What the follower lists by: KFP's page limit, and the states a run is
// still in flight in (v2beta1's `state`, which the filter reads).
inline constexpr int kListPageSize = 200;
std::string InFlightFilter();

class RunFollower {
 public:
  RunFollower(Context& context, int threads);
  ~RunFollower();  // Finish(now) if not called

  // A run that CreateRun accepted (or a listing found); it is recorded once
  // terminal. Its experiment_id (from the server's answer) is what it is
  // listed by; without one it is polled one by one.
  void Add(results::RunRecord record);
  // Closed loop: waits until the run `run_id` (added before) has been
  // recorded, or until `until` (sooner after an interruption: the context's
  // grace). False when it was not: the run stays followed, and Finish
  // records it as unfinished if it never ends.
  bool WaitRecorded(const std::string& run_id, WallTime until);
  // Waits until every run added is terminal, or until `give_up` (sooner after
  // an interruption: the context's grace), recording what is left as unfinished.
  // A run the listing saw end before then still gets its details read, within
  // the budget, unless interrupted.
  void Finish(WallTime give_up);
  size_t in_flight() const;

 private:
  struct Tracked {
    results::RunRecord record;
    WallTime added{};
    bool listed = true;  // its end is found by listing; false: polled one by one
    bool ended = false;  // the listing no longer shows it: due its GetRun
    int misses = 0;      // times a listing said ended and GetRun did not agree
  };
  using Due = std::pair<WallTime, std::string>;
  void ListLoop();
  void DetailLoop();
  // Ids of `experiment_id`'s runs still in flight, every page; an Error when
  // a page failed or the budget ran out before `until`.
  Result<std::set<std::string>> ListInFlight(const std::string& experiment_id, WallTime until);
  // Marks the runs of `experiment_id` added before `sweep_start` and absent
  // from `in_flight` as ended. Under mu_.
  void Conclude(const std::string& experiment_id, const std::set<std::string>& in_flight,
                WallTime sweep_start);
  // Polls `experiment_id`'s runs (all runs when empty) one by one from now on.
  // Under mu_.
  void PollInstead(const std::string& experiment_id, const std::string& why);
  bool PastDeadline(WallTime now) const;  // under mu_

  Context& context_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Tracked> tracked_;  // by run id; out of it while fetched
  std::set<std::string> awaited_;           // run ids a closed-loop worker waits for
  std::set<std::string> recorded_;          // of those, the ones recorded since
  std::deque<std::string> ready_;  // ended by the listing: GetRun as soon as the budget lets
  std::priority_queue<Due, std::vector<Due>, std::greater<>> polls_;  // polled runs, by due time
  size_t fetching_ = 0;
  bool finishing_ = false;
  bool listing_refused_ = false;  // for good: every run is polled from then on
  WallTime give_up_ = WallTime::max();
  std::vector<std::thread> threads_;
};

// One GetRun through the observer (its client, its budget, until `until`):
// updates `record`; true when the run needs no more polling (terminal, or
// gone).
bool PollRun(Context& context, results::RunRecord& record, WallTime until = WallTime::max());
void AbsorbRun(const kfp::Run& run, results::RunRecord& record);

}  // namespace kfpbench::harness
