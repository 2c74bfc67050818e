// The simulator's executor: a task lasts a fixed per-task overhead (pod
// start-up, the launcher) plus a duration drawn from its executor label's
// distribution, on the loop's clock, then succeeds with type-correct
// placeholder outputs. Unlike exec::StubExecutor it takes no locks and keeps
// only the timers of tasks in flight. Durations are common random numbers
// (step_draw.h): keyed by the task's run, label and launch within the run
// (TaskLaunch::label_launches_before, which the engine counts), never by the
// order of launches across runs. It also integrates the
// resources its tasks hold, for exact time-weighted utilisation.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/event_loop.h"
#include "engine/executor.h"
#include "engine/resources.h"
#include "exec/duration_dist.h"
#include "sim/slot_pool.h"
#include "sim/virtual_loop.h"

namespace kfpbench::sim {

struct StepModel {
  exec::DurationDist duration = exec::DurationDist::Constant(std::chrono::seconds(1));
  Duration overhead{0};        // added to every launch
  int64_t artifact_bytes = 0;  // uploaded to the artifact store when the step ends
};

class SharedServer;

// Seconds tasks spent inside a shared service while holding their node,
// plain and weighted by the cores and bytes they held.
struct ServiceHold {
  double task_seconds = 0;
  double cpu = 0;     // core-seconds
  double memory = 0;  // byte-seconds
};

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

class SimExecutor : public engine::Executor, private TimerTarget {
 public:
  // `default_task` is what a task whose IR asks for nothing holds (the
  // engine's default_task_resources), for the utilisation integral.
  SimExecutor(VirtualLoop& loop, StepModels models, uint64_t seed, SharedServices services = {},
              engine::Resources default_task = {});
  ~SimExecutor() override { loop_.SetTimerTarget(nullptr); }
  SimExecutor(const SimExecutor&) = delete;  // models_seen_ points into models_
  SimExecutor& operator=(const SimExecutor&) = delete;

  void Launch(engine::TaskLaunch launch, engine::TaskDone done) override;
  // Fires `done` (posted), failed with "canceled".
  void Cancel(const std::string& task_id) override;

  size_t running() const { return running_; }

  // Requested cores and bytes held by tasks in flight, integrated over time
  // up to `t` (core-seconds, byte-seconds); and when the first task started.
  double AllocatedCpuSeconds(WallTime t) const;
  double AllocatedMemorySeconds(WallTime t) const;
  // Likewise for a resource beyond CPU and memory (an accelerator), in its
  // ResourceList unit (unit-seconds).
  double AllocatedSeconds(size_t slot, WallTime t) const;
  bool any_launched() const { return any_launched_; }
  // Tasks in flight integrated over time up to `t` (task-seconds).
  double TaskSeconds(WallTime t) const;
  // What tasks held while inside each shared service, queued or served.
  const ServiceHold& api_hold() const { return api_hold_; }
  const ServiceHold& store_hold() const { return store_hold_; }
  // Called once, when the first task launches.
  std::function<void()> on_first_launch;
  WallTime first_launch() const { return first_launch_; }

 private:
  // Tasks in flight live in slots reused through a free list; their timers
  // are the loop's keyed timers, carrying the slot and its generation, so a
  // completion finds its task without hashing a task id or reading a slot
  // of the loop's (Cancel, which is rare, scans).
  // What a completion reads first, in one cache line: a task's slot is
  // cold by the time it ends, minutes of simulated time after it started.
  struct alignas(64) InFlight {
    uint32_t generation = 0;
    bool live = false;
    uint8_t stage = 0;  // with shared services: the stage reached (Advance); else kNoStages
    double cpu = 0;     // cores it holds
    double memory = 0;  // bytes it holds
    engine::TaskDone done;
    // Output parameter name -> placeholder value, when the task has any;
    // the result is built from it when the task ends.
    std::unique_ptr<std::map<std::string, std::string>> outputs;
    Duration run{0};  // with shared services: the step's own time, its bytes
    int64_t bytes = 0;
    WallTime entered{};  // with shared services: when it went into the last one
    std::string task_id;
    // What it holds beyond CPU and memory (an accelerator); null: nothing.
    std::unique_ptr<engine::ResourceList> beyond;
  };
  static constexpr uint8_t kNoStages = 0xff;
  // Its timer is due: Finish, or Advance through shared services.
  bool Fire(uint32_t slot, uint32_t generation) override;
  // Ends the live task in `slot` (Fire and Advance have checked it is).
  void Finish(uint32_t slot);
  // Moves a task through overhead, update, run, upload, update.
  void Advance(uint32_t slot, uint32_t generation);
  // Brings the allocation integrals to now, then changes what is held
  // (`beyond`: added when `sign` is 1, taken away when -1).
  void Hold(double cpu, double memory, const engine::ResourceList* beyond = nullptr,
            int64_t sign = 1);

  VirtualLoop& loop_;
  // StepModels::For through a short list of the labels seen so far: a run
  // has a handful, and comparing a few short strings beats a map's walk per
  // launch. The models live in models_ (map nodes and the fallback stay put).
  const StepModel& ModelFor(const std::string& label);
  StepModels models_;
  std::vector<std::pair<std::string, const StepModel*>> models_seen_;
  uint64_t seed_;
  SharedServices services_;
  engine::Resources default_task_;
  double held_cpu_ = 0, held_memory_ = 0;
  double cpu_seconds_ = 0, memory_seconds_ = 0, task_seconds_ = 0;
  ServiceHold api_hold_, store_hold_;
  engine::ResourceList held_beyond_;  // slots past memory, by tasks in flight
  std::array<double, engine::kResourceSlots> beyond_seconds_{};
  bool any_beyond_ = false;  // some task held more than CPU and memory
  WallTime last_hold_change_{};
  bool any_launched_ = false;
  WallTime first_launch_{};
  SlotPool<InFlight> slots_;
  size_t running_ = 0;
};

}  // namespace kfpbench::sim
