#include "report/merge.h"

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

TEST(Merge, OfOnePartIsThatPart) {
  auto a = results::testing::SyntheticResults(3);
  auto m = MergeResults({a});
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(results::ResultsToJson(*m), results::ResultsToJson(a));
}

TEST(Merge, OfNothingIsAnError) { EXPECT_FALSE(MergeResults({}).ok()); }

}  // namespace
}  // namespace kfpbench::report
