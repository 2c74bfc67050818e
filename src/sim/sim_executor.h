// The simulator's executor: a task lasts a fixed per-task overhead (pod
// start-up, the launcher) plus a duration drawn from its executor label's
// distribution, on the loop's clock, then succeeds with type-correct
// placeholder outputs. Unlike exec::StubExecutor it takes no locks and keeps
// only the timers of tasks in flight.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "engine/event_loop.h"
#include "engine/executor.h"
#include "exec/duration_dist.h"
#include "sim/slot_pool.h"

namespace kfpbench::sim {

struct StepModel {
  exec::DurationDist duration = exec::DurationDist::Constant(std::chrono::seconds(1));
  Duration overhead{0};        // added to every launch
  int64_t artifact_bytes = 0;  // uploaded to the artifact store when the step ends
};

class SharedServer;

// The shared services a task goes through, when modelled: a status update
// through the API when it starts and when it ends, and its artifacts'
// upload in between.
struct SharedServices {
  SharedServer* api = nullptr;
  Duration task_update{0};
  SharedServer* store = nullptr;
  double bandwidth = 0;  // bytes per second
};

struct StepModels {
  StepModel fallback;                         // any label not listed
  std::map<std::string, StepModel> by_label;  // "exec-train" -> ...

  const StepModel& For(const std::string& label) const;
};

class SimExecutor : public engine::Executor {
 public:
  SimExecutor(engine::EventLoop& loop, StepModels models, uint64_t seed,
              SharedServices services = {});

  void Launch(engine::TaskLaunch launch, std::function<void(engine::TaskResult)> done) override;
  // Fires `done` (posted), failed with "canceled".
  void Cancel(const std::string& task_id) override;

  size_t running() const { return running_; }

 private:
  // Tasks in flight live in slots reused through a free list; the timer
  // carries the slot and its generation, so a completion finds its task
  // without hashing a task id (Cancel, which is rare, scans).
  struct InFlight {
    uint32_t generation = 0;
    bool live = false;
    std::string task_id;
    engine::TimerId timer = 0;
    std::function<void(engine::TaskResult)> done;
    engine::TaskResult result;
    // With shared services: the stage reached, the step's own time, its bytes.
    int stage = 0;
    Duration run{0};
    int64_t bytes = 0;
  };
  void Finish(uint32_t slot, uint32_t generation);
  // Moves a task through overhead, update, run, upload, update.
  void Advance(uint32_t slot, uint32_t generation);

  engine::EventLoop& loop_;
  StepModels models_;
  std::mt19937_64 rng_;
  SharedServices services_;
  SlotPool<InFlight> slots_;
  size_t running_ = 0;
};

}  // namespace kfpbench::sim
