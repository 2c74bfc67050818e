#include "sim/replications.h"

#include <algorithm>
#include <atomic>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "sim/budget.h"
#include "sim/simulator.h"
#include "sim/step_draw.h"
#include "util/human.h"

namespace kfpbench::sim {
namespace {

FigureSpread SpreadOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  const double median = n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  return {median, v.front(), v.back()};
}

}  // namespace

Result<Spread> SimulateReplications(const ClusterSpec& cluster, const WorkloadSpec& workload,
                                    int replications, int threads) {
  if (replications < 1) return Error{"replications must be at least 1"};
  const size_t n = static_cast<size_t>(replications);
  const size_t hardware = std::max(1u, std::thread::hardware_concurrency());
  const size_t workers = std::min(n, threads > 0 ? static_cast<size_t>(threads) : hardware);
  std::vector<double> makespan(n), run_p95(n), wait_p95(n);
  std::vector<std::optional<Error>> errors(n);
  std::atomic<size_t> next{0};
  SimOptions options;
  options.memory_budget = DefaultMemoryBudget() / workers;
  auto work = [&] {
    for (size_t i = next++; i < n; i = next++) {
      WorkloadSpec w = workload;
      w.seed = ReplicationSeed(workload.seed, static_cast<int>(i));
      auto r = Simulate(cluster, w, options);
      if (!r.ok()) {
        errors[i] = r.error();
        continue;
      }
      makespan[i] = ToSeconds(r->makespan);
      run_p95[i] = static_cast<double>(r->run_ms.ValueAtPercentile(95)) / 1000.0;
      wait_p95[i] = static_cast<double>(r->pending_ms.ValueAtPercentile(95)) / 1000.0;
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < workers; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  for (size_t i = 0; i < n; ++i) {
    if (errors[i]) return Error{fmt::format("replication {}: {}", i, errors[i]->message)};
  }
  return Spread{replications, SpreadOf(makespan), SpreadOf(run_p95), SpreadOf(wait_p95)};
}

std::string DescribeSpread(const Spread& s, double model_error) {
  auto shown = [model_error](double seconds) {
    return FormatDurationKnownTo(FromSeconds(seconds), model_error);
  };
  auto figure = [&](const char* name, const FigureSpread& f) {
    return fmt::format("{} median {} ({} to {})", name, shown(f.median), shown(f.low),
                       shown(f.high));
  };
  return fmt::format("spread      over {} (the workload's seed and the next): {}, {}, {}\n",
                     Plural(s.replications, "seed"), figure("makespan", s.makespan),
                     figure("run p95", s.run_p95), figure("pending p95", s.wait_p95));
}

nlohmann::json ToJson(const Spread& s) {
  auto figure = [](const FigureSpread& f) {
    return nlohmann::json{{"median", f.median}, {"min", f.low}, {"max", f.high}};
  };
  return {{"replications", s.replications},
          {"makespan_seconds", figure(s.makespan)},
          {"run_p95_seconds", figure(s.run_p95)},
          {"task_pending_p95_seconds", figure(s.wait_p95)}};
}

}  // namespace kfpbench::sim
