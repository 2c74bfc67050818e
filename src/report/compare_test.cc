#include "report/compare.h"

#include <cmath>
#include <random>

#include <fmt/format.h>

#include <gtest/gtest.h>

#include "report/repetitions.h"
#include "report/test_support.h"
#include "results/test_support.h"

namespace kfpbench::report {
namespace {

using testing::RepeatedRuns;

// One repetition: GetRun latencies drawn from a lognormal around 5 ms, times `scale`.
results::BenchmarkResults Repetition(std::mt19937_64& rng, double scale) {
  std::lognormal_distribution<double> us(std::log(5000.0), 0.5);
  results::BenchmarkResults r;
  auto& h = r.operations["GetRun"].latency_us;
  for (int i = 0; i < 1000; ++i) h.Record(static_cast<int64_t>(us(rng) * scale));
  return r;
}

std::vector<results::BenchmarkResults> Repetitions(uint64_t seed, int n, double scale) {
  std::mt19937_64 rng(seed);
  std::vector<results::BenchmarkResults> out;
  for (int i = 0; i < n; ++i) out.push_back(Repetition(rng, scale));
  return out;
}

const MetricChange& Find(const Comparison& c, const std::string& metric, const std::string& stat) {
  for (const auto& m : c.changes) {
    if (m.metric == metric && m.stat == stat) return m;
  }
  static MetricChange none;
  ADD_FAILURE() << "no " << metric << " " << stat;
  return none;
}

TEST(Compare, DetectsATenPercentShiftOfP95WithTwentyRepetitions) {
  CompareOptions o;
  auto c = Compare(Repetitions(1, 20, 1.0), Repetitions(2, 20, 1.1), o);
  ASSERT_TRUE(c.ok()) << c.error().message;
  const auto& p95 = Find(*c, "GetRun", "p95");
  // The repetitions are alike, so their calls pool.
  EXPECT_EQ(p95.sample, "calls");
  EXPECT_EQ(p95.n_baseline, 20000u);
  EXPECT_LT(p95.detectable, 0.02);
  EXPECT_EQ(p95.verdict, ChangeVerdict::kRegressed) << p95.p_value;
  EXPECT_LT(p95.p_value, 0.01);
  EXPECT_NEAR(p95.change, 0.10, 0.04);
  EXPECT_LT(p95.ci_low, p95.change);
  EXPECT_GT(p95.ci_high, p95.change);
  EXPECT_GT(p95.ci_low, 0);
  EXPECT_TRUE(p95.fails);  // 10% > the default 5% minimum effect
  EXPECT_TRUE(c->regressed);
  // The same shift the other way is an improvement, which never fails.
  auto better = Compare(Repetitions(2, 20, 1.1), Repetitions(1, 20, 1.0), o);
  EXPECT_EQ(Find(*better, "GetRun", "p95").verdict, ChangeVerdict::kImproved);
  EXPECT_FALSE(better->regressed);
  // A larger minimum effect lets the 10% regression pass.
  o.min_effect = 0.2;
  EXPECT_FALSE(Compare(Repetitions(1, 20, 1.0), Repetitions(2, 20, 1.1), o)->regressed);
}

TEST(Compare, SameDistributionIsFlaggedInAtMostFivePercentOfTrials) {
  CompareOptions o;
  o.bootstrap_iterations = 50;  // the interval plays no part in the verdict
  int flagged = 0, significant = 0;
  for (uint64_t trial = 0; trial < 100; ++trial) {
    auto c =
        Compare(Repetitions(1000 + 2 * trial, 20, 1.0), Repetitions(1001 + 2 * trial, 20, 1.0), o);
    ASSERT_TRUE(c.ok());
    if (c->regressed) ++flagged;
    if (Find(*c, "GetRun", "p95").verdict != ChangeVerdict::kNoChange) ++significant;
  }
  // Flagged: a regression that makes `compare` exit 1.
  EXPECT_LE(flagged, 5);
  // The U test alone is calibrated: about alpha x 100 = 5 trials are
  // significant by chance; 10 is above the binomial's 97th percentile.
  EXPECT_LE(significant, 10);
}

TEST(Compare, OneRepetitionUsesCallsAndRuns) {
  auto base = results::testing::SyntheticResults(1, 30, 20, 1.0);
  auto slower = results::testing::SyntheticResults(2, 30, 20, 1.5);
  CompareOptions o;
  auto c = Compare({base}, {slower}, o);
  ASSERT_TRUE(c.ok());
  const auto& p50 = Find(*c, "GetRun", "p50");
  EXPECT_EQ(p50.sample, "calls");
  EXPECT_EQ(p50.n_baseline, 1200u);
  EXPECT_EQ(p50.verdict, ChangeVerdict::kRegressed);
  EXPECT_EQ(Find(*c, "GetRun", "mean").verdict, ChangeVerdict::kRegressed);
  const auto& runs = Find(*c, "run_duration", "p50");
  EXPECT_EQ(runs.sample, "runs");
  EXPECT_EQ(runs.verdict, ChangeVerdict::kRegressed);
  EXPECT_TRUE(c->regressed);
  auto same = Compare({base}, {base}, o);
  EXPECT_FALSE(same->regressed);
  // 1,200 calls this spread (lognormal, sigma 0.5) cannot show a 5% change;
  // a 10% one they can.
  const auto& get = Find(*same, "GetRun", "p95");
  EXPECT_EQ(get.verdict, ChangeVerdict::kInconclusive);
  EXPECT_GT(get.detectable, 0.05);
  EXPECT_TRUE(same->inconclusive);
  o.min_effect = 0.1;
  same = Compare({base}, {base}, o);
  EXPECT_EQ(Find(*same, "GetRun", "p95").verdict, ChangeVerdict::kNoChange);
}

TEST(Compare, FormatsAndRejectsBadOptions) {
  CompareOptions o;
  auto c = Compare(Repetitions(1, 5, 1.0), Repetitions(2, 5, 2.0), o);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(ComparisonText(*c, o).find("GetRun"), std::string::npos);
  EXPECT_NE(ComparisonText(*c, o).find("REGRESSION"), std::string::npos);
  EXPECT_TRUE(ComparisonMarkdown(*c, o).starts_with("### kfpbench compare — ❌ regression"));
  auto j = ComparisonJson(*c, o);
  EXPECT_EQ(j["regressed"], true);
  EXPECT_EQ(j["changes"][0]["metric"], "GetRun");
  o.alpha = 0;
  EXPECT_FALSE(Compare(Repetitions(1, 5, 1.0), Repetitions(2, 5, 1.0), o).ok());
  EXPECT_FALSE(Compare({}, Repetitions(2, 5, 1.0), CompareOptions{}).ok());
}

// Issue 29: runs slowed from 900 ms to 1.35 s, --repeat 3 on each side. The
// 3 repetition summaries a side could never reach p < 0.05; their 60 runs do.
TEST(Compare, ASlowdownRepeatedThreeTimesIsCaughtOverTheRuns) {
  auto base = RepeatedRuns(1, 900), slower = RepeatedRuns(2, 1350);
  ASSERT_EQ(base.repetitions.size(), 3u);
  CompareOptions o;
  auto c = Compare({base}, {slower}, o);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->baseline_repetitions, 3u);
  EXPECT_EQ(c->candidate_repetitions, 3u);
  const auto& p50 = Find(*c, "run_duration", "p50");
  EXPECT_EQ(p50.sample, "runs");
  EXPECT_EQ(p50.n_baseline, 60u);
  EXPECT_LT(p50.p_value, 1e-10);
  EXPECT_LT(p50.detectable, 0.05);
  EXPECT_NEAR(p50.change, 0.5, 0.05);
  EXPECT_EQ(p50.verdict, ChangeVerdict::kRegressed);
  EXPECT_TRUE(c->regressed);
  std::string text = ComparisonText(*c, o);
  EXPECT_NE(text.find("3 vs 3 repetition(s)"), std::string::npos) << text;
  EXPECT_NE(text.find("verdict: REGRESSION"), std::string::npos) << text;
  // Unchanged runs: a pass the test had the power to refuse.
  auto same = Compare({base}, {RepeatedRuns(3, 900)}, o);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(Find(*same, "run_duration", "p95").verdict, ChangeVerdict::kNoChange);
  EXPECT_FALSE(same->regressed);
  EXPECT_FALSE(same->inconclusive);
}

// When the repetitions differ from one another by more than --min-effect,
// their runs do not pool; repetition k of each side is a block. Differences
// both sides share (the same place in --repeat's sequence) cancel: the
// slowdown is caught over 3 blocks.
TEST(Compare, RepetitionsThatDifferAlikeOnBothSidesAreComparedAsBlocks) {
  auto base = RepeatedRuns(1, 900, {0.8, 1.0, 1.25});
  auto slower = RepeatedRuns(2, 1350, {0.8, 1.0, 1.25});
  CompareOptions o;
  auto c = Compare({base}, {slower}, o);
  ASSERT_TRUE(c.ok());
  const auto& p50 = Find(*c, "run_duration", "p50");
  EXPECT_EQ(p50.sample, "blocks");
  EXPECT_TRUE(p50.repetitions_differ);
  EXPECT_EQ(p50.n_baseline, 3u);
  EXPECT_NEAR(p50.change, 0.5, 0.05);
  EXPECT_LT(p50.p_value, 0.01);
  EXPECT_LT(p50.detectable, 0.05);
  EXPECT_EQ(p50.verdict, ChangeVerdict::kRegressed);
  EXPECT_TRUE(c->regressed);
  std::string text = ComparisonText(*c, o);
  EXPECT_NE(text.find("repetition k against repetition k as a block"), std::string::npos) << text;
  EXPECT_NE(text.find("verdict: REGRESSION"), std::string::npos) << text;
  // Nothing slower: the blocks have the power to say so.
  auto same = Compare({base}, {RepeatedRuns(3, 900, {0.8, 1.0, 1.25})}, o);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(Find(*same, "run_duration", "p50").verdict, ChangeVerdict::kNoChange);
  EXPECT_FALSE(same->regressed);
}

// Differences the sides do not share widen the blocks' ratios: 3 blocks
// cannot then show a 5% change, and the comparison says what they could
// show instead of passing.
TEST(Compare, RepetitionsThatDifferUnlikeLeaveThreeBlocksInconclusive) {
  auto base = RepeatedRuns(1, 900, {0.8, 1.0, 1.25});
  auto slower = RepeatedRuns(2, 1350, {1.25, 0.8, 1.0});
  CompareOptions o;
  auto c = Compare({base}, {slower}, o);
  ASSERT_TRUE(c.ok());
  const auto& p50 = Find(*c, "run_duration", "p50");
  EXPECT_EQ(p50.sample, "blocks");
  EXPECT_GT(p50.p_value, 0.05);
  EXPECT_GT(p50.detectable, 1.0);
  EXPECT_TRUE(std::isfinite(p50.detectable));
  EXPECT_EQ(p50.verdict, ChangeVerdict::kInconclusive);
  EXPECT_FALSE(c->regressed);
  EXPECT_TRUE(c->inconclusive);
  std::string text = ComparisonText(*c, o);
  EXPECT_NE(text.find("INCONCLUSIVE: run_duration cannot detect a 5% change with these samples "
                      "(3 vs 3 blocks, as the repetitions differ): the smallest it detects is +"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("verdict: INCONCLUSIVE"), std::string::npos) << text;
  auto j = ComparisonJson(*c, o);
  EXPECT_EQ(j["inconclusive"], true);
  EXPECT_EQ(j["changes"][0]["sample"], "blocks");
  EXPECT_NE(ComparisonMarkdown(*c, o).find("inconclusive"), std::string::npos);
}

// Sides with different numbers of repetitions have no blocks to pair: one
// value per repetition, where 3 against 2 never reach p < 0.05.
TEST(Compare, RepetitionsThatDifferWithoutPartnersAreSamplesAndInconclusive) {
  auto base = RepeatedRuns(1, 900, {0.8, 1.0, 1.25});
  auto slower = RepeatedRuns(2, 1350, {0.8, 1.0});
  CompareOptions o;
  auto c = Compare({base}, {slower}, o);
  ASSERT_TRUE(c.ok());
  const auto& p50 = Find(*c, "run_duration", "p50");
  EXPECT_EQ(p50.sample, "repetitions");
  EXPECT_EQ(p50.n_baseline, 3u);
  EXPECT_EQ(p50.n_candidate, 2u);
  EXPECT_TRUE(std::isinf(p50.detectable));
  EXPECT_EQ(p50.verdict, ChangeVerdict::kInconclusive);
  std::string text = ComparisonText(*c, o);
  EXPECT_NE(text.find("INCONCLUSIVE: run_duration cannot detect a 5% change with these samples "
                      "(3 vs 2 repetitions, as the repetitions differ): no change of any size "
                      "could reach significance"),
            std::string::npos)
      << text;
  auto j = ComparisonJson(*c, o);
  EXPECT_TRUE(j["changes"][0]["detectable_change"].is_null());
}

}  // namespace
}  // namespace kfpbench::report

namespace kfpbench::report {
namespace {

TEST(Comparability, WarnsAboutOtherScenariosAndTargets) {
  results::BenchmarkResults a, b;
  a.scenario_source = nlohmann::json::parse(R"([{"mode": "RANDOM_GETS", "runTime": 1}])");
  a.scenario_path = "gets.json";
  a.target.embedded = true;
  a.target.url = "http://127.0.0.1:40001";
  b = a;
  b.target.url = "http://127.0.0.1:40002";  // another port of the embedded backend: the same
  EXPECT_TRUE(ComparabilityWarnings({&a, &b}, {"A", "B"}).empty());
  b.scenario_source[0]["runTime"] = 2;
  b.scenario_path = "gets2.json";
  b.target = {"https://kfp.example.com", false, "v2beta1", nullptr};
  auto w = ComparabilityWarnings({&a, &b}, {"A", "B"});
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0], "A and B ran different scenario files (gets.json and gets2.json)");
  EXPECT_EQ(w[1],
            "A and B ran against different targets (the embedded backend and "
            "https://kfp.example.com (v2beta1))");
}

TEST(Compare, AGrowthCurveThatGotSteeperIsARegression) {
  results::BenchmarkResults flat, steep;
  flat.growth = {results::testing::SyntheticGrowth(0.05)};
  steep.growth = {results::testing::SyntheticGrowth(0.9)};
  auto c = Compare({flat}, {steep}, {});
  ASSERT_TRUE(c.ok()) << c.error().message;
  bool found = false;
  for (const auto& g : c->growth) {
    if (g.metric == "ListRuns" && g.stat == "p50") {
      found = true;
      EXPECT_TRUE(g.steeper);
      EXPECT_NEAR(g.candidate.exponent, 0.9, 0.05);
    }
    if (g.metric == "GetRun") {
      EXPECT_FALSE(g.steeper);
    }
  }
  EXPECT_TRUE(found);
  EXPECT_TRUE(c->regressed);
  EXPECT_NE(ComparisonText(*c, {}).find("steeper (FAIL)"), std::string::npos);
  auto back = Compare({steep}, {flat}, {});
  ASSERT_TRUE(back.ok());
  EXPECT_FALSE(back->regressed);
}

}  // namespace
}  // namespace kfpbench::report
