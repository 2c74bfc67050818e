// Creates the runs of enabled recurring runs on time, on its own thread.
// Its state is the store's (each recurring run's last fire time, written in
// the same transaction as the run it created), so it carries on after a
// restart as KFP's ScheduledWorkflow controller does: with catch-up, every
// missed fire time gets its run; with no_catchup, only the latest one.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "kfp/model.h"
#include "store/store.h"
#include "util/result.h"
#include "util/time.h"

namespace kfpbench::server {

// The next intended fire time of a recurring run after `last_fire` (epoch:
// none yet), in whole seconds, or nothing when its schedule has ended.
// Without a last fire, counting starts at the later of creation and
// start_time, as in KFP.
Result<std::optional<WallTime>> NextFireTime(const kfp::RecurringRun& r, WallTime last_fire);

class Scheduler {
 public:
  // Creates one run for `r`, intended for `fire`, and records `fire` as its
  // last fire time.
  using CreateRunFn = std::function<Status(const kfp::RecurringRun& r, WallTime fire)>;

  Scheduler(store::Store& store, CreateRunFn create_run);
  ~Scheduler();  // stops

  void Start();
  void Stop();
  // Something changed (a recurring run created or enabled): look again now.
  void Wake();

 private:
  void Loop();
  // One pass over the enabled schedules; returns when to look again.
  WallTime Pass(WallTime now);

  store::Store& store_;
  CreateRunFn create_run_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool woken_ = false;
  std::thread thread_;
  std::map<std::string, WallTime> retry_after_;  // schedules whose last attempt failed
};

}  // namespace kfpbench::server
