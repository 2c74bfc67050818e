#include "harness/pipeline_run_runner.h"

#include <thread>

#include <fmt/format.h>

#include "harness/load_loops.h"
#include "harness/run_follower.h"
#include "util/ids.h"

namespace kfpbench::harness {
namespace {

// Threads that send CreateRun in open loop. Enough that a slow CreateRun
// rarely delays the next arrival; a delay that happens anyway is measured
// (start delay, late starts), not hidden.
constexpr int kOpenLoopSenders = 8;
constexpr int kOpenLoopPollers = 4;

// Sends one CreateRun; the record carries the outcome either way.
bool CreateOne(Context& context, const kfp::RunCreate& base, const std::string& name,
               RunRecord& record) {
  kfp::RunCreate create = base;
  create.display_name = name;
  record.submitted = WallClock::now();
  auto run = context.client().CreateRun(create);
  if (!run.ok()) {
    record.error = run.error().message;
    return false;
  }
  record.run_id = run->run_id;
  context.TrackRun(record.run_id);
  AbsorbRun(*run, record);
  return true;
}

}  // namespace

void FollowRun(Context& context, RunRecord& record, WallTime give_up) {
  std::optional<WallTime> interrupted_at;
  for (;;) {
    if (PollRun(context, record)) return;
    WallTime now = WallClock::now();
    if (context.Interrupted() && !interrupted_at) interrupted_at = now;
    WallTime deadline = give_up;
    if (interrupted_at) deadline = std::min(deadline, *interrupted_at + context.options().grace);
    if (now >= deadline) {
      if (record.error.empty()) {
        record.error =
            fmt::format("still {} when kfpbench stopped waiting", RuntimeStateName(record.state));
      }
      return;
    }
    // Interruptions must not cut the grace period short, so sleep plainly.
    std::this_thread::sleep_for(
        std::min<Duration>(context.options().poll_interval, deadline - now));
  }
}

Status PipelineRunRunner::Run(const Scenario& scenario, Context& context) {
  auto pipeline = context.EnsurePipeline(scenario.pipeline_path);
  if (!pipeline.ok()) return pipeline.error();
  kfp::RunCreate base;
  base.pipeline_id = pipeline->pipeline_id;
  base.parameters = scenario.params;
  if (own_experiment_) {
    auto e = context.client().CreateExperiment(
        fmt::format("kfpbench-{}-{}", scenario.index, NewUuid().substr(0, 8)),
        "created by kfpbench for an EXPERIMENT scenario");
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
  DriveClosedLoop(context, scenario.InFlight(), end, [&](int worker, int n) {
    RunRecord record;
    record.scenario = scenario.index;
    bool created = CreateOne(context, base,
                             fmt::format("kfpbench-s{}-w{}-{}", scenario.index, worker, n), record);
    if (created) FollowRun(context, record, give_up);
    context.runs().Add(std::move(record));
    return created;
  });
  return Ok();
}

Status PipelineRunRunner::RunOpenLoop(const Scenario& scenario, Context& context,
                                      const kfp::RunCreate& base, WallTime end) {
  RunFollower follower(context, kOpenLoopPollers);
  DriveOpenLoop(context, scenario, kOpenLoopSenders, end, [&](int n, WallTime intended) {
    RunRecord record;
    record.scenario = scenario.index;
    record.intended = intended;
    if (CreateOne(context, base, fmt::format("kfpbench-s{}-{}", scenario.index, n), record)) {
      follower.Add(std::move(record));
    } else {
      context.runs().Add(std::move(record));
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
  for (double rate = *scenario.rate_per_minute; !context.Interrupted();
       rate *= stress.rate_factor) {
    if (stress.max_rate > 0 && rate > stress.max_rate) break;
    const WallTime start = WallClock::now();
    if (start + stress.step_time > deadline) break;  // runTime caps the search
    step.rate_per_minute = rate;
    // Runs of this step are those meant to start within it.
    if (Status s = RunOpenLoop(step, context, base, start + stress.step_time); !s.ok()) return s;
    StressStep result;
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
    context.AddStressStep(result);
    if (!result.held) break;
  }
  return Ok();
}

}  // namespace kfpbench::harness
