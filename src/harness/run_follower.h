// Follows many runs at once with a few threads: each run is polled every
// poll interval until it is terminal, then recorded. Open-loop load needs
// this, because arrivals must never wait for earlier runs to finish.
#pragma once

#include <condition_variable>
#include <mutex>
#include <queue>
#include <thread>
#include <vector>

#include "harness/runner.h"

namespace kfpbench::harness {

// Threads that poll the runs an open-loop load created (orchestrate's and
// PIPELINE_RUN's).
inline constexpr int kOpenLoopPollers = 4;

class RunFollower {
 public:
  RunFollower(Context& context, int threads);
  ~RunFollower();  // Finish(now) if not called

  // A run that CreateRun accepted; it is recorded once terminal.
  void Add(results::RunRecord record);
  // Waits until every run added is terminal, or until `give_up` (sooner after
  // an interruption: the context's grace), recording what is left as unfinished.
  void Finish(WallTime give_up);
  size_t in_flight() const;

 private:
  struct Item {
    WallTime due;
    results::RunRecord record;
    bool operator>(const Item& o) const { return due > o.due; }
  };
  void Loop();

  Context& context_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> queue_;
  size_t polling_ = 0;  // items taken out of the queue and being polled
  bool finishing_ = false;
  WallTime give_up_ = WallTime::max();
  std::vector<std::thread> threads_;
};

// One GetRun: updates `record`; true when the run needs no more polling
// (terminal, or gone).
bool PollRun(Context& context, results::RunRecord& record);
void AbsorbRun(const kfp::Run& run, results::RunRecord& record);
// Closed loop: polls one run until it is terminal or `give_up` (sooner
// after an interruption: the context's grace), noting why it stopped waiting.
void FollowRun(Context& context, results::RunRecord& record, WallTime give_up);

}  // namespace kfpbench::harness
