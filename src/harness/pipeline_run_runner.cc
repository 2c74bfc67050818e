#include "harness/pipeline_run_runner.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "harness/arrivals.h"
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
  return scenario.rate_per_minute ? RunOpenLoop(scenario, context, base)
                                  : RunClosedLoop(scenario, context, base);
}

Status PipelineRunRunner::RunClosedLoop(const Scenario& scenario, Context& context,
                                        const kfp::RunCreate& base) {
  const WallTime end = WallClock::now() + scenario.run_time;
  const WallTime give_up = end + context.options().drain_timeout;
  std::vector<std::thread> workers;
  for (int w = 0; w < scenario.InFlight(); ++w) {
    workers.emplace_back([&, w] {
      for (int n = 0; WallClock::now() < end && !context.Interrupted(); ++n) {
        RunRecord record;
        record.scenario = scenario.index;
        if (!CreateOne(context, base, fmt::format("kfpbench-s{}-w{}-{}", scenario.index, w, n),
                       record)) {
          context.runs().Add(std::move(record));
          // Don't spin on a failing server: the failure is recorded, the
          // next attempt waits a poll interval.
          context.SleepUntil(WallClock::now() + context.options().poll_interval);
          continue;
        }
        FollowRun(context, record, give_up);
        context.runs().Add(std::move(record));
      }
    });
  }
  for (auto& t : workers) t.join();
  return Ok();
}

Status PipelineRunRunner::RunOpenLoop(const Scenario& scenario, Context& context,
                                      const kfp::RunCreate& base) {
  const WallTime start = WallClock::now();
  const WallTime end = start + scenario.run_time;
  RunFollower follower(context, kOpenLoopPollers);

  // The scheduler hands intended start times to senders; a sender that picks
  // one up late still records the intended time, so lateness is measured.
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::pair<int, WallTime>> due;
  bool done = false;
  std::vector<std::thread> senders;
  for (int i = 0; i < kOpenLoopSenders; ++i) {
    senders.emplace_back([&] {
      for (;;) {
        std::pair<int, WallTime> arrival;
        {
          std::unique_lock lock(mu);
          cv.wait(lock, [&] { return done || !due.empty(); });
          if (due.empty()) return;
          arrival = due.front();
          due.pop_front();
        }
        RunRecord record;
        record.scenario = scenario.index;
        record.intended = arrival.second;
        if (CreateOne(context, base, fmt::format("kfpbench-s{}-{}", scenario.index, arrival.first),
                      record)) {
          follower.Add(std::move(record));
        } else {
          context.runs().Add(std::move(record));
        }
      }
    });
  }
  ArrivalSchedule schedule(start, *scenario.rate_per_minute,
                           scenario.arrival == Scenario::Arrival::kPoisson, scenario.seed);
  for (int n = 0;; ++n) {
    WallTime t = schedule.Next();
    if (t >= end || !context.SleepUntil(t)) break;
    std::lock_guard lock(mu);
    due.emplace_back(n, t);
    cv.notify_one();
  }
  {
    std::lock_guard lock(mu);
    done = true;
    cv.notify_all();
  }
  for (auto& t : senders) t.join();
  follower.Finish(end + context.options().drain_timeout);
  return Ok();
}

}  // namespace kfpbench::harness
