#include "harness/random_gets_runner.h"

#include <random>
#include <thread>
#include <vector>

namespace kfpbench::harness {

Status RandomGetsRunner::Run(const Scenario& scenario, Context& context) {
  const WallTime end = WallClock::now() + scenario.run_time;
  std::vector<std::thread> workers;
  for (int w = 0; w < scenario.InFlight(); ++w) {
    workers.emplace_back([&, w] {
      std::mt19937 rng(static_cast<unsigned>(w) + 1);
      auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
      kfp::Client& client = context.client();
      kfp::ListOptions page;
      page.page_size = 20;
      // Each call is recorded by the client's observer, failures included;
      // a failed step only skips the steps that need its answer.
      while (WallClock::now() < end && !context.Interrupted()) {
        bool any_ok = false;
        if (auto pipelines = client.ListPipelines(page); pipelines.ok()) {
          any_ok = true;
          if (!pipelines->items.empty()) {
            const auto& p = pipelines->items[pick(pipelines->items.size())];
            (void)client.ListPipelineVersions(p.pipeline_id, page);
          }
        }
        any_ok |= client.ListExperiments(page).ok();
        kfp::ListOptions runs_page = page;
        runs_page.sort_by = "created_at desc";
        if (auto runs = client.ListRuns(runs_page); runs.ok()) {
          any_ok = true;
          if (!runs->items.empty()) {
            (void)client.GetRun(runs->items[pick(runs->items.size())].run_id);
          }
        }
        // A server that answers nothing must not be hammered in a tight loop.
        if (!any_ok) context.SleepUntil(WallClock::now() + context.options().poll_interval);
      }
    });
  }
  for (auto& t : workers) t.join();
  return Ok();
}

}  // namespace kfpbench::harness
