// PIPELINE_RUN and EXPERIMENT. Closed loop (default): keep `numTimes` (or
// `concurrency`) runs in flight for `runTime`, each created, then polled to a
// terminal state. Open loop (`rate`): start runs at their intended times,
// constant or Poisson, whatever the server's state, and follow them all.
// EXPERIMENT first creates an experiment of its own.
#include "harness/modes.h"

#include <thread>

#include <fmt/format.h>

#include "harness/growth_runner.h"
#include "harness/load_loops.h"
#include "harness/run_follower.h"
#include "ir/quantity.h"
#include "util/ids.h"
#include "util/time.h"

namespace kfpbench::harness {
namespace {

class PipelineRunRunner : public ModeRunner {
 public:
  explicit PipelineRunRunner(bool own_experiment) : own_experiment_(own_experiment) {}
  Status Run(const Scenario& scenario, Context& context) override;

 private:
  Status RunClosedLoop(const Scenario& scenario, Context& context, const kfp::RunCreate& base);
  // Open loop at the scenario's rate until `end`, then waits for the runs.
  Status RunOpenLoop(const Scenario& scenario, Context& context, const kfp::RunCreate& base,
                     WallTime end);
  Status RunStress(const Scenario& scenario, Context& context, const kfp::RunCreate& base);

  bool own_experiment_;
};

// Polls a run until it is terminal or `give_up` passes (sooner after an
// interruption: the context's grace). Fills `record` from the last answer.

}  // namespace

namespace {

// Threads that send CreateRun in open loop. Enough that a slow CreateRun
// rarely delays the next arrival; a delay that happens anyway is measured
// (start delay, late starts), not hidden.
constexpr int kOpenLoopSenders = 8;

enum class Created { kYes, kFailed, kNotSent };

// Sends one CreateRun through `load` (the scenario's client, bounded by its
// end); the record carries the outcome, unless the end came first and
// nothing was sent (no run was asked for, so none is recorded).
Created CreateOne(Context& context, kfp::Client& load, const kfp::RunCreate& base,
                  const std::string& name, results::RunRecord& record) {
  kfp::RunCreate create = base;
  create.display_name = name;
  record.submitted = WallClock::now();
  auto run = load.CreateRun(create);
  if (!run.ok()) {
    if (run.error().code == kfp::Client::kNotSent) return Created::kNotSent;
    record.error = run.error().message;
    return Created::kFailed;
  }
  record.run_id = run->run_id;
  context.TrackRun(record.run_id);
  AbsorbRun(*run, record);
  return Created::kYes;
}

}  // namespace

Status PipelineRunRunner::Run(const Scenario& scenario, Context& context) {
  // The growth shape uploads its own fill pipelines (harness/growth_fill.h).
  if (scenario.growth) return RunGrowth(scenario, context);
  auto pipeline = context.EnsurePipeline(scenario.pipeline_path, scenario.cache);
  if (!pipeline.ok()) return pipeline.error();
  kfp::RunCreate base;
  base.pipeline_id = pipeline->pipeline_id;
  base.parameters = scenario.params;
  // KFP's multi-user mode refuses a run without an experiment (its
  // GetValidExperimentNamespacePair): under --namespace every scenario has one.
  const bool multi_user = !context.client().config().namespace_.empty();
  if (own_experiment_ || multi_user) {
    auto e = context.client().CreateExperiment(
        context.Name(fmt::format("e{}-{}", scenario.index, NewUuid().substr(0, 8))),
        context.Description(own_experiment_ ? "for an EXPERIMENT scenario"
                                            : "(a run needs an experiment in its namespace)"));
    if (!e.ok()) return Error{"cannot create the experiment: " + e.error().message};
    base.experiment_id = e->experiment_id;
    context.TrackExperiment(base.experiment_id);
  }
  if (scenario.stress) return RunStress(scenario, context, base);
  if (scenario.rate_per_minute) {
    return RunOpenLoop(scenario, context, base, WallClock::now() + scenario.run_time);
  }
  return RunClosedLoop(scenario, context, base);
}

Status PipelineRunRunner::RunClosedLoop(const Scenario& scenario, Context& context,
                                        const kfp::RunCreate& base) {
  const WallTime end = WallClock::now() + scenario.run_time;
  const WallTime give_up = end + context.options().drain_timeout;
  kfp::Client load = context.client().StartingBefore(end);
  RunFollower follower(context, kOpenLoopPollers);
  DriveClosedLoop(context, scenario.InFlight(), end, [&](int worker, int n) {
    results::RunRecord record;
    record.scenario = scenario.index;
    Created created =
        CreateOne(context, load, base,
                  context.Name(fmt::format("s{}-w{}-{}", scenario.index, worker, n)), record);
    if (created == Created::kNotSent) return true;
    if (created == Created::kFailed) {
      context.runs().Add(std::move(record));
      return false;
    }
    std::string id = record.run_id;
    follower.Add(std::move(record));
    follower.WaitRecorded(id, give_up);
    return true;
  });
  follower.Finish(give_up);
  return Ok();
}

Status PipelineRunRunner::RunOpenLoop(const Scenario& scenario, Context& context,
                                      const kfp::RunCreate& base, WallTime end) {
  RunFollower follower(context, kOpenLoopPollers);
  kfp::Client load = context.client().StartingBefore(end);
  DriveOpenLoop(context, scenario, kOpenLoopSenders, end, [&](int n, WallTime intended) {
    results::RunRecord record;
    record.scenario = scenario.index;
    record.intended = intended;
    switch (CreateOne(context, load, base, context.Name(fmt::format("s{}-{}", scenario.index, n)),
                      record)) {
      case Created::kYes:
        follower.Add(std::move(record));
        break;
      case Created::kFailed:
        context.runs().Add(std::move(record));
        break;
      case Created::kNotSent:
        break;
    }
  });
  follower.Finish(end + context.options().drain_timeout);
  return Ok();
}

Status PipelineRunRunner::RunStress(const Scenario& scenario, Context& context,
                                    const kfp::RunCreate& base) {
  const Scenario::Stress& stress = *scenario.stress;
  const WallTime deadline = WallClock::now() + scenario.run_time;
  Scenario step = scenario;
  results::StressStop stop;
  stop.scenario = scenario.index;
  auto stopped = [&](results::StressStopReason reason, std::string detail) {
    stop.reason = reason;
    stop.detail = std::move(detail);
    context.Record([&](Findings& f) { f.stress_stops.push_back(stop); });
    return Ok();
  };
  for (double rate = *scenario.rate_per_minute;; rate *= stress.rate_factor) {
    if (context.Interrupted()) {
      return stopped(results::StressStopReason::kInterrupted,
                     fmt::format("interrupted before the step at {:g}/min", rate));
    }
    if (stress.max_rate > 0 && rate > stress.max_rate) {
      return stopped(
          results::StressStopReason::kMaxRateReached,
          fmt::format("the next step, {:g}/min, is above maxRate {:g}/min", rate, stress.max_rate));
    }
    const WallTime start = WallClock::now();
    if (start + stress.step_time > deadline) {
      return stopped(results::StressStopReason::kRunTimeReached,
                     fmt::format("runTime ended before the step at {:g}/min could run its {}", rate,
                                 FormatDuration(stress.step_time)));
    }
    step.rate_per_minute = rate;
    // Runs of this step are those meant to start within it.
    if (Status s = RunOpenLoop(step, context, base, start + stress.step_time); !s.ok()) return s;
    results::StressStep result;
    result.scenario = scenario.index;
    result.rate_per_minute = rate;
    metrics::Histogram latency;
    for (const auto& r : context.runs().Records()) {
      if (r.scenario != scenario.index || r.intended < start ||
          r.intended >= start + stress.step_time) {
        continue;
      }
      ++result.runs;
      if (r.state != RuntimeState::kSucceeded) ++result.failed;
      if (auto l = r.LatencyFromIntended(); l && r.Finished()) {
        latency.Record(std::chrono::duration_cast<std::chrono::milliseconds>(*l).count());
      }
    }
    result.p95_ms = latency.ValueAtPercentile(95);
    result.error_rate = result.runs ? static_cast<double>(result.failed) / result.runs : 0;
    result.held = result.runs > 0 && latency.count() > 0 &&
                  std::chrono::milliseconds(result.p95_ms) <= stress.slo_p95 &&
                  result.error_rate <= stress.slo_error_rate;
    context.Record([&](Findings& f) { f.stress_steps.push_back(result); });
    if (!result.held) {
      std::string why = latency.count() == 0
                            ? fmt::format("no run of the step finished ({} of {} failed)",
                                          result.failed, result.runs)
                            : fmt::format("p95 {} (SLO {}), {:.1f}% of runs failed (SLO {:.1f}%)",
                                          FormatDuration(std::chrono::milliseconds(result.p95_ms)),
                                          FormatDuration(stress.slo_p95), result.error_rate * 100,
                                          stress.slo_error_rate * 100);
      return stopped(results::StressStopReason::kSloBroken,
                     fmt::format("the SLO broke at {:g}/min: {}", rate, why));
    }
  }
}

namespace {

// LARGE_DATASET: the artifact size each step moves (params.size); the results
// keep it, and per-step throughput is size / time.
struct ArtifactSize : ModeData {
  explicit ArtifactSize(int64_t b) : bytes(b) {}
  void Describe(results::ScenarioInfo& info) const override { info.artifact_bytes = bytes; }
  int64_t bytes;
};

Status ReadArtifactSize(const nlohmann::json&, const std::string& at, const std::filesystem::path&,
                        Scenario& s) {
  auto size = s.params.find("size");
  if (size == s.params.end()) {
    return Error{at +
                 ".params.size: required for LARGE_DATASET (bytes per artifact, e.g. \"512Mi\")"};
  }
  if (size->is_number_integer() && size->get<int64_t>() > 0) {
    s.mode_data = std::make_shared<ArtifactSize>(size->get<int64_t>());
    return Ok();
  }
  if (size->is_string()) {
    auto bytes = ir::ParseQuantityMemory(size->get<std::string>());
    if (bytes.ok() && *bytes > 0) {
      s.mode_data = std::make_shared<ArtifactSize>(*bytes);
      return Ok();
    }
  }
  return Error{fmt::format("{}.params.size: not a size (got {})", at, size->dump())};
}

}  // namespace

const ModeSpec& PipelineRunMode() {
  static const ModeSpec mode{
      .name = "PIPELINE_RUN",
      .needs_pipeline = true,
      .starts_runs = true,
      .shapes = {"stress", "growth"},
      .make_runner = [] { return std::unique_ptr<ModeRunner>(new PipelineRunRunner(false)); },
  };
  return mode;
}

// EXPERIMENT first creates an experiment of its own.
const ModeSpec& ExperimentMode() {
  static const ModeSpec mode{
      .name = "EXPERIMENT",
      .needs_pipeline = true,
      .starts_runs = true,
      .shapes = {"stress"},
      .make_runner = [] { return std::unique_ptr<ModeRunner>(new PipelineRunRunner(true)); },
  };
  return mode;
}

// Runs like PIPELINE_RUN; the report adds per-step artifact throughput.
const ModeSpec& LargeDatasetMode() {
  static const ModeSpec mode{
      .name = "LARGE_DATASET",
      .needs_pipeline = true,
      .starts_runs = true,
      .read = ReadArtifactSize,
      .make_runner = [] { return std::unique_ptr<ModeRunner>(new PipelineRunRunner(false)); },
  };
  return mode;
}

}  // namespace kfpbench::harness
