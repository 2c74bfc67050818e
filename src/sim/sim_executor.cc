#include "sim/sim_executor.h"

#include <utility>

#include "exec/stub_executor.h"

namespace kfpbench::sim {

const StepModel& StepModels::For(const std::string& label) const {
  auto it = by_label.find(label);
  return it != by_label.end() ? it->second : fallback;
}

SimExecutor::SimExecutor(engine::EventLoop& loop, StepModels models, uint64_t seed)
    : loop_(loop), models_(std::move(models)), rng_(seed) {}

void SimExecutor::Launch(engine::TaskLaunch launch, std::function<void(engine::TaskResult)> done) {
  const StepModel& model = models_.For(launch.executor_label);
  Duration d = model.overhead + model.duration.Sample(rng_);
  engine::TaskResult result;
  result.succeeded = true;
  for (const auto& [name, type] : launch.output_parameter_types) {
    result.output_parameters[name] = exec::StubValueForType(type);
  }
  InFlight& slot = timers_[launch.task_id];
  slot.done = std::move(done);
  slot.timer =
      loop_.After(d, [this, id = std::move(launch.task_id), result = std::move(result)]() mutable {
        auto it = timers_.find(id);
        if (it == timers_.end()) return;
        auto fn = std::move(it->second.done);
        timers_.erase(it);
        fn(std::move(result));
      });
}

void SimExecutor::Cancel(const std::string& task_id) {
  auto it = timers_.find(task_id);
  if (it == timers_.end()) return;
  loop_.Cancel(it->second.timer);
  auto fn = std::move(it->second.done);
  timers_.erase(it);
  engine::TaskResult result;
  result.error = "canceled";
  loop_.Post([fn = std::move(fn), result = std::move(result)]() mutable { fn(std::move(result)); });
}

}  // namespace kfpbench::sim
