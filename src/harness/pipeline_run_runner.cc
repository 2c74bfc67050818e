// PIPELINE_RUN and EXPERIMENT. Closed loop (default): keep `numTimes` (or
// `concurrency`) runs in flight for `runTime`, each created, then polled to a
// terminal state. Open loop (`rate`): start runs at their intended times,
// constant or Poisson, whatever the server's state, and follow them all.
// EXPERIMENT first creates an experiment of its own.
#include "harness/modes.h"

#include <functional>
#include <thread>

#include <fmt/format.h>

#include "harness/load_loops.h"
#include "harness/run_follower.h"
#include "harness/shapes.h"
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

  bool own_experiment_;
};

// The runner's open loop lent to a shape's driver (stress steps).
class RunnerLoad : public ShapeLoad {
 public:
  using OpenLoopFn = std::function<Status(const Scenario&, WallTime)>;
  explicit RunnerLoad(OpenLoopFn open_loop) : open_loop_(std::move(open_loop)) {}
  Status OpenLoop(const Scenario& scenario, WallTime end) override {
    return open_loop_(scenario, end);
  }

 private:
  OpenLoopFn open_loop_;
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
  // A shape that drives the scenario: with pipelines of its own (growth's
  // fill) before anything of the mode's, else with the mode's runs.
  const ShapeSpec* shape = scenario.shape;
  const bool shape_drives = shape != nullptr && shape->drive != nullptr;
  if (shape_drives && shape->own_pipelines) return shape->drive(scenario, context, nullptr);
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
  if (shape_drives) {
    RunnerLoad load(
        [&](const Scenario& step, WallTime end) { return RunOpenLoop(step, context, base, end); });
    return shape->drive(scenario, context, &load);
  }
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

namespace {

// LARGE_DATASET: the artifact size each step moves (params.size); the results
// keep it, and per-step throughput is size / time.
struct ArtifactSize : ModeData {
  explicit ArtifactSize(int64_t b) : bytes(b) {}
  void Describe(results::ScenarioInfo& info) const override { info.artifact_bytes = bytes; }
  int64_t bytes;
};

void ReadArtifactSize(JsonReader& entry, const std::filesystem::path&, Scenario& s) {
  auto size = s.params.find("size");
  if (size == s.params.end()) {
    return entry.Fail("params.size",
                      "required for LARGE_DATASET (bytes per artifact, e.g. \"512Mi\")");
  }
  if (size->is_number_integer() && size->get<int64_t>() > 0) {
    s.mode_data = std::make_shared<ArtifactSize>(size->get<int64_t>());
    return;
  }
  if (size->is_string()) {
    auto bytes = ir::ParseQuantityMemory(size->get<std::string>());
    if (bytes.ok() && *bytes > 0) {
      s.mode_data = std::make_shared<ArtifactSize>(*bytes);
      return;
    }
  }
  entry.Fail("params.size", fmt::format("not a size (got {})", size->dump()));
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
