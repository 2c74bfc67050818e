// Test doubles for engine tests: a virtual-time EventLoop, an Executor that
// finishes tasks after a configurable delay, and an observer that keeps every
// snapshot. Test-only; not part of any library.
#pragma once

#include <map>
#include <memory>
#include <queue>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/engine.h"
#include "ir/pipeline_spec.h"

namespace kfpbench::engine::testing {

// Discrete-event loop: Now() is virtual and jumps to the next timer.
class VirtualLoop : public EventLoop {
 public:
  static WallTime Epoch() { return WallTime(std::chrono::seconds(1'700'000'000)); }

  WallTime Now() const override { return now_; }
  void Post(std::function<void()> fn) override { After(Duration::zero(), std::move(fn)); }
  TimerId After(Duration delay, std::function<void()> fn) override {
    TimerId id = next_id_++;
    queue_.push({now_ + delay, id});
    fns_[id] = std::move(fn);
    return id;
  }
  void Cancel(TimerId id) override { fns_.erase(id); }

  // Runs events in time order until none is left (or `limit` ran).
  void Run(size_t limit = 10'000'000) {
    while (!queue_.empty() && limit-- > 0) RunNext();
  }
  // Runs events due up to `t`, then sets the clock to `t`.
  void RunUntil(WallTime t) {
    while (!queue_.empty() && queue_.top().first <= t) RunNext();
    now_ = std::max(now_, t);
  }

 private:
  // The earliest event, unless it was cancelled.
  void RunNext() {
    auto [when, id] = queue_.top();
    queue_.pop();
    auto it = fns_.find(id);
    if (it == fns_.end()) return;
    auto fn = std::move(it->second);
    fns_.erase(it);
    now_ = std::max(now_, when);
    fn();
  }
  using Event = std::pair<WallTime, TimerId>;  // ids grow, so ties run in post order
  WallTime now_ = Epoch();
  TimerId next_id_ = 1;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> queue_;
  std::map<TimerId, std::function<void()>> fns_;
};

// What the fake does with one launch.
struct Behavior {
  Duration duration = std::chrono::seconds(1);
  bool fail = false;
  std::string error = "boom";
  // Output parameter -> raw text; missing ones get a type-correct default
  // unless omit_outputs.
  std::map<std::string, std::string> outputs;
  bool omit_outputs = false;
};

inline Behavior Takes(Duration d) {
  Behavior b;
  b.duration = d;
  return b;
}
inline Behavior Fails() {
  Behavior b;
  b.fail = true;
  return b;
}
inline Behavior Outputs(std::map<std::string, std::string> outputs) {
  Behavior b;
  b.outputs = std::move(outputs);
  return b;
}

using BehaviorFn = std::function<Behavior(const TaskLaunch&)>;

// The same behaviour for every launch.
inline BehaviorFn Always(Behavior b) {
  return [b](const TaskLaunch&) { return b; };
}
// A behaviour by executor label; labels not named get the default.
inline BehaviorFn ByLabel(std::map<std::string, Behavior> by_label) {
  return [by_label = std::move(by_label)](const TaskLaunch& l) {
    auto it = by_label.find(l.executor_label);
    return it == by_label.end() ? Behavior{} : it->second;
  };
}

// Finishes every task after Behavior::duration of loop time.
class FakeExecutor : public Executor {
 public:
  explicit FakeExecutor(EventLoop& loop) : loop_(loop) {}

  BehaviorFn behave = [](const TaskLaunch&) { return Behavior{}; };

  struct Event {
    WallTime time;
    std::string what;  // "start <label>" / "end <label>"
  };
  std::vector<TaskLaunch> launched;
  std::vector<Event> events;
  std::vector<std::string> canceled;
  int running = 0;
  int max_running = 0;

  void Launch(TaskLaunch launch, TaskDone done) override {
    Behavior b = behave(launch);
    ++running;
    max_running = std::max(max_running, running);
    events.push_back({loop_.Now(), "start " + launch.executor_label});
    TaskResult result;
    result.succeeded = !b.fail;
    result.exit_code = b.fail ? 1 : 0;
    if (b.fail) result.error = b.error;
    if (!b.fail && !b.omit_outputs) {
      for (const auto& [name, type] : launch.output_parameter_types) {
        auto it = b.outputs.find(name);
        result.output_parameters[name] = it != b.outputs.end() ? it->second : DefaultFor(type);
      }
    }
    result.cpu_seconds = 0.25;
    std::string id = launch.task_id;
    std::string label = launch.executor_label;
    launched.push_back(std::move(launch));
    TimerId timer = loop_.After(b.duration, [this, id, label, result, done]() {
      timers_.erase(id);
      Finish(label, result, done);
    });
    timers_[id] = {timer, label, done};
  }

  void Cancel(const std::string& task_id) override {
    canceled.push_back(task_id);
    auto it = timers_.find(task_id);
    if (it == timers_.end()) return;
    loop_.Cancel(it->second.timer);
    auto pending = std::move(it->second);
    timers_.erase(it);
    TaskResult result;
    result.error = "canceled";
    loop_.Post([this, label = std::move(pending.label), result, done = std::move(pending.done)] {
      Finish(label, result, done);
    });
  }

  static std::string DefaultFor(const std::string& type) {
    if (type == "NUMBER_INTEGER") return "1";
    if (type == "NUMBER_DOUBLE") return "1.5";
    if (type == "BOOLEAN") return "true";
    if (type == "LIST") return "[]";
    if (type == "STRUCT") return "{}";
    return "text";
  }

  // The launches of one executor, in order; the first of them, or null.
  std::vector<const TaskLaunch*> LaunchesOf(const std::string& label) const {
    std::vector<const TaskLaunch*> out;
    for (const auto& l : launched) {
      if (l.executor_label == label) out.push_back(&l);
    }
    return out;
  }
  const TaskLaunch* FirstLaunchOf(const std::string& label) const {
    for (const auto& l : launched) {
      if (l.executor_label == label) return &l;
    }
    return nullptr;
  }

  // The executor-input JSON the task got in its argv ({{$}}), or null.
  static nlohmann::json ExecutorInput(const TaskLaunch& l) {
    for (const auto& arg : l.argv) {
      if (arg.rfind("{\"inputs\"", 0) == 0) return nlohmann::json::parse(arg);
    }
    return nullptr;
  }

 private:
  struct Pending {
    TimerId timer;
    std::string label;
    TaskDone done;
  };
  void Finish(const std::string& label, const TaskResult& result, const TaskDone& done) {
    --running;
    events.push_back({loop_.Now(), "end " + label});
    done(TaskResult(result));
  }

  EventLoop& loop_;
  std::map<std::string, Pending> timers_;
};

class RecordingObserver : public RunObserver {
 public:
  void OnRunChanged(const RunSnapshot& snapshot) override {
    ++count;
    last[snapshot.run_id] = snapshot;
  }
  const RunSnapshot& Of(const std::string& run_id) { return last.at(run_id); }
  int count = 0;
  std::map<std::string, RunSnapshot> last;
};

inline std::shared_ptr<const ir::PipelineSpec> MustParse(const std::string& yaml) {
  auto spec = ir::ParsePipelineSpec(yaml);
  EXPECT_TRUE(spec.ok()) << spec.error().message;
  if (!spec.ok()) return nullptr;
  return std::make_shared<const ir::PipelineSpec>(std::move(*spec));
}

inline RunRequest Request(const std::string& run_id, const std::string& yaml,
                          nlohmann::json params = nlohmann::json::object(), RunRequest req = {}) {
  req.run_id = run_id;
  req.spec = MustParse(yaml);
  req.parameters = std::move(params);
  return req;
}

// What every engine fixture has: a virtual loop, a fake executor on it, an
// observer keeping each run's last snapshot, and the engine they make.
class EngineFixture : public ::testing::Test {
 protected:
  Engine& NewEngine(EngineOptions options) {
    engine_ = std::make_unique<Engine>(loop_, executor_, observer_, std::move(options));
    return *engine_;
  }
  // Submits `req`, runs the loop until nothing is left, and returns the
  // run's last snapshot.
  const RunSnapshot& SubmitAndRun(RunRequest req) {
    std::string run_id = req.run_id;
    auto s = engine_->Submit(std::move(req));
    EXPECT_TRUE(s.ok()) << s.error().message;
    loop_.Run();
    return observer_.Of(run_id);
  }

  VirtualLoop loop_;
  FakeExecutor executor_{loop_};
  RecordingObserver observer_;
  std::unique_ptr<Engine> engine_;
};

inline const TaskRecord* FindTask(const RunSnapshot& snap, const std::string& name) {
  for (const auto& t : snap.tasks) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

inline std::vector<RuntimeState> States(const std::vector<StateChange>& history) {
  std::vector<RuntimeState> out;
  for (const auto& h : history) out.push_back(h.state);
  return out;
}

}  // namespace kfpbench::engine::testing
