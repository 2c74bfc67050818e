#include "harness/harness.h"

#include <atomic>
#include <functional>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace kfpbench::harness {

namespace {

Progress TakeProgress(const metrics::Recorder& recorder, const Context& context, const RunLog& runs,
                      Duration planned) {
  Progress p;
  p.elapsed = WallClock::now() - recorder.start();
  p.planned = planned;
  p.runs_created = context.runs_created();
  p.runs_refused = runs.NotCreated();
  p.runs_finished = runs.size() - p.runs_refused;
  p.runs_by_state = runs.CountByState();
  p.late_starts = runs.LateStarts();
  metrics::Histogram all;
  for (const auto& [name, op] : recorder.Snapshot()) {
    all.Merge(op.latency_us);
    p.api_errors += op.errors;
  }
  p.api_calls = all.count();
  p.p99_us = all.ValueAtPercentile(99);
  return p;
}

}  // namespace

void MarkPartial(const Context& context, BenchmarkResults& results) {
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

BenchmarkResults RunScenarios(const ScenarioFile& file, kfp::Client& client,
                              metrics::Recorder& recorder, const HarnessOptions& options,
                              const std::function<void(const Progress&)>& on_progress) {
  BenchmarkResults results;
  results.kfpbench_version = KFPBENCH_VERSION;
  results.started = recorder.start();
  results.scenario_path = file.path.string();
  results.scenario_source = file.source;
  results.shard_index = file.shard_index;
  results.shard_count = file.shard_count;
  for (const auto& s : file.scenarios) {
    results.scenarios.push_back({s.index, std::string(ModeName(s.mode)), s.artifact_bytes});
  }

  RunLog runs;
  Context context(client, runs, options);
  std::mutex errors_mu;
  std::vector<std::thread> threads;
  for (const auto& scenario : file.scenarios) {
    threads.emplace_back([&, &scenario = scenario] {
      auto fail = [&](const std::string& message) {
        std::string text =
            fmt::format("scenario [{}] {}: {}", scenario.index, ModeName(scenario.mode), message);
        spdlog::error("{}", text);
        std::lock_guard lock(errors_mu);
        results.errors.push_back(std::move(text));
      };
      auto runner = MakeRunner(scenario.mode);
      if (!runner.ok()) return fail(runner.error().message);
      if (!context.SleepUntil(results.started + scenario.start_time)) return;
      spdlog::info("scenario [{}] {} starts for {}", scenario.index, ModeName(scenario.mode),
                   FormatDuration(scenario.run_time));
      if (Status s = (*runner)->Run(scenario, context); !s.ok()) fail(s.error().message);
    });
  }
  Duration planned{};
  for (const auto& s : file.scenarios) planned = std::max(planned, s.start_time + s.run_time);
  // Once a second: the live status, and the error-rate guard.
  std::atomic<bool> finished{false};
  std::thread ticker([&] {
    while (!finished.load()) {
      for (int i = 0; i < 20 && !finished.load(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      if (finished.load()) return;
      Progress p = TakeProgress(recorder, context, runs, planned);
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
  results.stress_steps = context.stress_steps();
  results.schedules = context.schedules();
  MarkPartial(context, results);
  // Clean-up calls are not part of the measured load.
  results.operations = recorder.Snapshot();
  if (options.before_cleanup) options.before_cleanup(results);
  results.cleanup_failures = context.CleanUp();
  results.finished = WallClock::now();
  results.RedactSecrets();
  return results;
}

}  // namespace kfpbench::harness
