#include "sim/sim_executor.h"

#include <utility>

#include "engine/placement.h"
#include "exec/stub_executor.h"
#include "sim/shared_server.h"
#include "sim/step_draw.h"

namespace kfpbench::sim {

const StepModel& StepModels::For(const std::string& label) const {
  auto it = by_label.find(label);
  return it != by_label.end() ? it->second : fallback;
}

SimExecutor::SimExecutor(VirtualLoop& loop, StepModels models, uint64_t seed,
                         SharedServices services, engine::Resources default_task)
    : loop_(loop),
      models_(std::move(models)),
      seed_(seed),
      services_(services),
      default_task_(default_task) {
  if (services_.task_update <= Duration::zero()) services_.api = nullptr;
  if (services_.bandwidth <= 0) services_.store = nullptr;
  loop_.SetTimerTarget(this);
}

const StepModel& SimExecutor::ModelFor(const std::string& label) {
  for (const auto& [seen, model] : models_seen_) {
    if (seen == label) return *model;
  }
  const StepModel& model = models_.For(label);
  models_seen_.emplace_back(label, &model);
  return model;
}

void SimExecutor::Launch(engine::TaskLaunch launch, engine::TaskDone done) {
  const StepModel& model = ModelFor(launch.executor_label);
  const uint32_t ordinal = launch.label_launches_before;
  Duration run = model.duration.kind == exec::DurationDist::Kind::kConstant
                     ? model.duration.a
                     : DurationAt(model.duration, TaskUniform(seed_, launch.run_id,
                                                              launch.executor_label, ordinal));
  // What placement holds for it: the engine's demand of the same request.
  engine::Demand demand = engine::DemandOf(launch.resources, default_task_);
  if (!any_launched_) {
    any_launched_ = true;
    first_launch_ = loop_.Now();
    last_hold_change_ = first_launch_;
    if (on_first_launch) on_first_launch();
  }
  const double cpu = static_cast<double>(demand.cpu_millis()) / 1000.0;
  const auto memory = static_cast<double>(demand.memory());
  uint32_t slot = slots_.Acquire();
  InFlight& f = slots_[slot];
  f.beyond.reset();
  if (demand.amounts.AnyBeyondCpuAndMemory()) {
    f.beyond = std::make_unique<engine::ResourceList>(demand.amounts);
  }
  Hold(cpu, memory, f.beyond.get());
  f.cpu = cpu;
  f.memory = memory;
  f.task_id = std::move(launch.task_id);
  f.done = std::move(done);
  f.outputs.reset();
  if (!launch.output_parameter_types.empty()) {
    f.outputs = std::make_unique<std::map<std::string, std::string>>();
    for (const auto& [name, type] : launch.output_parameter_types) {
      (*f.outputs)[name] = exec::StubValueForType(type);
    }
  }
  ++running_;
  const uint32_t generation = f.generation;
  if (services_.api == nullptr && (services_.store == nullptr || model.artifact_bytes <= 0)) {
    // Nothing shared on the way: one timer.
    f.stage = kNoStages;
    return loop_.AfterKeyed(model.overhead + run, slot, generation);
  }
  f.stage = 0;
  f.run = run;
  f.bytes = model.artifact_bytes;
  loop_.AfterKeyed(model.overhead, slot, generation);
}

bool SimExecutor::Fire(uint32_t slot, uint32_t generation) {
  InFlight& f = slots_[slot];
  if (!f.live || f.generation != generation) return false;  // canceled meanwhile
  if (f.stage == kNoStages) {
    Finish(slot);
  } else {
    Advance(slot, generation);
  }
  return true;
}

void SimExecutor::Advance(uint32_t slot, uint32_t generation) {
  InFlight& f = slots_[slot];
  if (!f.live || f.generation != generation) return;  // canceled meanwhile
  if (f.stage == 1 || f.stage == 3 || f.stage == 4) {
    // Back from a service (stage 3: the store; 1 and 4: the API), having
    // held its node all the while.
    ServiceHold& hold = f.stage == 3 ? store_hold_ : api_hold_;
    const double held = ToSeconds(loop_.Now() - f.entered);
    hold.task_seconds += held;
    hold.cpu += f.cpu * held;
    hold.memory += f.memory * held;
  }
  auto next = [this, slot, generation] { Advance(slot, generation); };
  while (true) {
    switch (f.stage) {
      case 0:  // the pod is up: the launcher reports the task running
        f.stage = 1;
        f.entered = loop_.Now();
        if (services_.api != nullptr) return services_.api->Submit(services_.task_update, next);
        break;
      case 1:  // the step itself
        f.stage = 2;
        return loop_.AfterKeyed(f.run, slot, generation);
      case 2:  // its outputs go to the artifact store
        f.stage = 3;
        f.entered = loop_.Now();
        if (services_.store != nullptr && f.bytes > 0) {
          return services_.store->Submit(
              FromSeconds(static_cast<double>(f.bytes) / services_.bandwidth), next);
        }
        break;
      case 3:  // the launcher reports the task done
        f.stage = 4;
        f.entered = loop_.Now();
        if (services_.api != nullptr) return services_.api->Submit(services_.task_update, next);
        break;
      default:
        return Finish(slot);
    }
  }
}

void SimExecutor::Hold(double cpu, double memory, const engine::ResourceList* beyond,
                       int64_t sign) {
  WallTime now = loop_.Now();
  const double dt = ToSeconds(now - last_hold_change_);
  cpu_seconds_ += held_cpu_ * dt;
  memory_seconds_ += held_memory_ * dt;
  task_seconds_ += static_cast<double>(running_) * dt;
  if (any_beyond_) {
    for (size_t s = engine::kMemory + 1; s < engine::kResourceSlots; ++s) {
      beyond_seconds_[s] += static_cast<double>(held_beyond_[s]) * dt;
    }
  }
  last_hold_change_ = now;
  held_cpu_ += cpu;
  held_memory_ += memory;
  if (beyond != nullptr) {
    any_beyond_ = true;
    for (size_t s = engine::kMemory + 1; s < engine::kResourceSlots; ++s) {
      held_beyond_[s] += sign * (*beyond)[s];
    }
  }
}

double SimExecutor::AllocatedSeconds(size_t slot, WallTime t) const {
  if (!any_beyond_) return 0;
  return beyond_seconds_[slot] +
         static_cast<double>(held_beyond_[slot]) * ToSeconds(t - last_hold_change_);
}

double SimExecutor::AllocatedCpuSeconds(WallTime t) const {
  if (!any_launched_) return 0;
  return cpu_seconds_ + held_cpu_ * ToSeconds(t - last_hold_change_);
}

double SimExecutor::TaskSeconds(WallTime t) const {
  if (!any_launched_) return 0;
  return task_seconds_ + static_cast<double>(running_) * ToSeconds(t - last_hold_change_);
}

double SimExecutor::AllocatedMemorySeconds(WallTime t) const {
  if (!any_launched_) return 0;
  return memory_seconds_ + held_memory_ * ToSeconds(t - last_hold_change_);
}

void SimExecutor::Finish(uint32_t slot) {
  InFlight& f = slots_[slot];
  Hold(-f.cpu, -f.memory, f.beyond.get(), -1);
  f.live = false;
  --running_;
  auto fn = std::move(f.done);
  engine::TaskResult result;
  result.succeeded = true;
  if (f.outputs) result.output_parameters = std::move(*f.outputs);
  f.done = nullptr;
  slots_.Release(slot);
  fn(std::move(result));
}

void SimExecutor::Cancel(const std::string& task_id) {
  for (uint32_t slot = 0; slot < slots_.size(); ++slot) {
    InFlight& f = slots_[slot];
    if (!f.live || f.task_id != task_id) continue;
    // Its timer, if pending, finds the slot no longer live.
    Hold(-f.cpu, -f.memory, f.beyond.get(), -1);
    f.live = false;
    --running_;
    auto fn = std::move(f.done);
    f.done = nullptr;
    slots_.Release(slot);
    engine::TaskResult result;
    result.error = "canceled";
    loop_.Post(
        [fn = std::move(fn), result = std::move(result)]() mutable { fn(std::move(result)); });
    return;
  }
}

}  // namespace kfpbench::sim
