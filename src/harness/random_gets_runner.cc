#include "harness/random_gets_runner.h"

#include <spdlog/spdlog.h>

#include <atomic>
#include <mutex>
#include <random>
#include <vector>

#include "harness/load_loops.h"
#include "harness/results.h"

namespace kfpbench::harness {

namespace {

// One pass of the chain; false when no call got an answer.
bool ReadChain(kfp::Client& client, std::mt19937& rng) {
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  kfp::ListOptions page;
  page.page_size = 20;
  // Each call is recorded by the client's observer, failures included; a
  // failed step only skips the steps that need its answer.
  bool any_ok = false;
  if (auto pipelines = client.ListPipelines(page); pipelines.ok()) {
    any_ok = true;
    if (!pipelines->items.empty()) {
      (void)client.ListPipelineVersions(pipelines->items[pick(pipelines->items.size())].pipeline_id,
                                        page);
    }
  }
  any_ok |= client.ListExperiments(page).ok();
  kfp::ListOptions runs_page = page;
  runs_page.sort_by = "created_at desc";
  if (auto runs = client.ListRuns(runs_page); runs.ok()) {
    any_ok = true;
    if (!runs->items.empty()) (void)client.GetRun(runs->items[pick(runs->items.size())].run_id);
  }
  return any_ok;
}

}  // namespace

Status RandomGetsRunner::Run(const Scenario& scenario, Context& context) {
  const WallTime end = WallClock::now() + scenario.run_time;
  if (scenario.rate_per_minute) {
    // Open loop: each arrival is one pass of the chain.
    std::mutex mu;
    std::mt19937 rng(static_cast<unsigned>(scenario.seed));
    std::atomic<int64_t> sent{0}, late{0}, dropped{0};
    DriveOpenLoop(context, scenario, 8, end, [&](int n, WallTime intended) {
      const WallTime now = WallClock::now();
      // Arrivals still queued at the end are not sent: a sender that fell
      // behind must not stretch the scenario by its backlog.
      if (now >= end) {
        dropped.fetch_add(1, std::memory_order_relaxed);
        return;
      }
      if (now - intended > BenchmarkResults::kLateStart)
        late.fetch_add(1, std::memory_order_relaxed);
      sent.fetch_add(1, std::memory_order_relaxed);
      std::mt19937 local;
      {
        std::lock_guard lock(mu);
        local.seed(rng() + static_cast<unsigned>(n));
      }
      ReadChain(context.client(), local);
    });
    spdlog::info(
        "RANDOM_GETS [{}] open loop: {} chains sent, {} of them started > {} ms late, {} "
        "not sent before the end",
        scenario.index, sent.load(), late.load(), BenchmarkResults::kLateStart.count(),
        dropped.load());
    return Ok();
  }
  std::vector<std::mt19937> rngs;
  for (int w = 0; w < scenario.InFlight(); ++w) rngs.emplace_back(static_cast<unsigned>(w) + 1);
  DriveClosedLoop(context, scenario.InFlight(), end,
                  [&](int worker, int) { return ReadChain(context.client(), rngs[worker]); });
  return Ok();
}

}  // namespace kfpbench::harness
