#include "plan/profile_run.h"

#include "plan/pipeline_fit.h"

#include <map>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "exec/resource_sampler.h"
#include "harness/orchestrate_params.h"
#include "harness/run_follower.h"
#include "harness/session.h"
#include "kfp/client.h"
#include "metrics/recorder.h"

namespace kfpbench::plan {
namespace {

constexpr int kBadInput = kHttpBadRequest;  // the CLI exits 2 for it
constexpr auto kPollInterval = std::chrono::milliseconds(200);

Error Failed(std::string message) { return Error{std::move(message)}; }

// Polls `run` until it ends, within the run timeout and unless interrupted:
// one run at a time, on the profile's own server, so polling costs nothing
// worth listing for.
Result<kfp::Run> FollowToEnd(kfp::Client& client, kfp::Run last, const ProfileRunOptions& options) {
  const WallTime give_up = WallClock::now() + options.run_timeout;
  while (!IsTerminal(last.state)) {
    if (options.interrupted && options.interrupted->load()) return Failed("interrupted");
    if (WallClock::now() >= give_up) {
      return Failed(fmt::format("run {} still {} after {}", last.run_id,
                                RuntimeStateName(last.state), FormatDuration(options.run_timeout)));
    }
    std::this_thread::sleep_for(kPollInterval);
    auto polled = client.GetRun(last.run_id);
    if (!polled.ok()) return Failed("cannot follow run: " + polled.error().message);
    last = std::move(*polled);
  }
  return last;
}

// The `i`th of the repeated runs, created and followed to its end and
// recorded in `results`; an error unless it succeeded.
Result<kfp::Run> RunOnce(kfp::Client& client, const std::string& pipeline_id,
                         const nlohmann::json& parameters, int i, const ProfileRunOptions& options,
                         results::BenchmarkResults& results) {
  kfp::RunCreate create;
  create.display_name = fmt::format("kfpbench-profile-{}", i + 1);
  create.pipeline_id = pipeline_id;
  create.parameters = parameters;
  results::RunRecord record;
  record.submitted = WallClock::now();
  auto run = client.CreateRun(create);
  if (!run.ok()) return Failed("cannot create a run: " + run.error().message);
  spdlog::info("profile: run {} of {} ({})", i + 1, options.repeats, run->run_id);
  auto ended = FollowToEnd(client, *run, options);
  if (!ended.ok()) return ended.error();
  record.run_id = ended->run_id;
  record.observed = WallClock::now();
  harness::AbsorbRun(*ended, record);
  results.runs.push_back(record);
  if (ended->state != RuntimeState::kSucceeded) {
    return Failed(fmt::format("run {} of {} ended {}{}{}", i + 1, options.pipeline_path.string(),
                              RuntimeStateName(ended->state), ended->error ? ": " : "",
                              ended->error ? ended->error->message : ""));
  }
  return std::move(*ended);
}

// Each step of the finished runs with what the sampler saw of it. A retried
// task runs again under the same id: all its attempts count.
std::vector<StepExecution> StepExecutions(const std::vector<kfp::Run>& finished,
                                          const std::map<std::string, std::string>& labels,
                                          std::vector<exec::GroupProfile> profiles) {
  std::map<std::string, std::vector<exec::GroupProfile>> by_task;
  for (auto& g : profiles) {
    if (!g.task_id.empty()) by_task[g.task_id].push_back(std::move(g));
  }
  std::vector<StepExecution> executions;
  for (const auto& run : finished) {
    for (const auto& t : run.task_details) {
      // Steps only: not DAGs, not skipped branches.
      if (!t.child_tasks.empty() || t.state != RuntimeState::kSucceeded) continue;
      StepExecution e;
      e.run_id = run.run_id;
      e.step = t.display_name;
      if (auto l = labels.find(t.display_name); l != labels.end()) e.executor_label = l->second;
      if (t.end_time > t.start_time) e.duration = t.end_time - t.start_time;
      // A step over before the first sample stays in the table with zero
      // samples (and minimum recommendations), rather than vanishing.
      if (auto sampled = by_task.find(t.task_id); sampled != by_task.end()) {
        for (const auto& attempt : sampled->second) {
          e.cpu_seconds += attempt.cpu_seconds;
          for (const auto& sample : attempt.samples) {
            e.cpu_cores.push_back(sample.cpu_cores);
            e.memory_bytes.push_back(static_cast<double>(sample.memory_bytes));
          }
        }
      }
      executions.push_back(std::move(e));
    }
  }
  return executions;
}

}  // namespace

nlohmann::json WithoutResources(const nlohmann::json& pipeline_spec) {
  nlohmann::json spec = pipeline_spec;
  auto deployment = spec.find("deploymentSpec");
  if (deployment == spec.end() || !deployment->contains("executors")) return spec;
  for (auto& [label, executor] : (*deployment)["executors"].items()) {
    if (executor.contains("container")) executor["container"].erase("resources");
  }
  return spec;
}

Result<ProfileRun> ProfileOnEmbeddedBackend(const ProfileRunOptions& options) {
  const std::string path = options.pipeline_path.string();
  auto spec = ir::LoadPipelineSpec(options.pipeline_path);
  if (!spec.ok()) return Error{spec.error().message, kBadInput};
  auto parameters = harness::TypedParameters(*spec, options.params);
  if (!parameters.ok()) return Error{"--params: " + parameters.error().message, kBadInput};
  if (options.repeats < 1) return Error{"--repeat: must be at least 1", kBadInput};

  // The embedded backend with local processes and no limits: the steps run
  // here, where the sampler can see them.
  harness::TargetOptions target;
  target.embedded.backend.executor = "process";
  target.embedded.backend.self_binary = options.self_binary;
  auto session = harness::Session::Open(target);
  if (!session.ok()) return Failed(session.error().message);
  kfp::Client& client = (*session)->client();
  metrics::Recorder& recorder = (*session)->recorder();

  exec::ResourceSamplerOptions sampler_options;
  sampler_options.interval = options.sample_interval;
  exec::ResourceSampler sampler(sampler_options);

  ProfileRun out;
  out.results.kfpbench_version = KFPBENCH_VERSION;
  out.results.started = recorder.start();
  out.results.target = (*session)->target();
  out.results.scenario_path = path;
  out.results.scenario_source = nlohmann::json::array({{{"mode", "PROFILE"},
                                                        {"pipeline", path},
                                                        {"params", *parameters},
                                                        {"repeat", options.repeats}}});
  out.results.scenarios.push_back({0, "PROFILE", 0});

  auto uploaded = client.UploadPipeline(
      fmt::format("kfpbench-profile-{}", options.pipeline_path.stem().string()),
      options.pipeline_path.stem().string() + ".json", WithoutResources(spec->json).dump());
  if (!uploaded.ok()) return Failed("cannot upload " + path + ": " + uploaded.error().message);

  std::vector<kfp::Run> finished;
  for (int i = 0; i < options.repeats; ++i) {
    auto run = RunOnce(client, uploaded->pipeline_id, *parameters, i, options, out.results);
    if (!run.ok()) return run.error();
    finished.push_back(std::move(*run));
  }
  sampler.Stop();
  out.results.operations = recorder.Snapshot();
  out.results.finished = WallClock::now();

  const std::vector<StepExecution> executions =
      StepExecutions(finished, spec->TaskExecutorLabels(), sampler.Profiles());
  if (executions.empty()) {
    return Failed(fmt::format("no step of {} ran", path));
  }
  out.report = BuildProfile(executions, options.profile);
  AddPipelineFit(*spec, out.report);
  AddRequestedAccelerators(*spec, out.report);
  out.executions = executions;
  out.report.pipeline = path;
  out.report.source = "embedded backend, process executor, no limits";
  out.report.repeats = options.repeats;
  out.report.sample_interval_ms =
      std::chrono::duration<double, std::milli>(options.sample_interval).count();
  out.sized_pipeline = ApplyRecommendations(spec->json, out.report);
  return out;
}

}  // namespace kfpbench::plan
