#include "harness/run_scenario_file.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "harness/output_folder.h"
#include "harness/preflight.h"
#include "harness/replay_steps.h"

namespace kfpbench::harness {
namespace {

// The file's problems, with the target's when it did not resolve; the
// preflight runs even then, so a bad "target" is said with the rest.
Status CheckBeforeLoad(ScenarioFile& file, const RunRequest& request,
                       const Result<TargetOptions>& target) {
  const bool remote =
      target.ok() ? !target->host.empty() : file.target.is_object() && file.target.contains("host");
  const PreflightOptions preflight{.remote_target = remote, .executor = request.executor};
  if (Status s = PrepareScenarioFile(file, preflight, request.shard); !s.ok()) {
    std::string problems = s.error().message;
    if (!target.ok() && problems.find(target.error().message) == std::string::npos) {
      problems += "\n" + target.error().message;
    }
    return Error{problems};
  }
  if (!target.ok()) return target.error();
  return Ok();
}

}  // namespace

Result<Outcome> RunScenarioFile(const RunRequest& request, std::ostream& console) {
  auto file = LoadScenarioFile(request.scenario, request.load);
  if (!file.ok()) return file.error();
  auto target = ResolveTarget(request.target, file->target, request.scenario.string());
  if (Status s = CheckBeforeLoad(*file, request, target); !s.ok()) return s.error();
  if (!file->executor.empty()) target->embedded.backend.executor = file->executor;
  ApplyReplaySteps(*file, target->embedded.backend);
  BenchmarkOptions options = request.benchmark;
  if (double qps = SizeObserverBudget(*file, options.harness); qps > 0) {
    spdlog::info(
        "observer budget: {:g} calls/s (--observer-qps raised for the replay's peak of "
        "{:.2g} runs/s)",
        qps, file->replay_runs_per_second);
  }
  if (options.harness.checkpoint_interval <= Duration::zero()) {
    return Error{"--checkpoint-every: must be longer than 0s"};
  }
  auto out_dir = OutputFolder(request.out, "results");
  if (!out_dir.ok()) return out_dir.error();
  options.finish.out_dir = *out_dir;
  auto session = Session::Open(*target);
  if (!session.ok()) return session.error();
  // Before any load: a config file must never choose a target silently.
  if ((*session)->embedded()) {
    spdlog::info("target: {} ({} executor), {}", (*session)->url(),
                 target->embedded.backend.executor, target->origin);
  } else {
    spdlog::info("target: {}, from {}", (*session)->url(), target->origin);
  }
  if (request.on_target_open) request.on_target_open();
  return RunBenchmark(**session, *file, options, console);
}

}  // namespace kfpbench::harness
