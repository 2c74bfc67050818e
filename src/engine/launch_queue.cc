// A container task's attempts: queued for a node with room, launched through
// the Executor, its result read, and a failed attempt retried after a backoff.
#include "engine/engine_impl.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "ir/placeholders.h"
#include "ir/values.h"

namespace kfpbench::engine {

using namespace detail;  // NOLINT: the run state types are the engine's vocabulary

namespace {

using nlohmann::json;

// Resource fields set from a pipeline input or an upstream output, resolved
// from the task's inputs as KFP's driver does when it builds the pod.
// `spec` itself when nothing is templated (a copy per task would cost
// its string and map); else the resolved copy in `resolved`.
Result<const ir::ResourceSpec*> ResolveResources(const TaskExec& task, const ir::ResourceSpec& spec,
                                                 ir::ResourceSpec& resolved) {
  if (spec.templated.empty()) return &spec;
  ir::ResourceSpec& out = resolved = spec;
  ir::PlaceholderContext ctx;
  ctx.parameters = &ObjectOr(task.params());
  for (const auto& [key, text] : spec.templated) {
    auto value = ir::ResolvePlaceholders(text, ctx);
    if (!value.ok()) return Error{fmt::format("resources.{}: {}", key, value.error().message)};
    if (Status s = ir::SetResourceField(out, key, *value); !s.ok()) {
      return Error{fmt::format("resources.{} = '{}': {}", key, *value, s.error().message)};
    }
  }
  return &out;
}

}  // namespace

// Queues a launch for a node with room, unless no node could ever hold it.
Status Engine::Impl::Place(DagExec& dag, int i, const ir::ExecutorSpec& executor_spec,
                           TaskLaunch&& launch) {
  TaskExec& task = dag.tasks[i];
  const ir::TaskSpec& spec = *dag.plan->tasks[i];
  const ir::ExecutorSpec* exec = &executor_spec;
  ir::ResourceSpec resolved;
  auto resources = ResolveResources(task, exec->container.resources, resolved);
  if (!resources.ok()) return resources.error();
  Resources ir_res = ResourcesOf(**resources);
  bool any = ir_res.cpu_request > 0 || ir_res.cpu_limit > 0 || ir_res.memory_request > 0 ||
             ir_res.memory_limit > 0;
  launch.resources = any ? ir_res : options.default_task_resources;
  if (!any) launch.resources.extended = ir_res.extended;  // an accelerator alone
  Demand demand = DemandOf(ir_res, options.default_task_resources);
  if (!exec->scheduling.empty()) demand.scheduling = &exec->scheduling;
  if (!placement.FitsSomeNode(demand)) {
    if (demand.scheduling == nullptr && !placement.any_taints()) {  // size alone
      return Error{fmt::format("task requests {}, more than any node offers (largest: {})",
                               DescribeDemand(demand), DescribeResources(placement.LargestNode()))};
    }
    // A pod Kubernetes could never schedule would stay Pending for ever;
    // here the task fails at once with the scheduler's reason.
    return Error{fmt::format("task cannot be scheduled: {}", placement.WhyUnschedulable(demand))};
  }
  if (spec.enable_cache && options.cache != nullptr && ReuseCachedExecution(dag, i, *exec)) {
    return Ok();
  }
  if (spec.retry && spec.retry->max_retry_count > 0) {
    task.Rare().retry_launch = std::make_unique<TaskLaunch>(launch);
  }
  Enqueue(dag, i, std::move(launch), demand);
  SchedulePending();
  return Ok();
}

// A new attempt of task `i`, in a slot; returns its id.
uint64_t Engine::Impl::NewAttempt(DagExec& dag, int i, Container::Where where, const Demand& demand,
                                  const Resources& resources) {
  uint64_t id = NewContainer();
  Container& c = *FindContainer(id);
  c.run = dag.run;
  c.dag = &dag;
  c.task = i;
  c.task_exec = &dag.tasks[i];
  c.record = dag.tasks[i].record;
  c.where = where;
  c.demand = demand;
  c.exec = dag.plan->executors[i];
  c.component = dag.plan->components[i];
  c.resources = resources;
  return id;
}

void Engine::Impl::Enqueue(DagExec& dag, int i, TaskLaunch&& launch, const Demand& demand) {
  uint64_t id = NewAttempt(dag, i, Container::Where::kQueued, demand, launch.resources);
  Container& c = *FindContainer(id);
  c.ready_at = ready_since != WallTime{} ? ready_since : loop.Now();
  if (options.resolve_command_lines) {
    TaskLaunch& kept = LaunchOf(id);
    kept = std::move(launch);
    kept.pod_name = PodName(*dag.run);
  }
  placement.Enqueue(id, demand);
}

void Engine::Impl::SchedulePending() {
  // The buffer is reused from call to call; a nested call (none is
  // expected) would find it moved out and use a fresh one.
  std::vector<Placement::Placed> placed = std::move(placed_buffer);
  placed.clear();
  placement.Schedule(placed);
  for (const auto& p : placed) {
    Container* c = FindContainer(p.ticket);
    if (c == nullptr) continue;
    Launch(p.ticket, *c, p.node);
  }
  placed_buffer = std::move(placed);
  // On a full cluster the head of the queue is placed when the next task
  // ends; its slot, queued long ago, is cold. Fetching its two lines now
  // overlaps the wait with the work in between.
  if (Placement::Ticket next = placement.first_queued(); next != 0) {
    const Container& c = container_slots[SlotOf(next)];
    __builtin_prefetch(&c);
    __builtin_prefetch(reinterpret_cast<const char*>(&c) + 64);
  }
}

void Engine::Impl::Launch(uint64_t id, Container& c, size_t node) {
  Run& run = *c.run;
  // Only the attempt's, the run's and the record's lines, not the DAG's
  // or the task's: each is cold by the time a queued task is placed.
  TaskState& rec = run.records[c.record];
  c.where = Container::Where::kRunning;
  c.node = node;
  if (options.task_details) {
    TaskRecord& d = run.details[c.record];
    d.node = placement.node(node).name;
    d.pod_name = LaunchOf(id).pod_name;
  }
  rec.scheduling_delay = loop.Now() - c.ready_at;
  MarkRunning(run);
  SetState(run, c.record, RuntimeState::kRunning);
  auto done = [this, id](TaskResult&& result) {
    if (depth > 0) {
      // Called from inside Launch: finish it after this handler.
      loop.Post([this, id, r = std::move(result)] { OnDone(id, r); });
      return;
    }
    OnDone(id, result);
  };
  const uint32_t launches_before = run.launches.Count(c.exec);
  if (!options.resolve_command_lines) {
    return executor.Launch(TimingLaunch(c, launches_before), std::move(done));
  }
  // Retries rebuild from task.retry_launch, so the executor can have ours.
  TaskLaunch& launch = LaunchOf(id);
  launch.label_launches_before = launches_before;
  executor.Launch(std::move(launch), std::move(done));
}

void Engine::Impl::OnDone(uint64_t id, const TaskResult& result) {
  Scope scope(*this);
  Container* held = FindContainer(id);
  if (held == nullptr) return;
  // The few fields needed below (the launch went to the executor). The
  // record is found from the attempt, not the task, so that the run's, the
  // task's and the record's cache lines load at once, not one after another.
  Run& run = *held->run;
  DagExec& dag = *held->dag;
  const int i = held->task;
  TaskExec& task = *held->task_exec;
  if (options.task_details) {
    TaskRecord& d = run.details[held->record];
    d.cpu_seconds += result.cpu_seconds;
    d.peak_rss_bytes = std::max(d.peak_rss_bytes, result.peak_rss_bytes);
    if (!result.log_path.empty()) d.log_path = result.log_path;
  }
  placement.Release(held->node, held->demand);
  const ir::TaskSpec& spec = *dag.plan->tasks[i];
  const ir::ComponentSpec& comp = *dag.plan->components[i];
  // Only a retry needs the demand whole: its rules are on the slot's
  // second line.
  const Demand retry_demand = spec.retry ? held->demand : Demand{};
  FreeContainer(id, *held);
  // Attempts are counted as they end, and only where a retry policy reads them.
  if (spec.retry) ++task.Rare().attempts;

  if (run.canceled) {
    FinishTask(dag, i, RuntimeState::kCanceled, "canceled");
  } else {
    std::string error;
    if (result.succeeded) {
      for (const auto& [name, def] : comp.outputs.parameters) {
        auto raw = result.output_parameters.find(name);
        if (raw == result.output_parameters.end()) {
          error = fmt::format("output parameter '{}' was not written", name);
          break;
        }
        auto value = ir::ParseOutputParameter(raw->second, def.type);
        if (!value.ok()) {
          error = fmt::format("output parameter '{}': {}", name, value.error().message);
          break;
        }
        task.Outputs()[name] = std::move(*value);
      }
    } else {
      error = result.error.empty() ? fmt::format("exit code {}", result.exit_code) : result.error;
    }
    if (error.empty()) {
      if (!task.fingerprint().empty()) RecordInCache(run, task);
      if (options.requeue_time > Duration::zero()) {
        NoticeLater(dag, i, run.records[task.record].start_time);
      } else {
        FinishTask(dag, i, RuntimeState::kSucceeded);
      }
    } else if (spec.retry && task.attempts() <= spec.retry->max_retry_count &&
               task.retry_launch()) {
      ScheduleRetry(dag, i, retry_demand, error);
    } else {
      task.Outputs() = json::object();
      FinishTask(dag, i, RuntimeState::kFailed, error);
    }
  }
  SchedulePending();
}

// The controller's next look at the run (EngineOptions::requeue_time): the
// task stays active, so its DAG and run stay open until then.
void Engine::Impl::NoticeLater(DagExec& dag, int i, WallTime started) {
  const WallTime now = loop.Now();
  const WallTime first_look = started + options.requeue_time;
  const Duration wait = now <= first_look ? first_look - now : options.requeue_time;
  loop.After(wait, [this, &dag, i, now] {
    Scope scope(*this);
    // What this starts was ready when the step ended: its wait counts from then.
    ready_since = now;
    FinishTask(dag, i, dag.run->canceled ? RuntimeState::kCanceled : RuntimeState::kSucceeded,
               dag.run->canceled ? "canceled" : "");
    ready_since = WallTime{};
    SchedulePending();
  });
}

void Engine::Impl::ScheduleRetry(DagExec& dag, int i, const Demand& demand,
                                 const std::string& error) {
  TaskExec& task = dag.tasks[i];
  Run& run = *dag.run;
  const ir::RetryPolicy& policy = *dag.plan->tasks[i]->retry;
  task.Outputs() = json::object();
  double seconds = ToSeconds(policy.backoff) * std::pow(policy.backoff_factor, task.attempts() - 1);
  if (policy.backoff_max > Duration::zero()) {
    seconds = std::min(seconds, ToSeconds(policy.backoff_max));
  }
  Duration delay = FromSeconds(seconds);
  SetState(run, task.record, RuntimeState::kRunning,
           fmt::format("attempt {} failed: {}; retry {} of {} in {}", task.attempts(), error,
                       task.attempts(), policy.max_retry_count, FormatDuration(delay)));
  uint64_t id =
      NewAttempt(dag, i, Container::Where::kBackoff, demand, task.retry_launch()->resources);
  Container& c = *FindContainer(id);
  c.timer = loop.After(delay, [this, id] { OnRetryTimer(id); });
}

void Engine::Impl::OnRetryTimer(uint64_t id) {
  Scope scope(*this);
  Container* found = FindContainer(id);
  if (found == nullptr || found->where != Container::Where::kBackoff) return;
  Container& c = *found;
  TaskExec& task = c.dag->tasks[c.task];
  c.where = Container::Where::kQueued;
  c.ready_at = loop.Now();
  if (options.resolve_command_lines) {
    TaskLaunch& launch = LaunchOf(id);
    launch = *task.retry_launch();
    launch.pod_name = PodName(*c.run);
  }
  placement.Enqueue(id, c.demand);
  SchedulePending();
}

}  // namespace kfpbench::engine
