#include "report/thresholds.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "results/test_support.h"

namespace kfpbench::report {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

// GetRun: 100 calls of 1..100 ms, 2 errors; 10 s elapsed; one run of 3 s.
results::BenchmarkResults Known() { return results::testing::Sample(); }

Verdict One(const std::string& metric, const std::string& expr) {
  auto v = EvaluateThresholds(Known(), json{{metric, {expr}}});
  EXPECT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v->size(), 1u);
  return v->front();
}

TEST(Thresholds, ParsesStatisticsOperatorsAndUnits) {
  auto t = ParseThreshold("CreateRun", "p95 < 500ms");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->percentile, 95);
  EXPECT_EQ(t->op, "<");
  EXPECT_DOUBLE_EQ(t->limit, 500);
  EXPECT_DOUBLE_EQ(ParseThreshold("x", "p999<=2s")->limit, 2000);
  EXPECT_DOUBLE_EQ(ParseThreshold("x", "p999<=2s")->percentile, 99.9);
  EXPECT_DOUBLE_EQ(ParseThreshold("x", "p(99.5) < 1m")->percentile, 99.5);
  EXPECT_DOUBLE_EQ(ParseThreshold("x", "max < 250us")->limit, 0.25);
  EXPECT_DOUBLE_EQ(ParseThreshold("x", "avg < 300")->limit, 300);  // bare = ms, as in k6
  EXPECT_DOUBLE_EQ(ParseThreshold("x", "error_rate < 1%")->limit, 0.01);
  EXPECT_DOUBLE_EQ(ParseThreshold("x", "error_rate <= 0.05")->limit, 0.05);
  EXPECT_DOUBLE_EQ(ParseThreshold("x", "count > 100")->limit, 100);
  EXPECT_DOUBLE_EQ(ParseThreshold("x", "rate >= 600/m")->limit, 10);
  EXPECT_DOUBLE_EQ(ParseThreshold("x", "rate > 10/s")->limit, 10);
  EXPECT_EQ(ParseThreshold("run_duration", "p99 < 10m")->limit, 600000);
}

TEST(Thresholds, BadExpressionsNameTheMetricAndTheExpression) {
  for (const auto& [expr, why] : std::vector<std::pair<std::string, std::string>>{
           {"p95 500ms", "expected STAT OP VALUE"},
           {"p95 == 500ms", "unsupported operator"},
           {"p95 < fast", "expected a duration"},
           {"p95 <", "missing value"},
           {"p101 < 1s", "unknown statistic"},
           {"median < 1s", "unknown statistic"},
           {"error_rate < 5", "percentage"},
           {"error_rate < 150%", "percentage"},
           {"count > many", "non-negative number"},
           {"rate > 10/d", "rate with its unit"},
           {"rate > 10", "rate with its unit"},  // per second or per minute? say it
           {"p95 < -1s", "expected a duration"},
           {"p95 < -1", "cannot be negative"},
       }) {
    auto t = ParseThreshold("CreateRun", expr);
    ASSERT_FALSE(t.ok()) << expr;
    EXPECT_THAT(t.error().message, HasSubstr("CreateRun")) << t.error().message;
    EXPECT_THAT(t.error().message, HasSubstr("\"" + expr + "\"")) << t.error().message;
    EXPECT_THAT(t.error().message, HasSubstr(why)) << t.error().message;
  }
  EXPECT_FALSE(ParseThreshold("queue_wait", "error_rate < 1%").ok());
}

TEST(Thresholds, EvaluatesObservedValuesAndMargins) {
  auto v = One("GetRun", "p95 < 50ms");  // p95 is 95 ms
  EXPECT_FALSE(v.passed);
  EXPECT_NEAR(v.observed, 95, 1);
  EXPECT_THAT(v.margin, HasSubstr("over the limit")) << v.margin;
  EXPECT_THAT(v.margin, HasSubstr("(9")) << v.margin;  // ~90% over
  v = One("GetRun", "p50 <= 1s");
  EXPECT_TRUE(v.passed);
  EXPECT_THAT(v.margin, HasSubstr("under the limit"));
  EXPECT_TRUE(One("GetRun", "error_rate < 3%").passed);
  v = One("GetRun", "error_rate < 1%");
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.observed_text, "2%");
  EXPECT_EQ(v.margin, "1 percentage point over the limit (observed is 2x the limit)");
  EXPECT_EQ(One("GetRun", "error_rate < 0.1%").margin,
            "1.9 percentage points over the limit (observed is 20x the limit)");
  EXPECT_TRUE(One("GetRun", "count >= 100").passed);
  v = One("GetRun", "count > 200");
  EXPECT_FALSE(v.passed);
  EXPECT_THAT(v.margin, HasSubstr("short of the limit"));
  EXPECT_TRUE(One("GetRun", "rate > 9.9/s").passed);  // 100 calls in 10 s
  EXPECT_FALSE(One("GetRun", "rate > 10/s").passed);
  EXPECT_TRUE(One("GetRun", "max <= 100ms").passed);
  EXPECT_TRUE(One("GetRun", "min < 2ms").passed);
  EXPECT_NEAR(One("GetRun", "mean > 0").observed, 50.5, 0.01);
  EXPECT_TRUE(One("run_duration", "p99 < 10m").passed);
  EXPECT_NEAR(One("run_duration", "max < 1h").observed, 3000, 1e-9);
  EXPECT_FALSE(One("run_duration", "error_rate < 10%").passed);  // 1 of 2 runs failed
  EXPECT_NEAR(One("queue_wait", "p50 < 1s").observed, 250, 1e-9);
  EXPECT_TRUE(One("run_duration", "count >= 1").passed);
}

TEST(Thresholds, MissingDataFailsInsteadOfPassingSilently) {
  auto v = One("DeleteRun", "p95 < 1s");
  EXPECT_FALSE(v.passed);
  EXPECT_FALSE(v.has_data);
  EXPECT_EQ(v.observed_text, "no data");
  EXPECT_FALSE(One("DeleteRun", "count > 0").passed);
  EXPECT_TRUE(One("DeleteRun", "count >= 0").passed);
}

// Issue 39: "ListRuns": ["p95 < 5ms"] with no ListRuns in the load was
// judged on kfpbench's own observer's listings. Thresholds judge the
// workload's calls: the observer's are no data, and the margin says why.
TEST(Thresholds, AnOperationOnlyTheObserverCalledIsNotJudgedOnItsCalls) {
  auto r = Known();
  for (int i = 0; i < 50; ++i) r.observer.operations["ListRuns"].latency_us.Record(1000);
  auto v = EvaluateThresholds(r, json{{"ListRuns", {"p95 < 5ms"}}});
  ASSERT_TRUE(v.ok());
  EXPECT_FALSE(v->front().passed);
  EXPECT_FALSE(v->front().has_data);
  EXPECT_EQ(v->front().margin,
            "the workload made no ListRuns call; only kfpbench's observer did (50 calls, not "
            "judged: thresholds judge the workload's calls)");
  // The workload's own calls are judged, whatever the observer made.
  r.operations["ListRuns"].latency_us.Record(2000);
  v = EvaluateThresholds(r, json{{"ListRuns", {"p95 < 5ms"}}});
  EXPECT_TRUE(v->front().passed);
}

TEST(Thresholds, AcceptsStringsListsAndK6ObjectsAndRejectsOtherShapes) {
  auto v = EvaluateThresholds(Known(), json::parse(R"({"GetRun": "p50 < 1s",
                               "run_duration": [{"threshold": "p99 < 10m"}]})"));
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v->size(), 2u);
  EXPECT_TRUE(AllPassed(*v));
  EXPECT_EQ(VerdictsToJson(*v).size(), 2u);
  EXPECT_TRUE(EvaluateThresholds(Known(), json())->empty());
  EXPECT_FALSE(EvaluateThresholds(Known(), json::array()).ok());
  auto bad = EvaluateThresholds(Known(), json{{"GetRun", {42}}});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("GetRun"));
  // One bad expression fails the whole evaluation.
  EXPECT_FALSE(EvaluateThresholds(Known(), json{{"GetRun", {"p50 < 1s", "p50 < soon"}}}).ok());
}

TEST(Thresholds, EveryProblemIsNamedBeforeAnyRun) {
  auto t = ParseThresholds(json::parse(R"({
    "GetRuns": ["p95 < 1s"],
    "http_req_failed": ["rate < 0.01"],
    "CreateRun": ["p95 < 500 ms", {"threshold": "p99 < 1s", "abortOnFail": true}],
    "ListRuns": [["p95 < 1s"]],
    "GetRun": ["p95 < 1s"]})"));
  ASSERT_FALSE(t.ok());
  const std::string& m = t.error().message;
  for (const char* expected :
       {"thresholds.GetRuns: no such metric", "thresholds.http_req_failed: no such metric",
        "thresholds.CreateRun: \"p95 < 500 ms\": '500 ms': expected a duration",
        "thresholds.CreateRun: abortOnFail: not supported",
        "thresholds.ListRuns: each threshold must be a string"}) {
    EXPECT_THAT(m, HasSubstr(expected)) << expected << "\n" << m;
  }
  EXPECT_EQ(std::count(m.begin(), m.end(), '\n'), 4) << m;  // five problems, GetRun is fine
  auto good = ParseThresholds(json::parse(R"({"GetRun": ["p95 < 1s", "rate > 600/m"],
                                              "run_duration": "p99 < 10m"})"));
  ASSERT_TRUE(good.ok()) << good.error().message;
  EXPECT_EQ(good->size(), 3u);
  EXPECT_DOUBLE_EQ((*good)[1].limit, 10);  // 600/m is 10/s
}

TEST(Thresholds, ComeFromTheScenarioSource) {
  auto r = results::testing::SyntheticResults(1);
  EXPECT_EQ(ThresholdsOf(r).size(), 2u);
  r.scenario_source = json::array();
  EXPECT_TRUE(ThresholdsOf(r).empty());
}

TEST(Thresholds, GrowthExponentJudgesTheFittedCurve) {
  auto r = Known();
  r.growth = {results::testing::SyntheticGrowth(0.6)};
  auto v = EvaluateThresholds(
      r, json{{"ListRuns", {"growth_exponent < 0.3"}}, {"GetRun", {"growth_exponent_p99 < 0.3"}}});
  ASSERT_TRUE(v.ok()) << v.error().message;
  ASSERT_EQ(v->size(), 2u);
  for (const auto& verdict : *v) {
    if (verdict.metric == "ListRuns") {
      EXPECT_FALSE(verdict.passed);
      EXPECT_NEAR(verdict.observed, 0.6, 0.05);
    } else {
      EXPECT_TRUE(verdict.passed) << verdict.observed_text;
    }
  }
  // In words: how latency grows, and what the limit allows, never a
  // difference of exponents ("0.373 (124%) under the limit").
  for (const auto& verdict : *v) {
    if (verdict.metric == "ListRuns") {
      EXPECT_EQ(verdict.margin,
                "p50 latency grows about in proportion as the runs stored grow: about runs^0.60, "
                "steeper than the limit of runs^0.30; ten times the runs stored multiply it by "
                "3.97 where the limit allows 2.00 (99% more) — FAILED");
      EXPECT_EQ(verdict.observed_text, "runs^0.60");
      EXPECT_EQ(verdict.limit_text, "runs^0.30");
    } else {
      EXPECT_EQ(verdict.margin,
                "p99 latency stays flat as the runs stored grow: about runs^0.00, within the "
                "limit of runs^0.30; ten times the runs stored multiply it by 1.00 where the "
                "limit allows 2.00 (50% less)");
    }
    EXPECT_THAT(verdict.margin, Not(HasSubstr("% under")));
  }
  // No growth scenario ran: nothing to judge, which fails.
  auto none = EvaluateThresholds(Known(), json{{"ListRuns", {"growth_exponent < 0.3"}}});
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->front().passed);
  EXPECT_EQ(none->front().observed_text, "no data");
  // The growth-only operations take growth statistics only, and only they do.
  EXPECT_TRUE(ParseThresholds(json{{"ListRuns:deep", {"growth_exponent < 1"}}}).ok());
  auto latency = ParseThresholds(json{{"ListRuns:deep", {"p95 < 1s"}}});
  ASSERT_FALSE(latency.ok());
  EXPECT_THAT(latency.error().message, HasSubstr("only growth_exponent"))
      << latency.error().message;
  auto not_growth = ParseThresholds(json{{"UploadPipeline", {"growth_exponent < 1"}}});
  ASSERT_FALSE(not_growth.ok());
  EXPECT_THAT(not_growth.error().message, HasSubstr("growth shape's operations only"))
      << not_growth.error().message;
  EXPECT_FALSE(ParseThresholds(json{{"ListRuns", {"growth_exponent < fast"}}}).ok());
}

}  // namespace
}  // namespace kfpbench::report
