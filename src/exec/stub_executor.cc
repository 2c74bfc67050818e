#include "exec/stub_executor.h"

#include <charconv>
#include <mutex>
#include <random>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

namespace kfpbench::exec {

struct StubExecutor::State : std::enable_shared_from_this<State> {
  struct Pending {
    uint64_t serial = 0;  // tells a relaunch of the same task id from the old timer
    engine::TimerId timer = 0;
    ArtifactStore::UploadId upload = 0;  // once its time is up, while it uploads
    engine::TaskDone done;
  };

  engine::EventLoop& loop;
  StubExecutorOptions options;
  ArtifactStore* store;

  std::mutex mu;  // guards the rest; Launch and Cancel may come from any thread
  std::mt19937_64 rng;
  uint64_t next_serial = 1;
  std::unordered_map<std::string, Pending> pending;  // by task id

  State(engine::EventLoop& l, StubExecutorOptions o, ArtifactStore* s)
      : loop(l), options(std::move(o)), store(s), rng(options.seed) {}

  // Removes the task if it is still the launch `serial` names; its done, or
  // an empty function when the task is gone or was relaunched.
  engine::TaskDone Take(const std::string& task_id, uint64_t serial) {
    std::lock_guard lock(mu);
    auto it = pending.find(task_id);
    if (it == pending.end() || (serial != 0 && it->second.serial != serial)) return nullptr;
    auto done = std::move(it->second.done);
    if (serial == 0) {
      loop.Cancel(it->second.timer);
      if (it->second.upload != 0) {
        // The store belongs to the loop's thread; Cancel may come from any.
        loop.Post([store = store, upload = it->second.upload] { store->Cancel(upload); });
      }
    }
    pending.erase(it);
    return done;
  }

  // On the loop, when a step's time is up: its outputs go to the store, and
  // the task ends when they are there (or failed, if they could not be).
  void StartUpload(const std::string& task_id, uint64_t serial, std::string key, int64_t bytes,
                   engine::TaskResult result) {
    std::lock_guard lock(mu);
    auto it = pending.find(task_id);
    if (it == pending.end() || it->second.serial != serial) return;
    // The store answers later, on the loop, never inside Upload: holding
    // `mu` here is safe.
    it->second.upload = store->Upload(
        std::move(key), bytes,
        [weak = weak_from_this(), task_id, serial, result = std::move(result)](Status s) mutable {
          auto state = weak.lock();
          if (!state) return;
          auto done = state->Take(task_id, serial);
          if (!done) return;
          if (!s.ok()) {
            result.succeeded = false;
            result.exit_code = 1;
            result.error =
                "uploading the step's outputs to the artifact store: " + s.error().message;
            result.output_parameters.clear();
          }
          done(std::move(result));
        });
  }
};

namespace {

// A value without a label is the default; a labelled one is that executor's.
template <typename T>
void SetForLabel(const std::string& label, const T& value, T& default_value,
                 std::map<std::string, T>& by_label) {
  if (label.empty()) {
    default_value = value;
  } else {
    by_label.insert_or_assign(label, value);
  }
}

}  // namespace

Result<StubExecutorOptions> ParseStubExecutorOptions(const std::vector<std::string>& specs,
                                                     uint64_t seed) {
  StubExecutorOptions options;
  options.seed = seed;
  for (const auto& spec : specs) {
    auto labeled = ParseLabeledDurationDist(spec);
    if (!labeled.ok()) return labeled.error();
    auto& [label, dist] = *labeled;
    SetForLabel(label, dist, options.default_duration, options.by_executor_label);
  }
  return options;
}

Status AddStubFailures(const std::vector<std::string>& specs, StubExecutorOptions& options) {
  for (const auto& spec : specs) {
    size_t eq = spec.rfind('=');
    std::string label = eq == std::string::npos ? "" : spec.substr(0, eq);
    std::string text = eq == std::string::npos ? spec : spec.substr(eq + 1);
    bool percent = !text.empty() && text.back() == '%';
    if (percent) text.pop_back();
    double p = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), p);
    if (percent) p /= 100;
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !(p >= 0) ||
        p > 1) {
      return Error{fmt::format("'{}': expected [LABEL=]P with P a probability (0.05 or 5%)", spec)};
    }
    SetForLabel(label, p, options.default_failure_probability, options.failure_by_executor_label);
  }
  return Ok();
}

Status AddStubArtifactBytes(const std::vector<std::string>& specs, StubExecutorOptions& options) {
  for (const auto& spec : specs) {
    auto labeled = ParseLabeledBytes(spec);
    if (!labeled.ok()) return labeled.error();
    auto& [label, bytes] = *labeled;
    SetForLabel(label, bytes, options.default_artifact_bytes, options.artifact_bytes_by_label);
  }
  return Ok();
}

std::string StubValueForType(const std::string& type) {
  if (type == "NUMBER_INTEGER") return "1";
  if (type == "NUMBER_DOUBLE") return "1.0";
  if (type == "BOOLEAN") return "true";
  if (type == "LIST") return "[]";
  if (type == "STRUCT") return "{}";
  return "stub";  // STRING, and a safe guess for anything unknown
}

StubExecutor::StubExecutor(engine::EventLoop& loop, StubExecutorOptions options,
                           ArtifactStore* store)
    : state_(std::make_shared<State>(loop, std::move(options), store)) {}

StubExecutor::~StubExecutor() {
  std::lock_guard lock(state_->mu);
  for (const auto& [id, p] : state_->pending) state_->loop.Cancel(p.timer);
  state_->pending.clear();
}

void StubExecutor::Launch(engine::TaskLaunch launch, engine::TaskDone done) {
  engine::TaskResult result;
  result.succeeded = true;
  for (const auto& [name, type] : launch.output_parameter_types) {
    result.output_parameters[name] = StubValueForType(type);
  }
  // Outputs the engine expects a file for but has no type for: still present.
  for (const auto& [name, file] : launch.output_parameter_files) {
    result.output_parameters.try_emplace(name, "stub");
  }

  State& s = *state_;
  std::lock_guard lock(s.mu);
  auto it = s.options.by_executor_label.find(launch.executor_label);
  const DurationDist& dist =
      it != s.options.by_executor_label.end() ? it->second : s.options.default_duration;
  const Duration duration = dist.Sample(s.rng);
  const uint64_t serial = s.next_serial++;
  auto failure = s.options.failure_by_executor_label.find(launch.executor_label);
  const double p = failure != s.options.failure_by_executor_label.end()
                       ? failure->second
                       : s.options.default_failure_probability;
  // Drawn only when failures are asked for: durations stay as they were.
  if (p > 0 && std::uniform_real_distribution<double>(0, 1)(s.rng) < p) {
    result.succeeded = false;
    result.exit_code = 1;
    result.error = fmt::format("the stub step failed, as asked (failure probability {:g})", p);
    result.output_parameters.clear();
  }
  auto sized = s.options.artifact_bytes_by_label.find(launch.executor_label);
  const int64_t upload_bytes = s.store == nullptr || !result.succeeded ? 0
                               : sized != s.options.artifact_bytes_by_label.end()
                                   ? sized->second
                                   : s.options.default_artifact_bytes;

  // Timer callbacks hold the state weakly: a timer that fires after the
  // executor is gone finds nothing to do.
  std::weak_ptr<State> weak = state_;
  auto fire = [weak, task_id = launch.task_id, serial, result = std::move(result), upload_bytes,
               key = launch.run_id + "/" + launch.task_id]() mutable {
    auto state = weak.lock();
    if (!state) return;
    if (upload_bytes > 0) {
      state->StartUpload(task_id, serial, std::move(key), upload_bytes, std::move(result));
      return;
    }
    auto done = state->Take(task_id, serial);
    // Already on the loop (a timer), so call directly rather than post.
    if (done) done(std::move(result));
  };
  // Inserted before After() so a zero-length timer firing on another thread
  // finds it; the timer id is filled in just after, still under the lock.
  auto& pending = s.pending[launch.task_id];
  pending = State::Pending{serial, 0, 0, std::move(done)};
  if (duration <= Duration::zero()) {
    // A 0 s step needs no timer: a real-time timer costs an allocation, a
    // lock and a timerfd update, and posting runs it just as soon (a cancel
    // finds the task gone from `pending` and the posted call does nothing).
    s.loop.Post(std::move(fire));
    return;
  }
  pending.timer = s.loop.After(duration, std::move(fire));
}

void StubExecutor::Cancel(const std::string& task_id) {
  auto done = state_->Take(task_id, 0);
  if (!done) return;
  engine::TaskResult result;
  result.error = "canceled";
  state_->loop.Post(
      [done = std::move(done), result = std::move(result)]() mutable { done(std::move(result)); });
}

size_t StubExecutor::running() const {
  std::lock_guard lock(state_->mu);
  return state_->pending.size();
}

}  // namespace kfpbench::exec
