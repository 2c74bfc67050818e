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
#include <unordered_map>

#include "engine/event_loop.h"
#include "engine/executor.h"
#include "exec/duration_dist.h"

namespace kfpbench::sim {

struct StepModel {
  exec::DurationDist duration = exec::DurationDist::Constant(std::chrono::seconds(1));
  Duration overhead{0};  // added to every launch
};

struct StepModels {
  StepModel fallback;                         // any label not listed
  std::map<std::string, StepModel> by_label;  // "exec-train" -> ...

  const StepModel& For(const std::string& label) const;
};

class SimExecutor : public engine::Executor {
 public:
  SimExecutor(engine::EventLoop& loop, StepModels models, uint64_t seed);

  void Launch(engine::TaskLaunch launch, std::function<void(engine::TaskResult)> done) override;
  // Fires `done` (posted), failed with "canceled".
  void Cancel(const std::string& task_id) override;

  size_t running() const { return timers_.size(); }

 private:
  engine::EventLoop& loop_;
  StepModels models_;
  std::mt19937_64 rng_;
  struct InFlight {
    engine::TimerId timer;
    std::function<void(engine::TaskResult)> done;
  };
  std::unordered_map<std::string, InFlight> timers_;  // by task id
};

}  // namespace kfpbench::sim
