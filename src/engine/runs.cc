// A run's start, its end, and its cancellation.
#include "engine/engine_impl.h"

#include <algorithm>
#include <cctype>
#include <mutex>
#include <utility>

#include "engine/run_parameters.h"

namespace kfpbench::engine {

using namespace detail;  // NOLINT: the run state types are the engine's vocabulary

namespace {

using nlohmann::json;

std::string SanitizeName(std::string_view name, size_t max_len) {
  std::string out;
  for (char c : name) {
    if (out.size() >= max_len) break;
    char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out += (std::isalnum(static_cast<unsigned char>(l)) != 0) ? l : '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "pipeline" : out;
}

}  // namespace

// ResolveRunParameters, on the caller's thread. Runs of one spec that give
// no parameters all get its defaults: resolved once and shared, read-only,
// by every such run's root DAG (a simulation submits one spec many times).
Result<std::shared_ptr<const json>> Engine::Impl::RunParameters(const RunRequest& req) {
  const bool none_given = req.parameters.is_null() || req.parameters.empty();
  if (none_given) {
    std::lock_guard lock(defaults_mu);
    if (defaults_spec == req.spec) return defaults;
  }
  auto params = ResolveRunParameters(*req.spec, req.parameters);
  if (!params.ok()) return params.error();
  auto shared = std::make_shared<const json>(std::move(*params));
  if (none_given) {
    std::lock_guard lock(defaults_mu);
    defaults_spec = req.spec;
    defaults = shared;
  }
  return shared;
}

void Engine::Impl::StartRun(RunRequest req, std::shared_ptr<const json> params) {
  Scope scope(*this);
  auto [slot, inserted] = runs.try_emplace(req.run_id);
  if (!inserted) return;  // a duplicate id; the first run wins
  Run& run = slot->second;
  run.id = std::move(req.run_id);
  run.spec = std::move(req.spec);
  if (run.spec != last_spec || !last_plans) {
    last_spec = run.spec;
    last_plans = std::make_shared<decltype(last_plans)::element_type>();
    last_resource_prefix = SanitizeName(run.spec->name, 40) + "-";
  }
  run.plans = last_plans;
  run.pipeline_root = std::move(req.pipeline_root);
  run.keep = std::move(req.keep);
  run.retry = !run.keep.empty();
  run.display_name = std::move(req.display_name);
  run.workspace_is_local = !options.work_root.empty();
  run.workspace_path = run.workspace_is_local ? (options.work_root / run.id / "workspace").string()
                                              : std::string("/kfp-workspace");
  run.created_at = req.created_at;
  run.scheduled_at = req.scheduled_at;
  static constexpr char kAlnum[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  run.resource_name = last_resource_prefix;
  for (int i = 0; i < 5; ++i) run.resource_name += kAlnum[rng() % 36];
  // Pending, running, and its end (or canceling, canceled): growing the
  // vector would allocate three times per run.
  run.history.reserve(4);
  run.history.push_back({loop.Now(), RuntimeState::kPending, {}});
  // One record per root task and the root: growing the vector would move
  // every record several times per run.
  if (run.spec->root.dag) {
    run.records.reserve(1 + run.spec->root.dag->tasks.size());
    if (options.task_details) run.details.reserve(run.records.capacity());
  }
  MarkDirty(run);
  const std::string& display =
      run.spec->display_name.empty() ? run.spec->name : run.spec->display_name;
  int root_record = NewRecord(run, run.spec->name, display, -1, kNoLabel);
  if (options.task_details) run.details[root_record].inputs = {{"parameters", *params}};
  DagExec& root =
      NewDag(run, nullptr, -1, -1, run.spec->root, std::move(params), {}, root_record, {});
  StartDag(root);
}

void Engine::Impl::MarkRunning(Run& run) {
  if (run.state != RuntimeState::kPending) return;
  SetRunState(run, RuntimeState::kRunning);
  SetState(run, 0, RuntimeState::kRunning);
}

void Engine::Impl::FinishRun(Run& run, RuntimeState state, const std::string& dag_error) {
  if (run.finished) return;
  run.finished = true;
  if (state == RuntimeState::kFailed && run.error.empty()) run.error = dag_error;
  if (state != RuntimeState::kFailed && state != RuntimeState::kCanceled) run.error.clear();
  if (state == RuntimeState::kCanceled && run.error.empty()) run.error = "run canceled";
  DagExec& root = run.dags.front();
  if (options.task_details) run.details[0].outputs = {{"parameters", ObjectOr(root.outputs)}};
  SetState(run, 0, state, run.error);
  SetRunState(run, state, run.error);
}

void Engine::Impl::Terminate(const std::string& run_id) {
  Scope scope(*this);
  auto it = runs.find(run_id);
  if (it == runs.end() || it->second.finished) {
    observer.OnTerminateNotExecuting(run_id);
    return;
  }
  Run& run = it->second;
  if (run.canceled) return;
  run.canceled = true;
  run.stopping = true;
  SetRunState(run, RuntimeState::kCanceling);
  // The run's attempts, found by a scan of every slot: cancelling is rare,
  // where a list per run would cost every attempt a write and an erase in
  // the run's (cold) state. In creation order, so that cancellations happen
  // in a deterministic order.
  std::vector<std::pair<uint64_t, uint64_t>> order;  // serial, id
  for (uint32_t slot = 0; slot < container_slots.size(); ++slot) {
    const Container& c = container_slots[slot];
    if (c.live && c.run == &run) order.emplace_back(c.serial, ContainerId(slot, c));
  }
  std::sort(order.begin(), order.end());
  for (const auto& [serial, id] : order) {
    Container* c = FindContainer(id);
    if (c == nullptr) continue;
    if (c->where == Container::Where::kRunning) {
      executor.Cancel(TaskId(run, c->record));
      continue;  // its result arrives later and ends it CANCELED
    }
    if (c->where == Container::Where::kQueued) placement.Remove(id);
    if (c->where == Container::Where::kBackoff) loop.Cancel(c->timer);
    DagExec& dag = *c->dag;
    int task = c->task;
    FreeContainer(id, *c);
    FinishTask(dag, task, RuntimeState::kCanceled, "canceled");
  }
}

}  // namespace kfpbench::engine
