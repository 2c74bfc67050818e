#include "report/compare.h"

#include <cmath>
#include <random>

#include <fmt/format.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report/repetitions.h"
#include "report/test_support.h"
#include "results/test_support.h"

namespace kfpbench::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
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
  EXPECT_LT(p95.detectable, 0.05);
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
  o.bootstrap_iterations = 200;  // raised to 40 / alpha = 800
  int flagged = 0, significant = 0;
  for (uint64_t trial = 0; trial < 40; ++trial) {
    auto c =
        Compare(Repetitions(1000 + 2 * trial, 20, 1.0), Repetitions(1001 + 2 * trial, 20, 1.0), o);
    ASSERT_TRUE(c.ok());
    if (c->regressed) ++flagged;
    const auto& p95 = Find(*c, "GetRun", "p95");
    if (p95.ci_low > 0 || p95.ci_high < 0) ++significant;
  }
  // Flagged: a regression that makes `compare` exit 1.
  EXPECT_LE(flagged, 2);
  // The interval alone is calibrated: about alpha x 40 = 2 trials are
  // significant by chance; 6 is above the binomial's 99th percentile.
  EXPECT_LE(significant, 6);
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
  o.min_effect = 0.3;
  same = Compare({base}, {base}, o);
  EXPECT_EQ(Find(*same, "GetRun", "p95").verdict, ChangeVerdict::kNoChange);
}

TEST(Compare, FormatsAndRejectsBadOptions) {
  CompareOptions o;
  auto c = Compare(Repetitions(1, 5, 1.0), Repetitions(2, 5, 2.0), o);
  ASSERT_TRUE(c.ok());
  EXPECT_THAT(ComparisonText(*c, o), HasSubstr("GetRun"));
  EXPECT_THAT(ComparisonText(*c, o), HasSubstr("REGRESSION"));
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
  EXPECT_LE(p50.p_value, 1.0 / 2000);  // no resample of 2,000 on the far side of 0
  EXPECT_LT(p50.detectable, 0.05);
  EXPECT_NEAR(p50.change, 0.5, 0.05);
  EXPECT_EQ(p50.verdict, ChangeVerdict::kRegressed);
  EXPECT_TRUE(c->regressed);
  std::string text = ComparisonText(*c, o);
  EXPECT_THAT(text, HasSubstr("3 vs 3 repetition(s)")) << text;
  EXPECT_THAT(text, HasSubstr("verdict: REGRESSION")) << text;
  // Unchanged runs: a pass the test had the power to refuse.
  auto same = Compare({base}, {RepeatedRuns(3, 900)}, o);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(Find(*same, "run_duration", "p50").verdict, ChangeVerdict::kNoChange);
  // 60 runs are too few for p95 (100) and p99 (500): not tested, not gated.
  EXPECT_EQ(Find(*same, "run_duration", "p95").verdict, ChangeVerdict::kNotTested);
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
  EXPECT_THAT(text, HasSubstr("repetition k against repetition k as a block")) << text;
  EXPECT_THAT(text, HasSubstr("verdict: REGRESSION")) << text;
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
  EXPECT_THAT(text,
              HasSubstr("INCONCLUSIVE: run_duration cannot detect a 5% change with these samples "
                        "(3 vs 3 blocks, as the repetitions differ): the smallest it detects is +"))
      << text;
  EXPECT_THAT(text, HasSubstr("verdict: INCONCLUSIVE")) << text;
  auto j = ComparisonJson(*c, o);
  EXPECT_EQ(j["inconclusive"], true);
  EXPECT_EQ(j["changes"][0]["sample"], "blocks");
  EXPECT_THAT(ComparisonMarkdown(*c, o), HasSubstr("inconclusive"));
}

// Sides with different numbers of repetitions have no blocks to pair: one
// value per repetition in Welch's t test, where 3 against 2 this spread
// cannot show 5%.
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
  EXPECT_GT(p50.detectable, 1.0);
  EXPECT_LE(p50.ci_low, p50.change);
  EXPECT_GE(p50.ci_high, p50.change);
  EXPECT_EQ(p50.verdict, ChangeVerdict::kInconclusive);
  std::string text = ComparisonText(*c, o);
  EXPECT_THAT(text,
              HasSubstr("INCONCLUSIVE: run_duration cannot detect a 5% change with these samples "
                        "(3 vs 2 repetitions, as the repetitions differ): the smallest it detects "
                        "is +"))
      << text;
  EXPECT_THAT(text, HasSubstr("Welch t test")) << text;
}

// Issue 39, the three contradictions, on runs that sleep 300 ms x 3.
results::BenchmarkResults ExactRuns(uint64_t seed, double ms, int runs = 60) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> over(0, 1);
  results::BenchmarkResults r;
  r.started = WallTime(std::chrono::seconds(1700000000));
  r.finished = r.started + std::chrono::minutes(1);
  for (int i = 0; i < runs; ++i) {
    results::RunRecord run;
    run.run_id = fmt::format("run-{}", i);
    run.state = RuntimeState::kSucceeded;
    run.created = r.started + std::chrono::seconds(i);
    run.finished = run.created + std::chrono::milliseconds(static_cast<int64_t>(ms) + over(rng));
    r.runs.push_back(std::move(run));
  }
  return r;
}

// +50.0% printed with [+49.6%, +49.7%]: the estimate came from the exact
// mean, the interval from bucket edges.
TEST(Compare, EveryEstimateLiesInItsOwnInterval) {
  CompareOptions o;
  for (auto [base, cand] : {std::pair{ExactRuns(1, 900), ExactRuns(2, 1350)},
                            std::pair{RepeatedRuns(1, 900), RepeatedRuns(2, 1350)}}) {
    auto c = Compare({base}, {cand}, o);
    ASSERT_TRUE(c.ok());
    for (const auto& m : c->changes) {
      if (m.verdict == ChangeVerdict::kNotTested) continue;
      EXPECT_LE(m.ci_low, m.change) << m.metric << " " << m.stat;
      EXPECT_GE(m.ci_high, m.change) << m.metric << " " << m.stat;
      EXPECT_NEAR(m.change, 0.5, 0.03) << m.metric << " " << m.stat;
    }
  }
}

// An interval excluding 0 beside "no significant change": the verdict is
// read from the interval, and a real change within --min-effect says so.
TEST(Compare, AVerdictNeverContradictsItsInterval) {
  CompareOptions o;
  auto c = Compare(Repetitions(1, 20, 1.0), Repetitions(2, 20, 1.03), o);
  ASSERT_TRUE(c.ok());
  const auto& p50 = Find(*c, "GetRun", "p50");
  EXPECT_GT(p50.ci_low, 0);
  EXPECT_EQ(p50.verdict, ChangeVerdict::kUnderMinEffect);
  EXPECT_FALSE(p50.fails);
  EXPECT_THAT(VerdictName(p50.verdict), Not(HasSubstr("no significant")));
  for (uint64_t seed = 0; seed < 6; ++seed) {
    auto d =
        Compare(Repetitions(10 + seed, 20, 1.0), Repetitions(20 + seed, 20, 1.0 + 0.01 * seed), o);
    ASSERT_TRUE(d.ok());
    for (const auto& m : d->changes) {
      if (m.verdict == ChangeVerdict::kNotTested) continue;
      bool excludes = m.ci_low > 0 || m.ci_high < 0;
      bool changed = m.verdict == ChangeVerdict::kRegressed ||
                     m.verdict == ChangeVerdict::kImproved ||
                     m.verdict == ChangeVerdict::kUnderMinEffect;
      EXPECT_EQ(excludes, changed)
          << m.stat << " [" << m.ci_low << ", " << m.ci_high << "] " << VerdictName(m.verdict);
      EXPECT_EQ(excludes, m.p_value < o.alpha) << m.stat << " p " << m.p_value;
    }
  }
}

// Baseline mean 900 ms beside p50 903 ms, for runs of 900-901 ms: the p50
// was the upper edge of its histogram bucket, the mean exact.
TEST(Compare, APercentileAndTheMeanOfOneSampleAgree) {
  auto c = Compare({ExactRuns(1, 900)}, {ExactRuns(2, 900)}, CompareOptions{});
  ASSERT_TRUE(c.ok());
  const auto& p50 = Find(*c, "run_duration", "p50");
  const auto& mean = Find(*c, "run_duration", "mean");
  EXPECT_GE(p50.baseline, 900);
  EXPECT_LT(p50.baseline, 901);
  EXPECT_NEAR(mean.baseline, 900.5, 0.2);
  EXPECT_LE(p50.ci_low, p50.change);
  EXPECT_GE(p50.ci_high, p50.change);
  EXPECT_FALSE(c->regressed);
}

// Issue 39: an A/A comparison of a smoke run (the README's CI gate) exited 3
// on the two pipeline uploads a repetition. Set-up operations are shown but
// not gated; --metric says what the gate is about.
std::vector<results::BenchmarkResults> SmokeLike(uint64_t seed, double scale) {
  auto reps = Repetitions(seed, 3, scale);
  std::mt19937_64 rng(seed + 100);
  std::lognormal_distribution<double> noisy(std::log(20000.0), 1.0);
  std::lognormal_distribution<double> get(std::log(5000.0), 0.5);
  for (auto& r : reps) {
    for (int i = 0; i < 3000; ++i) {
      r.operations["GetRun"].latency_us.Record(static_cast<int64_t>(get(rng) * scale));
    }
    for (int i = 0; i < 2; ++i) {
      r.operations["UploadPipeline"].latency_us.Record(static_cast<int64_t>(noisy(rng)));
    }
    for (int i = 0; i < 40; ++i) {
      r.operations["CreateRun"].latency_us.Record(static_cast<int64_t>(noisy(rng)));
    }
  }
  return reps;
}

TEST(Compare, SetUpOperationsAreShownButNotGated) {
  CompareOptions o;
  auto c = Compare(SmokeLike(1, 1.0), SmokeLike(2, 1.0), o);
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_EQ(c->set_up.size(), 1u);
  EXPECT_EQ(c->set_up[0], "UploadPipeline (2 vs 2 calls a repetition)");
  for (const auto& m : c->changes) {
    if (m.metric == "UploadPipeline") {
      EXPECT_FALSE(m.gated);
      EXPECT_EQ(m.verdict, ChangeVerdict::kNotTested);  // 6 values a side
    }
  }
  // CreateRun's 120 noisy calls cannot show 5%: inconclusive, said so.
  EXPECT_EQ(Find(*c, "CreateRun", "p50").verdict, ChangeVerdict::kInconclusive);
  EXPECT_TRUE(c->inconclusive);
  std::string text = ComparisonText(*c, o);
  EXPECT_THAT(text, HasSubstr("gate: every row but set-up operations")) << text;
  EXPECT_THAT(text, HasSubstr("UploadPipeline (under 10 values a side)")) << text;
  // Named, the gate is about GetRun's p50 alone: CreateRun is shown, not gated.
  o.gate = {"GetRun:p50"};
  c = Compare(SmokeLike(1, 1.0), SmokeLike(2, 1.0), o);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(Find(*c, "CreateRun", "p50").gated);
  EXPECT_TRUE(Find(*c, "GetRun", "p50").gated);
  EXPECT_FALSE(Find(*c, "GetRun", "p95").gated);
  EXPECT_FALSE(c->inconclusive) << ComparisonText(*c, o);
  EXPECT_FALSE(c->regressed);
  text = ComparisonText(*c, o);
  EXPECT_THAT(text, HasSubstr("gate (--metric): GetRun:p50")) << text;
  EXPECT_THAT(text, HasSubstr("inconclusive (not gated)")) << text;
  // A slower candidate fails the same gate.
  EXPECT_TRUE(Compare(SmokeLike(1, 1.0), SmokeLike(2, 1.5), o)->regressed);
  // A statistic named but not testable is inconclusive, not a pass.
  o.gate = {"UploadPipeline:p50"};
  c = Compare(SmokeLike(1, 1.0), SmokeLike(2, 1.0), o);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->inconclusive);
  EXPECT_THAT(ComparisonText(*c, o),
              HasSubstr("INCONCLUSIVE: UploadPipeline:p50 (under 10 values a "
                        "side) is named by the gate but was not tested"));
}

TEST(Compare, TheGateNamesWhatWasMeasuredOrIsRefused) {
  CompareOptions o;
  o.gate = {"GetRunn"};
  auto c = Compare(SmokeLike(1, 1.0), SmokeLike(2, 1.0), o);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.error().message, HasSubstr("neither side measured GetRunn (measured: run_duration, "
                                           "CreateRun, GetRun, UploadPipeline)"))
      << c.error().message;
  o.gate = {"GetRun:p90"};
  EXPECT_FALSE(Compare(SmokeLike(1, 1.0), SmokeLike(2, 1.0), o).ok());
  // Unnamed, the scenario's latency thresholds are the gate.
  auto base = SmokeLike(1, 1.0), cand = SmokeLike(2, 1.0);
  cand.front().scenario_source = {{"thresholds", {{"GetRun", {"p95 < 50ms", "error_rate < 5%"}}}},
                                  {"scenarios", nlohmann::json::array()}};
  c = Compare(base, cand, CompareOptions{});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->gate_from, "the scenario's thresholds");
  ASSERT_EQ(c->gate.size(), 1u);
  EXPECT_EQ(c->gate[0], "GetRun:p95");
  EXPECT_FALSE(Find(*c, "CreateRun", "p50").gated);
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
  EXPECT_THAT(ComparisonText(*c, {}), HasSubstr("steeper (FAIL)"));
  auto back = Compare({steep}, {flat}, {});
  ASSERT_TRUE(back.ok());
  EXPECT_FALSE(back->regressed);
}

}  // namespace
}  // namespace kfpbench::report
