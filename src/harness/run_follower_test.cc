// The run follower against the embedded backend with stub steps: many runs
// in flight, their ends found by listing within the observer's budget.
#include "harness/run_follower.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/harness.h"
#include "harness/session.h"
#include "util/sanitizers.h"

namespace kfpbench::harness {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct Measured {
  results::BenchmarkResults results;
  uint64_t workload_get_runs = 0;
};

// The scenario file `text` on the embedded backend, each step a `step` stub.
Measured RunScenarioText(const std::string& text, const std::string& step, HarnessOptions options) {
  TargetOptions target;
  target.embedded.port = 0;
  target.embedded.threads = 4;
  target.embedded.backend.executor = "stub";
  target.embedded.backend.stub_durations = {"constant:" + step};
  // Room for every step at once: the runs measure the follower, not queueing
  // for this machine's two cores.
  target.embedded.backend.nodes = {engine::NodeSpec("roomy", 1e6, int64_t{1} << 50)};
  auto session = Session::Open(target);
  EXPECT_TRUE(session.ok()) << session.error().message;
  if (!session.ok()) return {};
  auto file =
      ParseScenarios(text, "s.json",
                     {.pipeline_dirs = {std::string(KFPBENCH_SOURCE_DIR) + "/examples/pipelines"}});
  EXPECT_TRUE(file.ok()) << file.error().message;
  if (!file.ok()) return {};
  options.embedded_target = true;
  Measured m;
  m.results = RunScenarios(*file, (*session)->client(), (*session)->recorder(), options);
  if (auto it = m.results.operations.find("GetRun"); it != m.results.operations.end()) {
    m.workload_get_runs = it->second.latency_us.count();
  }
  return m;
}

// `runs` runs of the three-step sleep chain, each step a `step` stub, started
// open loop within about `spread`.
Measured RunOpenLoop(int runs, const std::string& step, Duration spread, HarnessOptions options) {
  const double spread_s = ToSeconds(spread);
  return RunScenarioText(fmt::format(R"([{{"mode": "PIPELINE_RUN",
                                         "pipelineFileName": "sleep_chain.yaml",
                                         "rate": {}, "runTime": "{}ms"}}])",
                                     60.0 * runs / spread_s, static_cast<int64_t>(spread_s * 1000)),
                         step, options);
}

TEST(RunFollower, ClosedLoopWorkersWaitOnTheListingInsteadOfPollingTheirRuns) {
  HarnessOptions options;
  options.poll_interval = std::chrono::milliseconds(100);
  options.observer_qps = 0;
  options.drain_timeout = std::chrono::seconds(60);
  // Eight workers, each run three 300 ms steps: polled run by run every
  // 100 ms, each run would cost about ten GetRuns.
  Measured m = RunScenarioText(R"([{"mode": "PIPELINE_RUN", "pipelineFileName": "sleep_chain.yaml",
                                    "concurrency": 8, "runTime": "3s"}])",
                               "300ms", options);
  const results::BenchmarkResults& r = m.results;
  const uint64_t created = r.runs.size();
  ASSERT_GE(created, 8u) << (r.errors.empty() ? "" : r.errors.front());
  for (const auto& run : r.runs) {
    ASSERT_TRUE(run.Finished()) << run.run_id << " " << run.error;
    EXPECT_FALSE(run.tasks.empty());
  }
  const results::ObserverSummary& o = r.observer;
  EXPECT_EQ(o.runs_by_listing, created) << o.polling_reason;
  EXPECT_EQ(o.runs_by_polling, 0u);
  ASSERT_TRUE(o.operations.count("GetRun"));
  EXPECT_EQ(o.operations.at("GetRun").latency_us.count(), created);
  EXPECT_EQ(m.workload_get_runs, 0u);
  // Each worker waited for its run to be seen ended before the next: never
  // more than eight between CreateRun and the end kfpbench saw.
  std::vector<std::pair<WallTime, int>> edges;
  for (const auto& run : r.runs) {
    ASSERT_NE(run.submitted, WallTime{});
    edges.emplace_back(run.submitted, +1);
    edges.emplace_back(run.observed, -1);
  }
  std::sort(edges.begin(), edges.end());
  int in_flight = 0, most = 0;
  for (const auto& [at, step] : edges) most = std::max(most, in_flight += step);
  EXPECT_LE(most, 8);
}

TEST(RunFollower, ListsRunsInFlightAndReadsEachEndedRunOnce) {
  HarnessOptions options;
  options.poll_interval = std::chrono::milliseconds(250);
  options.observer_qps = 200;
  options.drain_timeout = std::chrono::seconds(60);
  constexpr int kRuns = 300;
  Measured listed = RunOpenLoop(kRuns, "1s", std::chrono::seconds(3), options);
  const results::BenchmarkResults& r = listed.results;
  // A loaded or sanitized machine may send fewer than asked in 3 s: every
  // run it created is what must be followed.
  const uint64_t created = r.runs.size();
  ASSERT_GT(created, uint64_t{kRuns / 4}) << (r.errors.empty() ? "" : r.errors.front());
  for (const auto& run : r.runs) {
    ASSERT_TRUE(run.Finished()) << run.run_id << " " << run.error;
    EXPECT_EQ(run.state, RuntimeState::kSucceeded) << run.error;
    EXPECT_FALSE(run.tasks.empty()) << "the GetRun after the end reads the task timings";
  }
  const results::ObserverSummary& o = r.observer;
  EXPECT_EQ(o.runs_by_listing, created) << o.polling_reason;
  EXPECT_EQ(o.runs_by_polling, 0u);
  EXPECT_LE(o.Calls(), 4 * created);
  ASSERT_TRUE(o.operations.count("GetRun"));
  EXPECT_EQ(o.operations.at("GetRun").latency_us.count(), created);
  EXPECT_GT(o.list_sweeps, 0u);
  // The follower's calls are the observer's, not the workload's.
  EXPECT_EQ(listed.workload_get_runs, 0u);
  EXPECT_FALSE(r.operations.count("ListRuns"));
  EXPECT_EQ(o.observe_lag_ms.count(), created);
  EXPECT_TRUE(r.harness_usage.Measured());
  EXPECT_GT(r.harness_usage.peak_rss_bytes, 0);

  // The same load polled run by run: the durations are the server's either
  // way, so their percentiles agree within the histogram's error.
  options.observe_each_run = true;
  Measured polled = RunOpenLoop(kRuns, "1s", std::chrono::seconds(3), options);
  const uint64_t polled_runs = polled.results.runs.size();
  ASSERT_GT(polled_runs, uint64_t{kRuns / 4});
  EXPECT_EQ(polled.results.observer.runs_by_polling, polled_runs);
  auto a = r.RunDurationsMs();
  auto b = polled.results.RunDurationsMs();
  EXPECT_EQ(a.count(), created);
  EXPECT_EQ(b.count(), polled_runs);
  // Per run, polling costs more calls than listing.
  EXPECT_GT(static_cast<double>(polled.results.observer.Calls()) / static_cast<double>(polled_runs),
            static_cast<double>(o.Calls()) / static_cast<double>(created));
  for (double p : {50.0, 90.0, 99.0}) {
    const double x = static_cast<double>(a.ValueAtPercentile(p));
    const double y = static_cast<double>(b.ValueAtPercentile(p));
    // Stub steps of one second, three of them: a loaded machine adds
    // scheduling noise, never the observation's interval. The p99 of 300 is
    // the third-longest run, whose noise an AddressSanitizer build doubles.
    const double tolerance = p == 99.0 && kUnderAddressSanitizer ? 0.2 : 0.1;
    EXPECT_NEAR(x, y, std::max(tolerance * y, 200.0)) << "p" << p;
  }
}

// The issue's full figure, measured on demand (docs/PERFORMANCE.md):
//   KFPBENCH_OBSERVE_RUNS=2000 KFPBENCH_OBSERVE_STEP=20s KFPBENCH_OBSERVE_SPREAD_S=20
//   build/src/harness/harness_tests --gtest_filter=RunFollower.AtScale
// (three steps of STEP each, the runs started open loop over SPREAD_S)
TEST(RunFollower, AtScale) {
  const char* runs_text = std::getenv("KFPBENCH_OBSERVE_RUNS");
  if (runs_text == nullptr) GTEST_SKIP() << "set KFPBENCH_OBSERVE_RUNS to measure";
  const int runs = std::atoi(runs_text);
  const char* step = std::getenv("KFPBENCH_OBSERVE_STEP");
  const char* spread = std::getenv("KFPBENCH_OBSERVE_SPREAD_S");
  const char* qps = std::getenv("KFPBENCH_OBSERVE_QPS");
  HarnessOptions options;
  options.drain_timeout = std::chrono::minutes(30);
  if (qps != nullptr) options.observer_qps = std::atof(qps);
  options.observe_each_run = std::getenv("KFPBENCH_OBSERVE_EACH_RUN") != nullptr;
  Measured m = RunOpenLoop(runs, step ? step : "20s",
                           std::chrono::seconds(spread ? std::atoi(spread) : 20), options);
  const results::BenchmarkResults& r = m.results;
  const results::ObserverSummary& o = r.observer;
  int finished = 0;
  for (const auto& run : r.runs) finished += run.Finished() ? 1 : 0;
  uint64_t workload = 0;
  for (const auto& [name, op] : r.operations) workload += op.latency_us.count();
  auto d = r.RunDurationsMs();
  std::string per_op;
  for (const auto& [name, op] : o.operations) {
    per_op += fmt::format(" {} {} (p50 {} us, p99 {} us);", name, op.latency_us.count(),
                          op.latency_us.ValueAtPercentile(50), op.latency_us.ValueAtPercentile(99));
  }
  std::printf(
      "runs %zu, finished %d; observer calls %llu (%.2f per run, %.1f%% of all calls):%s "
      "sweeps %llu, by listing %llu, by polling %llu; observe lag p50 %lld ms p95 %lld ms max %lld "
      "ms; budget wait %.1f s; run duration p50 %lld p90 %lld p99 %lld max %lld ms; kfpbench "
      "%.1f s CPU over %.1f s, peak RSS %.0f MiB\n",
      r.runs.size(), finished, static_cast<unsigned long long>(o.Calls()),
      r.runs.empty() ? 0.0 : static_cast<double>(o.Calls()) / r.runs.size(),
      100.0 * o.Calls() / std::max<uint64_t>(1, o.Calls() + workload), per_op.c_str(),
      static_cast<unsigned long long>(o.list_sweeps),
      static_cast<unsigned long long>(o.runs_by_listing),
      static_cast<unsigned long long>(o.runs_by_polling),
      static_cast<long long>(o.observe_lag_ms.ValueAtPercentile(50)),
      static_cast<long long>(o.observe_lag_ms.ValueAtPercentile(95)),
      static_cast<long long>(o.observe_lag_ms.max()), ToSeconds(o.budget_wait),
      static_cast<long long>(d.ValueAtPercentile(50)),
      static_cast<long long>(d.ValueAtPercentile(90)),
      static_cast<long long>(d.ValueAtPercentile(99)), static_cast<long long>(d.max()),
      r.harness_usage.cpu_user_s + r.harness_usage.cpu_system_s, r.harness_usage.wall_s,
      r.harness_usage.peak_rss_bytes / 1048576.0);
  // Every run created is followed to its end (a loaded machine may send
  // fewer than asked within the spread: those were never created).
  EXPECT_EQ(static_cast<size_t>(finished), r.runs.size());
  EXPECT_GE(r.runs.size(), static_cast<size_t>(runs) * 9 / 10);
  if (!options.observe_each_run) {
    EXPECT_LE(o.Calls(), uint64_t(4) * runs);
  }
}

TEST(RunFollower, NeverExceedsTheObserverBudget) {
  HarnessOptions options;
  options.poll_interval = std::chrono::milliseconds(100);
  options.observer_qps = 20;
  options.drain_timeout = std::chrono::seconds(60);
  constexpr int kRuns = 40;
  Measured m = RunOpenLoop(kRuns, "200ms", std::chrono::seconds(1), options);
  const results::BenchmarkResults& r = m.results;
  ASSERT_EQ(r.runs.size(), size_t{kRuns});
  for (const auto& run : r.runs) ASSERT_TRUE(run.Finished()) << run.error;
  // Per second of the observer's time series, never more than the budget
  // (one more where a second's boundary splits two calls' spacing).
  std::map<int64_t, uint64_t> per_second;
  for (const auto& [name, op] : r.observer.operations) {
    for (const auto& w : op.windows) per_second[w.second] += w.count;
  }
  ASSERT_FALSE(per_second.empty());
  for (const auto& [second, n] : per_second) EXPECT_LE(n, 22u) << "second " << second;
  // Listing while ending runs wait their turn widens `observed`, which the
  // summary says; the durations stay the server's.
  EXPECT_EQ(r.observer.observe_lag_ms.count(), uint64_t{kRuns});
  EXPECT_GT(r.observer.budget_wait, Duration::zero());
}

TEST(RunFollower, InFlightFilterNamesTheStatesStillRunning) {
  const std::string f = InFlightFilter();
  EXPECT_THAT(f, HasSubstr("\"state\""));
  EXPECT_THAT(f, HasSubstr("RUNNING"));
  EXPECT_THAT(f, Not(HasSubstr("SUCCEEDED")));
}

}  // namespace
}  // namespace kfpbench::harness
