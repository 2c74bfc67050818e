#include "report/caveats.h"

#include <algorithm>

#include <fmt/format.h>

#include "util/time.h"

namespace kfpbench::report {

std::vector<Caveat> CaveatsOf(const results::BenchmarkResults& r) {
  std::vector<Caveat> out;
  if (r.partial) {
    out.push_back(
        {"partial", fmt::format("PARTIAL results: {}",
                                r.partial_reason.empty() ? "interrupted" : r.partial_reason)});
  }
  if (r.target.executor == "stub") {
    out.push_back(
        {"stub_steps",
         r.target.executor_reason.empty()
             ? std::string("Steps ran as timed stubs (--executor stub): the API and the control "
                           "plane are measured, not the steps' own work")
             : "Steps ran as timed stubs: " + r.target.executor_reason});
  }
  if (auto cached = std::count_if(r.runs.begin(), r.runs.end(), results::FullyCached); cached > 0) {
    out.push_back({"cache", fmt::format("cache: {} of {} runs were answered entirely from KFP's "
                                        "cache and ran no step; the run durations include them "
                                        "(run --no-cache, or a scenario's \"cache\": false, turns "
                                        "caching off)",
                                        cached, r.runs.size())});
  }
  if (r.time_scale != 1) {
    out.push_back({"time_scale",
                   fmt::format("--time-scale {:g}: every time in the scenario file (runTime, "
                               "startTime, rates' periods, replayed steps) was multiplied by {:g}; "
                               "the scenario below is the file as written",
                               r.time_scale, r.time_scale)});
  }
  if (r.LateStarts() > 0) {
    out.push_back({"late_starts", fmt::format("open loop: {} of {} runs started more than {} ms "
                                              "late (latency is timed from the intended start)",
                                              r.LateStarts(), r.StartDelaysMs().count(),
                                              results::BenchmarkResults::kLateStart.count())});
  }
  const auto& o = r.observer;
  const double elapsed = ToSeconds(r.finished - r.started);
  const double waited = ToSeconds(o.budget_wait);
  const auto& lag = o.observe_lag_ms;
  const double poll_ms = ToSeconds(o.poll_interval) * 1000;
  const bool waits = elapsed > 0 && waited > kObserverWaitShare * elapsed;
  const bool late = lag.count() > 0 && poll_ms > 0 &&
                    static_cast<double>(lag.ValueAtPercentile(50)) > 2 * poll_ms;
  if (waits || late) {
    out.push_back(
        {"observer_lag",
         fmt::format("observation lagged: run ends were seen {} ms after the server's finished_at "
                     "at p50 (poll interval {} ms), and calls waited {:.1f} s in all for the "
                     "observer's budget of {}: durations are the server's, but runs in flight "
                     "were counted late; raise --observer-qps",
                     lag.count() ? lag.ValueAtPercentile(50) : 0, static_cast<int64_t>(poll_ms),
                     waited,
                     o.qps_budget > 0 ? fmt::format("{:g} calls/s", o.qps_budget)
                                      : std::string("unlimited"))});
  }
  if (r.back_pressure.Seen()) {
    out.push_back(
        {"back_pressure",
         fmt::format("back-pressure: {} call(s) waited the target's Retry-After ({:.1f} s "
                     "in all) and were resent; {} non-idempotent call(s) were not resent",
                     r.back_pressure.waits, ToSeconds(r.back_pressure.waited),
                     r.back_pressure.not_resent)});
  }
  if (!r.benchmark_id.empty()) {
    const auto& c = r.created;
    std::string left;
    if (r.kept) {
      left = fmt::format("kept (--keep): kfpbench cleanup --benchmark-id {} deletes them",
                         r.benchmark_id);
    } else if (r.deleted.total() >= c.total() && r.cleanup_failures.empty()) {
      left = "all deleted";
    } else {
      left = fmt::format("{} of {} deleted: kfpbench cleanup --benchmark-id {} deletes the rest",
                         r.deleted.total(), c.total(), r.benchmark_id);
    }
    out.push_back({"benchmark_id",
                   fmt::format("benchmark id {}: every object it created on the target is named "
                               "with it ({} in all); {}",
                               r.benchmark_id, c.total(), left)});
  }
  return out;
}

}  // namespace kfpbench::report
