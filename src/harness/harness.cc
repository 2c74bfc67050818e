#include "harness/harness.h"

#include <atomic>
#include <functional>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "harness/modes.h"
#include "harness/process_usage.h"

namespace kfpbench::harness {

namespace {

results::Progress TakeProgress(const metrics::Recorder& recorder, const Context& context,
                               const results::RunLog& runs, Duration planned) {
  results::Progress p;
  p.elapsed = WallClock::now() - recorder.start();
  p.planned = planned;
  p.runs_created = context.runs_created();
  p.runs_refused = runs.NotCreated();
  p.runs_finished = runs.size() - p.runs_refused;
  p.runs_by_state = runs.CountByState();
  p.late_starts = runs.LateStarts();
  p.observer_calls = context.follower_calls().CallCounts();
  metrics::Histogram all;
  for (const auto& [name, op] : recorder.Snapshot()) {
    all.Merge(op.latency_us);
    p.api_errors += op.errors;
  }
  p.api_calls = all.count();
  p.p99_us = all.ValueAtPercentile(99);
  return p;
}

// Marks `results` partial, saying why, when the load was aborted or
// interrupted or runs had not finished.
void MarkPartial(const Context& context, results::BenchmarkResults& results) {
  if (std::string reason = context.abort_reason(); !reason.empty()) {
    results.partial = true;
    results.partial_reason = "aborted: " + reason;
    results.errors.push_back(results.partial_reason);
  } else if (context.Interrupted()) {
    results.partial = true;
    results.partial_reason = "interrupted";
  }
  int unfinished = 0;
  for (const auto& r : results.runs) {
    if (!r.run_id.empty() && !IsTerminal(r.state)) ++unfinished;
  }
  if (unfinished > 0) {
    results.partial = true;
    if (!results.partial_reason.empty()) results.partial_reason += "; ";
    results.partial_reason += fmt::format("{} run(s) had not finished", unfinished);
  }
}

// After an interruption, calls in flight get the grace to answer; then (or at
// a second Ctrl-C) they are cancelled rather than left to their timeouts.
void CancelCallsWhenGraceIsOver(const Context& context, const HarnessOptions& options) {
  if (options.cancel_calls == nullptr || !context.Interrupted()) return;
  if (WallClock::now() >= context.StopWaitingAt(WallTime::max())) options.cancel_calls->store(true);
}

// Clean-up gets calls again, but after an interruption only for another
// grace, and none after a second Ctrl-C: what it leaves is listed.
Context::CleanUpReport CleanUpWithinGrace(Context& context, const HarnessOptions& options) {
  if (context.Hurried()) {
    return {.created = context.created(),
            .deleted = {},
            .failures = {fmt::format(
                "clean-up skipped: Ctrl-C pressed twice; what the benchmark created is still "
                "on the target (kfpbench cleanup --benchmark-id {} deletes it)",
                options.benchmark_id)}};
  }
  if (options.cancel_calls == nullptr || !context.Interrupted()) return context.CleanUp();
  options.cancel_calls->store(false);
  WallTime until = WallClock::now() + options.grace;
  std::atomic<bool> done{false};
  std::thread watchdog([&] {
    while (!done.load()) {
      if (context.Hurried() || WallClock::now() >= until) options.cancel_calls->store(true);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  auto report = context.CleanUp();
  done.store(true);
  watchdog.join();
  if (!context.Hurried()) options.cancel_calls->store(false);  // later calls (collectors) may go
  return report;
}

results::BackPressure BackPressureSince(const kfp::BackPressureCounts& before,
                                        const kfp::BackPressureCounts& now) {
  results::BackPressure b;
  b.waits = now.waits - before.waits;
  b.waited = now.waited - before.waited;
  b.not_resent = now.not_resent - before.not_resent;
  for (const auto& [op, n] : now.by_operation) {
    auto it = before.by_operation.find(op);
    const uint64_t was = it == before.by_operation.end() ? 0 : it->second;
    if (n > was) b.by_operation[op] = n - was;
  }
  return b;
}

}  // namespace

results::BenchmarkResults RunScenarios(
    const ScenarioFile& file, kfp::Client& client, metrics::Recorder& recorder,
    const HarnessOptions& options,
    const std::function<void(const results::Progress&)>& on_progress) {
  results::BenchmarkResults results;
  results.kfpbench_version = KFPBENCH_VERSION;
  results.started = recorder.start();
  results.scenario_path = file.path.string();
  results.scenario_source = file.source;
  results.shard_index = file.shard_index;
  results.shard_count = file.shard_count;
  for (const auto& s : file.scenarios) {
    results::ScenarioInfo info{.index = s.index, .mode = std::string(s.mode_name())};
    if (s.mode_data) s.mode_data->Describe(info);
    results.scenarios.push_back(std::move(info));
  }

  const ProcessSample usage_start = SampleProcess();
  const kfp::BackPressureCounts pressure_before = client.back_pressure();
  results::RunLog runs;
  Context context(client, runs, options, results.started);
  std::mutex errors_mu;  // scenario threads add to results.errors
  // What a checkpoint taken while the load runs holds: the calls and runs so
  // far, said to be unfinished.
  auto interim = [&] {
    results::BenchmarkResults copy;
    {
      std::lock_guard lock(errors_mu);
      copy = results;
    }
    copy.runs = runs.Records();
    AddFindings(context.findings(), copy);
    copy.operations = recorder.Snapshot();
    copy.observer = context.follower_calls().Summary();
    copy.harness_usage = UsageSince(usage_start);
    copy.finished = WallClock::now();
    copy.partial = true;
    copy.partial_reason = fmt::format(
        "unfinished: the benchmark was still running when this copy was written (it is "
        "rewritten every {} until the end, so a run killed midway leaves its last copy)",
        FormatDuration(options.checkpoint_interval));
    copy.RedactSecrets();
    return copy;
  };
  if (options.checkpoint) options.checkpoint(interim());
  context.AddPipelineTexts(file.pipeline_texts);
  std::vector<std::thread> threads;
  for (const auto& scenario : file.scenarios) {
    threads.emplace_back([&, &scenario = scenario] {
      auto fail = [&](const std::string& message) {
        std::string text =
            fmt::format("scenario [{}] {}: {}", scenario.index, scenario.mode_name(), message);
        spdlog::error("{}", text);
        std::lock_guard lock(errors_mu);
        results.errors.push_back(std::move(text));
      };
      auto runner = scenario.mode->make_runner();
      if (!context.SleepUntil(results.started + scenario.start_time)) return;
      spdlog::info("scenario [{}] {} starts for {}", scenario.index, scenario.mode_name(),
                   FormatDuration(scenario.run_time));
      if (Status s = runner->Run(scenario, context); !s.ok()) fail(s.error().message);
    });
  }
  Duration planned{};
  for (const auto& s : file.scenarios) planned = std::max(planned, s.start_time + s.run_time);
  // Once a second: the live status, and the error-rate guard; every 50 ms:
  // whether calls in flight must be cancelled (grace over, second Ctrl-C).
  std::atomic<bool> finished{false};
  std::thread ticker([&] {
    WallTime next_checkpoint = WallClock::now() + options.checkpoint_interval;
    for (int tick = 1; !finished.load(); ++tick) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      CancelCallsWhenGraceIsOver(context, options);
      if (options.checkpoint && WallClock::now() >= next_checkpoint && !finished.load()) {
        options.checkpoint(interim());
        next_checkpoint = WallClock::now() + options.checkpoint_interval;
      }
      if (tick % 20 != 0 || finished.load()) continue;
      results::Progress p = TakeProgress(recorder, context, runs, planned);
      if (on_progress) on_progress(p);
      if (p.api_calls >= HarnessOptions::kMinCallsForErrorRate &&
          static_cast<double>(p.api_errors) / p.api_calls > options.max_error_rate) {
        context.Abort(fmt::format("{} of {} API calls failed, above --max-error-rate {:g}%",
                                  p.api_errors, p.api_calls, options.max_error_rate * 100));
      }
    }
  });
  for (auto& t : threads) t.join();
  finished.store(true);
  ticker.join();

  results.runs = runs.Records();
  AddFindings(context.findings(), results);
  MarkPartial(context, results);
  // Clean-up calls are not part of the measured load.
  results.operations = recorder.Snapshot();
  results.observer = context.follower_calls().Summary();
  results.harness_usage = UsageSince(usage_start);
  results.back_pressure = BackPressureSince(pressure_before, client.back_pressure());
  if (options.before_cleanup) options.before_cleanup(results);
  results.finished = WallClock::now();
  results.RedactSecrets();
  if (options.checkpoint) options.checkpoint(results);
  auto cleanup = CleanUpWithinGrace(context, options);
  results.benchmark_id = options.benchmark_id;
  results.created = cleanup.created;
  results.deleted = cleanup.deleted;
  results.kept = options.keep;
  results.cleanup_failures = std::move(cleanup.failures);
  results.finished = WallClock::now();
  return results;
}

}  // namespace kfpbench::harness
