#include "harness/pipeline_run_runner.h"

#include <thread>
#include <vector>

#include <fmt/format.h>

#include "util/ids.h"

namespace kfpbench::harness {
namespace {

void Absorb(const kfp::Run& run, RunRecord& record) {
  record.state = run.state;
  record.created = run.created_at;
  record.finished = run.finished_at;
  if (run.error) record.error = run.error->message;
  record.tasks.clear();
  for (const auto& t : run.task_details) {
    record.tasks.push_back({t.display_name, t.state, t.create_time, t.start_time, t.end_time,
                            !t.child_tasks.empty()});
  }
}

}  // namespace

void FollowRun(Context& context, RunRecord& record, WallTime give_up) {
  std::optional<WallTime> interrupted_at;
  for (;;) {
    auto run = context.client().GetRun(record.run_id);
    if (run.ok()) {
      Absorb(*run, record);
      if (IsTerminal(record.state)) {
        record.observed = WallClock::now();
        return;
      }
    } else {
      record.error = run.error().message;
      // A deleted run will never finish; any other error may pass.
      if (run.error().code == 404) return;
    }
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
  std::string experiment_id;
  if (own_experiment_) {
    auto e = context.client().CreateExperiment(
        fmt::format("kfpbench-{}-{}", scenario.index, NewUuid().substr(0, 8)),
        "created by kfpbench for an EXPERIMENT scenario");
    if (!e.ok()) return Error{"cannot create the experiment: " + e.error().message};
    experiment_id = e->experiment_id;
    context.TrackExperiment(experiment_id);
  }

  const WallTime end = WallClock::now() + scenario.run_time;
  const WallTime give_up = end + context.options().drain_timeout;
  std::vector<std::thread> workers;
  for (int w = 0; w < scenario.InFlight(); ++w) {
    workers.emplace_back([&, w] {
      for (int n = 0; WallClock::now() < end && !context.Interrupted(); ++n) {
        RunRecord record;
        record.scenario = scenario.index;
        record.submitted = WallClock::now();
        kfp::RunCreate create;
        create.display_name = fmt::format("kfpbench-s{}-w{}-{}", scenario.index, w, n);
        create.experiment_id = experiment_id;
        create.pipeline_id = pipeline->pipeline_id;
        create.parameters = scenario.params;
        auto run = context.client().CreateRun(create);
        if (!run.ok()) {
          record.error = run.error().message;
          context.runs().Add(std::move(record));
          // Don't spin on a failing server: the failure is recorded, the
          // next attempt waits a poll interval.
          context.SleepUntil(WallClock::now() + context.options().poll_interval);
          continue;
        }
        record.run_id = run->run_id;
        context.TrackRun(record.run_id);
        Absorb(*run, record);
        FollowRun(context, record, give_up);
        context.runs().Add(std::move(record));
      }
    });
  }
  for (auto& t : workers) t.join();
  return Ok();
}

}  // namespace kfpbench::harness
