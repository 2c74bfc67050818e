#include "report/repetitions.h"

#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report/compare.h"
#include "report/reporter.h"
#include "results/results_json.h"
#include "results/test_support.h"
#include "util/ids.h"

namespace kfpbench::report {
namespace {

using ::testing::HasSubstr;

namespace fs = std::filesystem;

TEST(Repetitions, CombinedHistogramsAreTheExactMergeAndSummariesRoundTrip) {
  std::vector<results::BenchmarkResults> reps;
  for (uint32_t i = 0; i < 3; ++i) reps.push_back(results::testing::SyntheticResults(10 + i));
  auto combined = CombineRepetitions(reps);
  ASSERT_TRUE(combined.ok()) << combined.error().message;
  metrics::Histogram expected;
  for (const auto& r : reps) expected.Merge(r.operations.at("GetRun").latency_us);
  EXPECT_EQ(combined->operations.at("GetRun").latency_us.count(), expected.count());
  EXPECT_EQ(combined->operations.at("GetRun").latency_us.ValueAtPercentile(95),
            expected.ValueAtPercentile(95));
  ASSERT_EQ(combined->repetitions.size(), 3u);
  EXPECT_EQ(combined->repetitions[1].latency_us.at("GetRun").ValueAtPercentile(99),
            reps[1].operations.at("GetRun").latency_us.ValueAtPercentile(99));
  EXPECT_EQ(combined->repetitions[2].run_duration_ms.count(), reps[2].RunDurationsMs().count());

  fs::path file = fs::temp_directory_path() / ("kfpbench-reps-" + NewUuid() + ".json");
  ASSERT_TRUE(JsonReporter(file).Report(*combined).ok());
  auto back = results::LoadResults(file);
  fs::remove(file);
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->repetitions.size(), 3u);
  EXPECT_EQ(back->repetitions[0].started, reps[0].started);
  EXPECT_EQ(back->repetitions[0].latency_us.at("CreateRun").count(),
            reps[0].operations.at("CreateRun").latency_us.count());
  EXPECT_EQ(back->repetitions[2].run_duration_ms.ValueAtPercentile(50),
            reps[2].RunDurationsMs().ValueAtPercentile(50));
}

TEST(Repetitions, BadRepetitionsAreErrorsNamingThePlace) {
  auto bad = results::RepetitionsFromJson({{{"started_at", ""}, {"latency_us", 3}}});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("repetitions[0].latency_us"));
  auto no_runs = results::RepetitionsFromJson({{{"latency_us", nlohmann::json::object()}}});
  ASSERT_FALSE(no_runs.ok());
  EXPECT_THAT(no_runs.error().message, HasSubstr("run_duration_ms"));
  EXPECT_FALSE(results::RepetitionsFromJson(nlohmann::json::object()).ok());
}

// One combined result per side tests over its repetitions, as several
// folders would.
TEST(Repetitions, CompareUsesTheRepetitionsOfACombinedResult) {
  std::vector<results::BenchmarkResults> base, cand;
  for (uint32_t i = 0; i < 8; ++i) {
    base.push_back(results::testing::SyntheticResults(100 + i, 10, 6));
    cand.push_back(results::testing::SyntheticResults(200 + i, 10, 6, 1.5));
  }
  auto b = CombineRepetitions(base);
  auto c = CombineRepetitions(cand);
  ASSERT_TRUE(b.ok() && c.ok());
  auto combined = Compare({*b}, {*c}, {});
  auto folders = Compare(base, cand, {});
  ASSERT_TRUE(combined.ok() && folders.ok());
  ASSERT_EQ(combined->changes.size(), folders->changes.size());
  for (size_t i = 0; i < combined->changes.size(); ++i) {
    const auto& m = combined->changes[i];
    // Alike repetitions: their calls and runs pool.
    EXPECT_EQ(m.sample, m.metric == "run_duration" ? "runs" : "calls") << m.metric << " " << m.stat;
    EXPECT_DOUBLE_EQ(m.p_value, folders->changes[i].p_value) << m.metric << " " << m.stat;
    EXPECT_DOUBLE_EQ(m.change, folders->changes[i].change);
  }
  EXPECT_TRUE(combined->regressed);
  // GetRun got 50% slower in every repetition: a regression at 8 vs 8.
  auto get_p95 = std::find_if(combined->changes.begin(), combined->changes.end(),
                              [](auto& m) { return m.metric == "GetRun" && m.stat == "p95"; });
  ASSERT_NE(get_p95, combined->changes.end());
  EXPECT_EQ(get_p95->verdict, ChangeVerdict::kRegressed);
  EXPECT_EQ(get_p95->n_baseline, 8u * 400);
}

}  // namespace
}  // namespace kfpbench::report
