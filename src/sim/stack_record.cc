#include "sim/stack_record.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "util/json_reader.h"

namespace kfpbench::sim {

namespace {
constexpr double kMaxTimeScale = 1000;
constexpr double kMaxWallSeconds = 1e6;  // 11.6 days
}  // namespace

Result<StackRecord> ParseStackRecord(std::string_view text) {
  auto doc = ParseJsonText(text);
  if (!doc.ok()) return Error{"stack record: " + doc.error().message};
  if (!doc->is_object()) return Error{"stack record: not a JSON object"};
  StackRecord rec;
  JsonReader r = JsonReader::Plain(*doc, "record");
  std::string format;
  r.Require("format");
  r.String("format", format);
  if (r.ok() && format != kStackRecordFormat) {
    r.Fail("format", fmt::format("'{}', expected '{}'", format, kStackRecordFormat));
  }
  r.Require("time_scale");
  r.Number("time_scale", rec.time_scale);
  // Bounded so that every simulated time fits a Duration (292 years).
  if (r.ok() && !(rec.time_scale > 0 && rec.time_scale <= kMaxTimeScale)) {
    r.Fail("time_scale", fmt::format("must be above 0 and at most {}", kMaxTimeScale));
  }
  r.Number("nodes", rec.nodes);
  if (r.ok() && rec.nodes < 0) r.Fail("nodes", "must be at least 0");
  r.Bool("complete", rec.complete);
  // A time is seconds from 0 to kMaxWallSeconds, or -1 for never.
  auto time = [](JsonReader& rr, const char* name, double& out) {
    rr.Number(name, out);
    if (rr.ok() && !((out >= 0 && out <= kMaxWallSeconds) || out == -1)) {
      rr.Fail(name, fmt::format("must be seconds (0 to {:g}) or -1", kMaxWallSeconds));
    }
  };
  r.Require("runs");
  r.Array("runs", [&](JsonReader& rr) {
    StackRun& run = rec.runs.emplace_back();
    rr.Require("name");
    rr.String("name", run.name);
    time(rr, "due", run.due);
    time(rr, "submitted", run.submitted);
    time(rr, "finished", run.finished);
    rr.String("phase", run.phase);
    rr.String("message", run.message);
    rr.Array("pods", [&](JsonReader& pr) {
      StackPod& pod = run.pods.emplace_back();
      pr.Require("task");
      pr.Number("task", pod.task);
      pr.String("node", pod.node);
      time(pr, "created", pod.created);
      time(pr, "scheduled", pod.scheduled);
      time(pr, "started", pod.started);
      time(pr, "finished", pod.finished);
      pr.Number("exit_code", pod.exit_code);
    });
  });
  if (Status st = r.Finish(); !st.ok()) return Error{"stack record: " + st.error().message};
  return rec;
}

namespace {

// One run's tasks, in the recorder's wall seconds: when each became ready
// (its DAG ready and every task it depends on done; the run's arrival for
// the root's) and when it was done (a step: its main container exited; a
// DAG: its last task done). -1: never. Solved in dependency order (Kahn's
// algorithm over each task's ready and done), so neither deep chains nor a
// malformed plan's cycles recurse: what a cycle holds stays -1.
struct RunTimes {
  const StackRun* run = nullptr;
  std::map<int, const PlannedTask*> tasks;
  std::map<int, const StackPod*> pods;  // by task id
  std::map<int, double> ready, done;

  void Solve(const PlannedRun& plan) {
    const size_t n = plan.tasks.size();
    std::map<int, size_t> index;
    for (size_t i = 0; i < n; ++i) index[plan.tasks[i].id] = i;
    // Nodes 2i (ready of task i) and 2i + 1 (done of task i).
    std::vector<std::vector<size_t>> next(2 * n);
    std::vector<int> waiting(2 * n, 0);
    auto edge = [&](size_t from, size_t to) {
      next[from].push_back(to);
      ++waiting[to];
    };
    std::map<std::pair<int, std::string>, size_t> by_name;  // (parent, name) -> index
    for (size_t i = 0; i < n; ++i) by_name[{plan.tasks[i].parent, plan.tasks[i].name}] = i;
    for (size_t i = 0; i < n; ++i) {
      const PlannedTask& t = plan.tasks[i];
      if (t.parent >= 0) {
        size_t p = index.at(t.parent);
        edge(2 * p, 2 * i);          // ready after its DAG is
        edge(2 * i + 1, 2 * p + 1);  // its DAG done after it is
      }
      for (const std::string& dep : t.dependencies) {
        if (auto d = by_name.find({t.parent, dep}); d != by_name.end())
          edge(2 * d->second + 1, 2 * i);
      }
      edge(2 * i, 2 * i + 1);  // done after ready
    }
    std::vector<double> value(2 * n, run->due);
    std::vector<size_t> queue;
    for (size_t v = 0; v < 2 * n; ++v) {
      if (waiting[v] == 0) queue.push_back(v);
    }
    std::vector<bool> solved(2 * n, false);
    while (!queue.empty()) {
      size_t v = queue.back();
      queue.pop_back();
      solved[v] = true;
      const PlannedTask& t = plan.tasks[v / 2];
      if (v % 2 == 1 && t.container) {  // a step is done when its pod says so
        auto pod = pods.find(t.id);
        bool ran = value[v] >= 0 && pod != pods.end() && pod->second->finished >= 0;
        value[v] = ran ? pod->second->finished : -1;
      }
      for (size_t w : next[v]) {
        value[w] = value[v] < 0 || value[w] < 0 ? -1 : std::max(value[w], value[v]);
        if (--waiting[w] == 0) queue.push_back(w);
      }
    }
    for (size_t i = 0; i < n; ++i) {
      ready[plan.tasks[i].id] = solved[2 * i] ? value[2 * i] : -1;
      done[plan.tasks[i].id] = solved[2 * i + 1] ? value[2 * i + 1] : -1;
    }
  }
};

}  // namespace

Result<SimResult> StackResult(const WorkloadPlan& plan, const StackRecord& record,
                              const ClusterSpec& cluster, double sample_seconds) {
  const double scale = record.time_scale;
  std::map<std::string, const PlannedRun*> planned;
  for (const auto& r : plan.runs) planned[r.name] = &r;
  std::vector<RunTimes> runs;
  for (const auto& run : record.runs) {
    auto p = planned.find(run.name);
    if (p == planned.end()) return Error{"stack record: run " + run.name + " is not in the plan"};
    RunTimes& rt = runs.emplace_back();
    rt.run = &run;
    for (const auto& t : p->second->tasks) rt.tasks[t.id] = &t;
    for (const auto& pod : run.pods) {
      auto t = rt.tasks.find(pod.task);
      if (t == rt.tasks.end() || !t->second->container) {
        return Error{
            fmt::format("stack record: run {} has a pod of task {}, not a step of its plan",
                        run.name, pod.task)};
      }
      rt.pods[pod.task] = &pod;
    }
    rt.Solve(*p->second);
  }
  SimResult result;
  result.runs = static_cast<int64_t>(runs.size());
  result.series = Series(sample_seconds);
  double end = 0, first_placed = -1;
  for (auto& rt : runs) {
    const StackRun& run = *rt.run;
    if (run.phase == "Succeeded") {
      ++result.succeeded;
    } else {
      ++result.failed;
      if (result.first_error.empty()) {
        result.first_error = fmt::format("{}: {} {}", run.name,
                                         run.phase.empty() ? "unfinished" : run.phase, run.message);
      }
    }
    if (run.finished >= 0) {
      end = std::max(end, run.finished);
      result.run_ms.Record(std::llround((run.finished - run.due) * scale * 1000));
    }
    for (const auto& [id, pod] : rt.pods) {
      const PlannedTask& t = *rt.tasks.at(id);
      if (pod->scheduled < 0) continue;
      if (first_placed < 0 || pod->scheduled < first_placed) first_placed = pod->scheduled;
      double ready = rt.ready.at(id);
      if (ready >= 0) {
        result.pending_ms.Record(
            std::llround(std::max(0.0, pod->scheduled - ready) * scale * 1000));
      }
      ++result.tasks_by_label[t.label];
    }
  }
  if (result.run_ms.count() == 0) return Error{"stack record: no run finished"};
  result.makespan = FromSeconds(end * scale);
  result.peak_nodes = record.nodes;
  const double span = end * scale;
  result.node_hours = record.nodes * span / 3600.0;
  // The stack's nodes are the cluster's first pool's size (scripts/stack
  // starts one kind of node).
  const double node_cpu = cluster.pools.empty() ? 0 : cluster.pools.front().cpu;
  const double node_memory =
      cluster.pools.empty() ? 0 : static_cast<double>(cluster.pools.front().memory);
  double cpu = 0, memory = 0, held = 0;
  for (auto& rt : runs) {
    for (const auto& [id, pod] : rt.pods) {
      if (pod->scheduled < 0) continue;
      const double until = pod->finished >= 0 ? pod->finished : end;
      const double seconds = std::max(0.0, until - pod->scheduled) * scale;
      const PlannedTask& t = *rt.tasks.at(id);
      cpu += seconds * static_cast<double>(t.cpu_millis) / 1000.0;
      memory += seconds * static_cast<double>(t.memory_bytes);
      held += seconds;
    }
  }
  const double window = first_placed >= 0 ? (end - first_placed) * scale : 0;
  if (window > 0 && record.nodes > 0) {
    if (node_cpu > 0) result.cpu_utilisation = cpu / (window * record.nodes * node_cpu);
    if (node_memory > 0) result.memory_utilisation = memory / (window * record.nodes * node_memory);
  }
  result.task_time.held = held;
  result.task_time.allocated_cpu = cpu;
  result.task_time.allocated_memory = memory;
  result.task_time.pending = result.pending_ms.sum() / 1000.0;
  // The series, sampled: what was bound, waiting and alive at each instant.
  for (double t = 0; t <= span; t += sample_seconds) {
    SeriesPoint p;
    p.t = t;
    p.nodes = record.nodes;
    p.cpu_capacity = record.nodes * node_cpu;
    const double wall = t / scale;
    int64_t alive = 0;
    for (auto& rt : runs) {
      const StackRun& run = *rt.run;
      if (run.due <= wall && (run.finished < 0 || wall < run.finished)) ++alive;
      for (const auto& [id, pod] : rt.pods) {
        const PlannedTask& task = *rt.tasks.at(id);
        double ready = rt.ready.at(id);
        if (pod->scheduled >= 0 && pod->scheduled <= wall &&
            (pod->finished < 0 || wall < pod->finished)) {
          p.cpu_used += static_cast<double>(task.cpu_millis) / 1000.0;
        } else if (ready >= 0 && ready <= wall && (pod->scheduled < 0 || wall < pod->scheduled)) {
          p.pending += 1;
        }
      }
    }
    p.running_runs = static_cast<double>(alive);
    result.peak_runs_alive = std::max(result.peak_runs_alive, alive);
    result.series.Add(p);
  }
  return result;
}

}  // namespace kfpbench::sim
