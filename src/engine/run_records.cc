// Task records and state changes, and the snapshots that tell the RunObserver
// of them.
#include "engine/engine_impl.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

namespace kfpbench::engine {

using namespace detail;  // NOLINT: the run state types are the engine's vocabulary

namespace {

using nlohmann::json;

}  // namespace

std::string Engine::Impl::NewId() {
  uint64_t a = rng(), b = rng();
  a = (a & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;  // version 4
  b = (b & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;  // RFC 4122 variant
  // 8-4-4-4-12 lower-case hex digits of a then b (fmt would cost more than
  // the rest of a simulated task).
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id(36, '-');
  size_t pos = 0;
  for (int shift = 60; shift >= 0; shift -= 4) {
    if (pos == 8 || pos == 13) ++pos;
    id[pos++] = kHex[(a >> shift) & 0xf];
  }
  for (int shift = 60; shift >= 0; shift -= 4) {
    if (pos == 18 || pos == 23) ++pos;
    id[pos++] = kHex[(b >> shift) & 0xf];
  }
  return id;
}

std::string Engine::Impl::PodName(const Run& run) {
  return fmt::format("{}-system-container-impl-{}", run.resource_name,
                     1000000000 + rng() % 9000000000ULL);
}

// The strings must outlive the run: the spec's, or in run.names.
int Engine::Impl::NewRecord(Run& run, const std::string& name, const std::string& display,
                            int parent, const std::string& executor_label) {
  TaskState& rec = run.records.emplace_back();
  rec.name = &name;
  rec.display_name = &display;
  rec.executor_label = &executor_label;
  rec.create_time = loop.Now();
  rec.parent = parent;
  if (options.task_details) {
    // Built where it stays: a TaskRecord is ~500 bytes of strings to move.
    TaskRecord& d = run.details.emplace_back();
    d.task_id = NewId();
    d.name = name;
    d.display_name = display;
    d.executor_label = executor_label;
    d.history.push_back({rec.create_time, RuntimeState::kPending, {}});
    d.inputs = json::object();
    d.outputs = json::object();
    if (parent >= 0) {
      TaskRecord& parent_details = run.details[parent];
      d.parent_task_id = parent_details.task_id;
      parent_details.child_task_ids.push_back(d.task_id);
    }
  } else {
    rec.short_id = next_short_id++;
  }
  MarkDirty(run);
  return static_cast<int>(run.records.size()) - 1;
}

void Engine::Impl::SetState(Run& run, int record, RuntimeState state, const std::string& error) {
  TaskState& rec = run.records[record];
  WallTime now = loop.Now();
  rec.state = state;
  if (state == RuntimeState::kRunning && rec.start_time == WallTime{}) rec.start_time = now;
  if (IsTerminal(state)) rec.end_time = now;
  if (options.task_details) {
    TaskRecord& d = run.details[record];
    d.history.push_back({now, state, error});
    if (IsTerminal(state) && !error.empty()) d.error = error;
  }
  MarkDirty(run);
}

void Engine::Impl::SetRunState(Run& run, RuntimeState state, const std::string& error) {
  if (run.state == state) return;
  WallTime now = loop.Now();
  run.state = state;
  run.history.push_back({now, state, error});
  if (IsTerminal(state)) run.finished_at = now;
  MarkDirty(run);
}

void Engine::Impl::Flush() {
  // Observers may call Submit/Terminate; those only Post, so this loop is safe.
  // The two vectors trade places, keeping their capacity: a moved-from
  // vector would allocate again on the next change, once per event.
  std::vector<Run*> pending = std::move(dirty_runs);
  dirty_runs = std::move(spare_dirty_runs);
  dirty_runs.clear();
  for (Run* run : pending) {
    run->dirty = false;
    // Light snapshots carry nothing of tasks, so one whose run state is
    // unchanged would tell the observer nothing new.
    if (options.light_snapshots && run->snapshot_sent && !run->finished &&
        run->state == run->snapshot_state) {
      continue;
    }
    if (DeferSnapshot(*run)) continue;
    run->snapshot_sent = true;
    run->snapshot_state = run->state;
    run->snapshot_time = loop.Now();
    // What a snapshot costs matters only to DeferSnapshot, which light
    // snapshots skip: reading the clock twice per change is not free.
    const bool timed = !options.light_snapshots;
    auto cost_from =
        timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    RunSnapshot snap;
    snap.run_id = run->id;
    snap.state = run->state;
    snap.finished_at = run->finished_at;
    snap.error = run->error;
    snap.created_at = run->created_at;
    if (run->finished && options.light_snapshots) {
      snap.history = std::move(run->history);
      snap.task_states = run->records;  // the run is erased only below
    } else if (run->finished) {
      // The run is erased just below, so its records can move, not copy.
      snap.history = std::move(run->history);
      snap.tasks = TaskRecords(*run, /*take=*/true);
    } else if (!options.light_snapshots) {
      snap.history = run->history;
      snap.tasks = TaskRecords(*run, /*take=*/false);
    }
    observer.OnRunChanged(snap);
    if (timed) run->snapshot_cost = std::chrono::steady_clock::now() - cost_from;
  }
  for (Run* run : pending) {
    // Found, then erased by position: erasing by run->id would compare
    // against a key that dies with the run.
    if (run->finished) runs.erase(runs.find(run->id));
  }
  pending.clear();
  spare_dirty_runs = std::move(pending);
}

// A large run whose own state is unchanged waits for its next snapshot
// slot; one timer per run brings it then (see large_run_records).
bool Engine::Impl::DeferSnapshot(Run& run) {
  if (run.finished || options.light_snapshots || run.records.size() < options.large_run_records ||
      run.state != run.snapshot_state) {
    return false;
  }
  WallTime due = run.snapshot_time +
                 std::max<Duration>(options.large_run_snapshot_interval, 4 * run.snapshot_cost);
  WallTime now = loop.Now();
  if (now >= due) return false;
  if (!run.snapshot_scheduled) {
    run.snapshot_scheduled = true;
    loop.After(due - now, [this, id = run.id] {
      auto it = runs.find(id);
      if (it == runs.end()) return;  // finished meanwhile, and snapshotted then
      Scope scope(*this);
      it->second.snapshot_scheduled = false;
      MarkDirty(it->second);
    });
  }
  return true;
}

}  // namespace kfpbench::engine
