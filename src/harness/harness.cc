#include "harness/harness.h"

#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace kfpbench::harness {

BenchmarkResults RunScenarios(const ScenarioFile& file, kfp::Client& client,
                              metrics::Recorder& recorder, const HarnessOptions& options) {
  BenchmarkResults results;
  results.kfpbench_version = KFPBENCH_VERSION;
  results.started = recorder.start();
  results.scenario_path = file.path.string();
  results.scenario_source = file.source;

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
  for (auto& t : threads) t.join();

  results.runs = runs.Records();
  if (context.Interrupted()) {
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
  // Clean-up calls are not part of the measured load.
  results.operations = recorder.Snapshot();
  results.cleanup_failures = context.CleanUp();
  results.finished = WallClock::now();
  return results;
}

}  // namespace kfpbench::harness
