#include "report/merge.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report/reporter.h"
#include "results/results_json.h"
#include "results/test_support.h"

namespace kfpbench::report {
namespace {

uint64_t WindowCount(const metrics::OperationStats& op) {
  uint64_t n = 0;
  for (const auto& w : op.windows) n += w.count;
  return n;
}

TEST(Merge, EqualsTheSumOfItsParts) {
  auto a = results::testing::SyntheticResults(1, 20, 10);
  auto b = results::testing::SyntheticResults(2, 30, 7);
  b.started += std::chrono::seconds(5);  // a second generator started later
  b.finished += std::chrono::seconds(5);
  b.partial = true;
  b.partial_reason = "interrupted";
  auto m = MergeResults({a, b});
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->started, a.started);
  EXPECT_EQ(m->finished, b.finished);
  EXPECT_TRUE(m->partial);
  EXPECT_EQ(m->partial_reason, "interrupted");
  EXPECT_EQ(m->runs.size(), a.runs.size() + b.runs.size());
  EXPECT_EQ(m->errors.size(), 2u);
  for (const auto& [name, op] : m->operations) {
    const auto& pa = a.operations.at(name);
    const auto& pb = b.operations.at(name);
    metrics::Histogram sum = pa.latency_us;
    sum.Merge(pb.latency_us);
    EXPECT_EQ(op.latency_us.ToJson(), sum.ToJson()) << name;
    EXPECT_EQ(op.errors, pa.errors + pb.errors);
    for (const auto& [status, n] : op.by_status) {
      uint64_t expected = (pa.by_status.contains(status) ? pa.by_status.at(status) : 0) +
                          (pb.by_status.contains(status) ? pb.by_status.at(status) : 0);
      EXPECT_EQ(n, expected) << name << " " << status;
    }
    EXPECT_EQ(WindowCount(op), WindowCount(pa) + WindowCount(pb));
    // b's second 0 is the merged second 5.
    EXPECT_EQ(op.windows.back().second, pb.windows.back().second + 5);
    for (const auto& w : op.windows) {
      EXPECT_LE(w.p50_us, w.p95_us);
      EXPECT_LE(w.p99_us, w.max_us);
    }
  }
  auto durations = a.RunDurationsMs();
  durations.Merge(b.RunDurationsMs());
  EXPECT_EQ(m->RunDurationsMs().ToJson(), durations.ToJson());
}

TEST(Merge, ShiftsTheWindowsOfAnOperationOnlyALaterPartHas) {
  auto a = results::testing::SyntheticResults(1);
  auto b = results::testing::SyntheticResults(2);
  b.started += std::chrono::seconds(5);
  b.operations["OnlyInB"] = b.operations.at("GetRun");
  auto m = MergeResults({a, b});
  ASSERT_TRUE(m.ok()) << m.error().message;
  const auto& windows = m->operations.at("OnlyInB").windows;
  ASSERT_FALSE(windows.empty());
  EXPECT_EQ(windows.front().second, b.operations.at("GetRun").windows.front().second + 5);
}

TEST(Merge, OfOnePartIsThatPart) {
  auto a = results::testing::SyntheticResults(3);
  auto m = MergeResults({a});
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(results::ResultsToJson(*m), results::ResultsToJson(a));
}

TEST(Merge, OfNothingIsAnError) { EXPECT_FALSE(MergeResults({}).ok()); }

// Every section of results.json set, as a run with every option writes it.
results::BenchmarkResults EverySectionSet() {
  auto r = results::testing::SyntheticResults(4);
  r.partial = true;
  r.partial_reason = "interrupted";
  r.time_scale = 0.05;
  r.scenarios = {{.index = 0, .mode = "LARGE_DATASET", .artifact_bytes = 1024}};
  r.benchmark_id = "kfpbench-1a2b3c4d";
  r.created = {.pipelines = 1, .experiments = 2, .runs = 12, .recurring_runs = 1};
  r.deleted = {.pipelines = 1, .experiments = 2, .runs = 11, .recurring_runs = 1};
  r.kept = true;
  r.resent_requests = 3;
  r.cleanup_failures = {"run r9: HTTP 500"};
  r.stress_steps = {{.scenario = 0, .rate_per_minute = 60, .runs = 5, .p95_ms = 900, .held = true}};
  r.stress_stops = {
      {.scenario = 0, .reason = results::StressStopReason::kSloBroken, .detail = "at 120/min"}};
  r.schedules = {{.scenario = 1, .recurring_runs = 1, .expected_fires = 4, .observed_fires = 3}};
  r.growth = {results::testing::SyntheticGrowth(0.5, 2)};
  r.growth[0].stopped_because = "interrupted";
  r.observer.qps_budget = 20;
  r.observer.poll_interval = std::chrono::milliseconds(500);
  r.observer.operations["ListRuns"] = r.operations.at("ListRuns");
  r.observer.list_sweeps = 7;
  r.observer.runs_by_listing = 11;
  r.observer.polling_reason = "ListRuns refused";
  r.observer.observe_lag_ms.Record(40);
  r.observer.budget_wait = std::chrono::milliseconds(12);
  r.harness_usage = {.wall_s = 20,
                     .cpu_user_s = 1,
                     .cpu_system_s = 0.5,
                     .peak_rss_bytes = 1 << 20,
                     .rss_bytes = 1 << 19,
                     .threads = 9};
  r.back_pressure.waits = 2;
  r.back_pressure.waited = std::chrono::milliseconds(300);
  r.back_pressure.by_operation["GetRun"] = 2;
  r.collectors = nlohmann::json::array({{{"phase", "start"}, {"output", {{"nodes", 3}}}}});
  r.pod_lifecycle.collected = true;
  r.pod_lifecycle.context = "kind";
  r.pod_lifecycle.kubectl_calls = 4;
  results::RepetitionSummary rep;
  rep.started = r.started;
  rep.finished = r.finished;
  rep.run_duration_ms.Record(900);
  r.repetitions = {rep, rep};
  return r;
}

// A field the merge forgot would be dropped here: one part merged is that
// part, in every section.
TEST(Merge, OfOnePartKeepsEverySection) {
  auto a = EverySectionSet();
  auto m = MergeResults({a});
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(results::ResultsToJson(*m).dump(1), results::ResultsToJson(a).dump(1));
}

// `run --repeat N --time-scale X` wrote time_scale 1.0 in the merged results.
TEST(Merge, KeepsTheTimeScale) {
  auto a = results::testing::SyntheticResults(1);
  auto b = results::testing::SyntheticResults(2);
  a.time_scale = b.time_scale = 0.05;
  auto m = MergeResults({a, b});
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->time_scale, 0.05);
}

TEST(Merge, RefusesPartsOfDifferentTimeScales) {
  auto a = results::testing::SyntheticResults(1);
  auto b = results::testing::SyntheticResults(2);
  b.time_scale = 0.5;
  auto m = MergeResults({a, b});
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.error().message, ::testing::HasSubstr("time_scale: 1.0 in one part and 0.5"));
}

// Two parts: sums add, peaks are the larger, lists append, keyed sections
// merge by key, and the shard becomes the whole.
TEST(Merge, EachFieldByItsRule) {
  auto a = EverySectionSet();
  auto b = EverySectionSet();
  b.shard_index = 1;
  b.shard_count = 2;
  b.harness_usage.threads = 20;
  b.benchmark_id = "kfpbench-5e6f7a8b";
  b.schedules[0].scenario = 3;
  auto m = MergeResults({a, b});
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->shard_index, 0);
  EXPECT_EQ(m->shard_count, 1);
  EXPECT_EQ(m->created.runs, 24);
  EXPECT_EQ(m->resent_requests, 6u);
  EXPECT_EQ(m->harness_usage.threads, 20);
  EXPECT_EQ(m->harness_usage.wall_s, 40);
  EXPECT_EQ(m->benchmark_id, "kfpbench-1a2b3c4d kfpbench-5e6f7a8b");
  EXPECT_EQ(m->partial_reason, "interrupted; interrupted");
  EXPECT_EQ(m->observer.qps_budget, 20);
  EXPECT_EQ(m->observer.list_sweeps, 14u);
  EXPECT_EQ(m->observer.operations.at("ListRuns").latency_us.count(),
            2 * a.observer.operations.at("ListRuns").latency_us.count());
  EXPECT_EQ(m->back_pressure.by_operation.at("GetRun"), 4u);
  EXPECT_EQ(m->stress_steps.size(), 2u);
  EXPECT_EQ(m->schedules.size(), 2u);
  ASSERT_EQ(m->growth.size(), 1u);  // the same scenario: merged level by level
  ASSERT_EQ(m->growth[0].levels.size(), a.growth[0].levels.size());
  EXPECT_EQ(m->growth[0].levels[0].latency_us.at("ListRuns").count(), 40u);
  EXPECT_EQ(m->growth[0].levels[0].runs_stored, a.growth[0].levels[0].runs_stored);
  EXPECT_EQ(m->collectors.size(), 2u);
  EXPECT_EQ(m->pod_lifecycle.kubectl_calls, 8);
  EXPECT_EQ(m->repetitions.size(), 4u);
  EXPECT_EQ(m->scenarios.size(), 1u);
  EXPECT_EQ(m->time_scale, 0.05);
}

}  // namespace
}  // namespace kfpbench::report
