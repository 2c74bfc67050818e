#include "report/compare.h"

#include <algorithm>
#include <cmath>

#include <limits>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/repetitions.h"
#include "report/thresholds.h"
#include "results/blocks.h"
#include "results/stats.h"
#include "util/percentile.h"

namespace kfpbench::report {
namespace {

using results::BenchmarkResults;
using results::WeightedSample;

struct StatDef {
  const char* name;
  double percentile;  // < 0: mean
};
constexpr StatDef kStats[] = {{"p50", 50}, {"p95", 95}, {"p99", 99}, {"mean", -1}};

double OfSample(const WeightedSample& w, const StatDef& s) {
  return s.percentile < 0 ? results::MeanOf(w) : results::PercentileOf(w, s.percentile);
}

// A repetition's figure, read from its values as the pooled test reads them.
double OfHistogram(const metrics::Histogram& h, const StatDef& s, double scale) {
  return OfSample(results::FromHistogram(h, scale), s);
}

// The fewest values a side needs before the bootstrap of a statistic says
// anything: 10 for the median and the mean, and for a tail percentile at
// least 5 values beyond it (100 for p95, 500 for p99), since a resampled p99
// of 60 calls is only ever their largest few.
constexpr uint64_t kFewestValues = 10;
constexpr double kTailValues = 5;
uint64_t FewestValuesFor(const StatDef& s) {
  if (s.percentile < 0 || s.percentile <= 50) return kFewestValues;
  return std::max<uint64_t>(
      kFewestValues, static_cast<uint64_t>(std::ceil(kTailValues * 100 / (100 - s.percentile))));
}

// An operation called fewer times than this a repetition, on average, on
// either side is set-up (the pipeline upload, creating the experiment), not
// load: shown, but it decides the exit code only when named with --metric.
constexpr double kSetUpCallsPerRepetition = 10;

// One metric on one side: a histogram per repetition (one when the side is a
// single benchmark) and their exact merge.
struct Side {
  std::vector<metrics::Histogram> repetitions;
  metrics::Histogram pooled;
};

// The repetitions a side offers: the summaries `run --repeat` keeps, one per
// folder of a side, or the side itself as one.
std::vector<results::RepetitionSummary> SummariesOf(const std::vector<BenchmarkResults>& side) {
  auto reps = RepetitionsOf(side);
  if (reps.empty()) {
    for (const auto& r : side) reps.push_back(Summarize(r));
  }
  return reps;
}

Side SideOf(const std::vector<results::RepetitionSummary>& reps, const std::string& metric) {
  Side out;
  for (const auto& r : reps) {
    metrics::Histogram h;
    if (metric == "run_duration") {
      h = r.run_duration_ms;
    } else if (auto it = r.latency_us.find(metric); it != r.latency_us.end()) {
      h = it->second;
    }
    out.pooled.Merge(h);
    out.repetitions.push_back(std::move(h));
  }
  return out;
}

// Repetitions differ when a Kruskal-Wallis test says they do and their
// medians lie further apart than the smallest change the gate acts on: the
// calls of one repetition are then not interchangeable with another's, and
// only the repetitions themselves are independent samples.
bool RepetitionsDiffer(const Side& side, double scale, const CompareOptions& o) {
  if (side.repetitions.size() < 2) return false;
  std::vector<WeightedSample> groups;
  double low = std::numeric_limits<double>::infinity(), high = 0;
  for (const auto& h : side.repetitions) {
    if (h.count() == 0) continue;
    groups.push_back(results::FromHistogram(h, scale));
    double median = static_cast<double>(h.ValueAtPercentile(50));
    low = std::min(low, median);
    high = std::max(high, median);
  }
  if (groups.size() < 2 || low <= 0) return false;
  return results::KruskalWallisP(groups) < o.alpha && high / low - 1 > o.min_effect;
}

// Below the histogram's resolution a slowdown only moves values between
// neighbouring buckets, where ties hide it: no test over buckets (or over
// figures read from them) can claim a finer one, however tight the values.
constexpr double kResolution = 1.0 / (1 << metrics::Histogram::kSubBucketBits);

// Repetition k of the baseline beside repetition k of the candidate, when
// both sides ran as many (the same place in `--repeat`'s sequence, so the
// same state accumulated before it): the blocks of BlockedLogRatioTest.
// Pairs where either side has no value are left out; none without 2 pairs.
using Block = std::pair<const metrics::Histogram*, const metrics::Histogram*>;
std::optional<std::vector<Block>> PairedBlocks(const Side& base, const Side& cand) {
  if (base.repetitions.size() != cand.repetitions.size()) return std::nullopt;
  std::vector<Block> out;
  for (size_t k = 0; k < base.repetitions.size(); ++k) {
    if (base.repetitions[k].count() > 0 && cand.repetitions[k].count() > 0) {
      out.emplace_back(&base.repetitions[k], &cand.repetitions[k]);
    }
  }
  if (out.size() < 2) return std::nullopt;
  return out;
}

// Every verdict is read from the row's own interval (at 1 - alpha), so the
// estimate, the interval and the verdict never disagree.
ChangeVerdict VerdictOf(const MetricChange& c, const CompareOptions& o) {
  if (c.ci_low > 0 || c.ci_high < 0) {
    // A change must also be at least the minimum effect to be called one: a
    // 0.5% shift that is real is still no change anyone should act on.
    if (std::abs(c.change) > o.min_effect) {
      return c.change > 0 ? ChangeVerdict::kRegressed : ChangeVerdict::kImproved;
    }
    return ChangeVerdict::kUnderMinEffect;
  }
  // Nothing found by a test that could not have found the change the gate
  // is about: that is not a pass.
  if (!(c.detectable <= o.min_effect)) return ChangeVerdict::kInconclusive;
  return ChangeVerdict::kNoChange;
}

// Every statistic of one metric, over the calls or runs of all repetitions
// pooled (one bootstrap, as the statistics share the sample), or, when the
// repetitions differ, over one value per repetition (a t test on logs).
void JudgeMetric(const std::string& metric, const std::string& kind, const Side& base,
                 const Side& cand, double scale, const CompareOptions& o, uint64_t& seed,
                 std::vector<MetricChange>& out) {
  std::vector<MetricChange> rows;
  for (const auto& s : kStats) {
    MetricChange c;
    c.metric = metric;
    c.stat = s.name;
    c.sample = kind;
    c.n_baseline = base.pooled.count();
    c.n_candidate = cand.pooled.count();
    rows.push_back(c);
  }
  if (base.pooled.count() < kFewestValues || cand.pooled.count() < kFewestValues) {
    for (auto& c : rows) {
      c.not_tested = fmt::format("under {} values a side", kFewestValues);
      out.push_back(std::move(c));
    }
    seed += std::size(kStats);
    return;
  }
  const double confidence = 1 - o.alpha;
  bool differ = RepetitionsDiffer(base, scale, o) || RepetitionsDiffer(cand, scale, o);
  if (!differ) {
    auto a = results::FromHistogram(base.pooled, scale);
    auto b = results::FromHistogram(cand.pooled, scale);
    std::vector<std::function<double(const WeightedSample&)>> statistics;
    for (const auto& s : kStats) {
      statistics.push_back([s](const WeightedSample& w) { return OfSample(w, s); });
    }
    // Enough resamples that the smallest p they can show (one in n) is far
    // below alpha.
    const int iterations =
        std::max(o.bootstrap_iterations, static_cast<int>(std::ceil(40 / o.alpha)));
    auto changes = results::BootstrapChanges(a, b, statistics, confidence, iterations, seed);
    seed += std::size(kStats);
    for (size_t k = 0; k < rows.size(); ++k) {
      auto& c = rows[k];
      const uint64_t fewest = FewestValuesFor(kStats[k]);
      if (a.Count() < fewest || b.Count() < fewest) {
        c.not_tested = fmt::format("under {} values a side", fewest);
        continue;
      }
      c.baseline = OfSample(a, kStats[k]);
      c.candidate = OfSample(b, kStats[k]);
      c.change = changes[k].estimate;
      c.ci_low = changes[k].interval.low;
      c.ci_high = changes[k].interval.high;
      c.p_value = changes[k].p;
      c.detectable =
          std::max(results::DetectableShift(changes[k].log_spread, o.alpha), kResolution);
      c.verdict = VerdictOf(c, o);
    }
  } else {
    // Repetition k against repetition k when both sides ran as many; else
    // the sides' repetitions as two unpaired samples.
    auto blocks = PairedBlocks(base, cand);
    for (size_t k = 0; k < rows.size(); ++k) {
      auto& c = rows[k];
      std::vector<double> va, vb;
      results::BlockedChange t;
      if (blocks) {
        for (auto [base_rep, cand_rep] : *blocks) {
          va.push_back(OfHistogram(*base_rep, kStats[k], scale));
          vb.push_back(OfHistogram(*cand_rep, kStats[k], scale));
        }
        t = results::BlockedLogRatioTest(va, vb, confidence);
        c.sample = "blocks";
        c.n_baseline = c.n_candidate = blocks->size();
      } else {
        for (const auto& h : base.repetitions) {
          if (h.count()) va.push_back(OfHistogram(h, kStats[k], scale));
        }
        for (const auto& h : cand.repetitions) {
          if (h.count()) vb.push_back(OfHistogram(h, kStats[k], scale));
        }
        t = results::WelchLogRatioTest(va, vb, confidence);
        c.sample = "repetitions";
        c.n_baseline = va.size();
        c.n_candidate = vb.size();
      }
      c.repetitions_differ = true;
      // Geometric means, so that candidate / baseline - 1 is the change.
      auto geometric = [](const std::vector<double>& v) {
        double logs = 0;
        for (double x : v) logs += std::log(x);
        return v.empty() ? 0 : std::exp(logs / static_cast<double>(v.size()));
      };
      c.baseline = geometric(va);
      c.candidate = geometric(vb);
      c.change = t.change;
      c.ci_low = t.interval.low;
      c.ci_high = t.interval.high;
      c.p_value = t.p;
      // Infinite when the test had too few values (or one that was not positive).
      c.detectable = std::max(results::DetectableLogShift(t.error, t.df, o.alpha), kResolution);
      c.verdict = VerdictOf(c, o);
    }
    seed += std::size(kStats);
  }
  for (auto& c : rows) out.push_back(std::move(c));
}

std::string Pct(double f) { return fmt::format("{:+.1f}%", f * 100); }

std::string DetectableText(double d) {
  if (!std::isfinite(d)) return "none";
  return d < 0.0005 ? "<0.1%" : fmt::format("{:+.1f}%", d * 100);  // not "+0.0%"
}

std::string SamplesText(const Comparison& c) {
  auto any = [&c](std::string_view sample) {
    return std::any_of(c.changes.begin(), c.changes.end(),
                       [sample](const MetricChange& m) { return m.sample == sample; });
  };
  std::string where;
  if (any("blocks")) {
    where +=
        "; where a side's repetitions differ, repetition k against repetition k as a block "
        "(t test of the log ratios)";
  }
  if (any("repetitions")) {
    where += "; where they differ unpaired, one value per repetition (Welch t test of the logs)";
  }
  return fmt::format("the calls and runs of {} vs {} repetition(s), pooled (bootstrap){}",
                     c.baseline_repetitions, c.candidate_repetitions, where);
}

// Said loudly, one line per metric: which gated rows could not have found a
// regression of --min-effect, at what sizes, and what they could find.
std::vector<std::string> InconclusiveLines(const Comparison& c, const CompareOptions& o) {
  std::vector<std::string> out;
  std::set<std::string> said;
  for (const auto& m : c.changes) {
    if (!m.gated || m.verdict != ChangeVerdict::kInconclusive || !said.insert(m.metric).second) {
      continue;
    }
    out.push_back(fmt::format(
        "INCONCLUSIVE: {} cannot detect a {:.0f}% change with these samples ({} vs {} {}{}): {}",
        m.metric, o.min_effect * 100, m.n_baseline, m.n_candidate, m.sample,
        m.repetitions_differ ? ", as the repetitions differ" : "",
        std::isfinite(m.detectable)
            ? fmt::format("the smallest it detects is {}", DetectableText(m.detectable))
            : std::string("no change of any size could reach significance")));
  }
  for (const auto& u : c.untested) {
    out.push_back(fmt::format("INCONCLUSIVE: {} is named by the gate but was not tested", u));
  }
  return out;
}

// The rows not tested, a metric whole when none of its rows was.
std::vector<std::string> NotTested(const Comparison& c) {
  std::map<std::string, std::vector<const MetricChange*>> by_metric;
  for (const auto& m : c.changes) {
    if (m.verdict == ChangeVerdict::kNotTested && m.n_baseline + m.n_candidate > 0) {
      by_metric[m.metric].push_back(&m);
    }
  }
  std::vector<std::string> out;
  for (const auto& [metric, rows] : by_metric) {
    if (rows.size() == std::size(kStats)) {
      out.push_back(fmt::format("{} ({})", metric, rows.front()->not_tested));
      continue;
    }
    for (const auto* m : rows)
      out.push_back(fmt::format("{} {} ({})", metric, m->stat, m->not_tested));
  }
  return out;
}

std::string GateText(const Comparison& c) {
  std::string out;
  if (!c.gate.empty()) {
    out = fmt::format("gate ({}): {}; the other rows are shown, not gated", c.gate_from,
                      fmt::join(c.gate, ", "));
  } else {
    out = "gate: every row";
    if (!c.set_up.empty()) {
      out += fmt::format(
          " but set-up operations (under {:g} calls a repetition; --metric names "
          "one to gate it): {}",
          kSetUpCallsPerRepetition, fmt::join(c.set_up, ", "));
    }
  }
  return out;
}

std::string VerdictCell(const MetricChange& m) {
  return fmt::format("{}{}", VerdictName(m.verdict),
                     m.fails   ? " (FAIL)"
                     : m.gated ? ""
                               : " (not gated)");
}

std::string GateVerdict(const Comparison& c) {
  if (c.regressed) return "REGRESSION";
  if (c.inconclusive) return "INCONCLUSIVE (these samples cannot show a regression)";
  return "no failing regression";
}

}  // namespace

std::string_view VerdictName(ChangeVerdict v) {
  switch (v) {
    case ChangeVerdict::kImproved:
      return "improved";
    case ChangeVerdict::kRegressed:
      return "regressed";
    case ChangeVerdict::kUnderMinEffect:
      return "change under --min-effect";
    case ChangeVerdict::kNoChange:
      return "no significant change";
    case ChangeVerdict::kInconclusive:
      return "inconclusive";
    case ChangeVerdict::kNotTested:
      return "not tested";
  }
  return "";
}

namespace {

const std::vector<results::GrowthCurve>* FirstGrowth(const std::vector<BenchmarkResults>& side) {
  for (const auto& r : side) {
    if (!r.growth.empty()) return &r.growth;
  }
  return nullptr;
}

std::vector<GrowthChange> CompareGrowth(const std::vector<BenchmarkResults>& baseline,
                                        const std::vector<BenchmarkResults>& candidate) {
  std::vector<GrowthChange> out;
  const auto* base = FirstGrowth(baseline);
  const auto* cand = FirstGrowth(candidate);
  if (base == nullptr || cand == nullptr) return out;
  for (const auto& b : *base) {
    for (const auto& c : *cand) {
      if (b.scenario != c.scenario) continue;
      auto base_fits = b.Fits();
      for (const auto& [op, cf] : c.Fits()) {
        auto bf = base_fits.find(op);
        if (bf == base_fits.end()) continue;
        for (const char* stat : {"p50", "p99"}) {
          const auto& x = std::string(stat) == "p50" ? bf->second.p50 : bf->second.p99;
          const auto& y = std::string(stat) == "p50" ? cf.p50 : cf.p99;
          if (!x || !y) continue;
          GrowthChange g{.scenario = b.scenario,
                         .metric = op,
                         .stat = stat,
                         .baseline = *x,
                         .candidate = *y,
                         .steeper = x->exponent_high && y->exponent_low &&
                                    *y->exponent_low > *x->exponent_high};
          out.push_back(std::move(g));
        }
      }
    }
  }
  return out;
}

std::string ExponentText(const results::PowerLawFit& f) {
  if (!f.exponent_low) return fmt::format("{:.2f}", f.exponent);
  return fmt::format("{:.2f} [{:.2f}, {:.2f}]", f.exponent, *f.exponent_low, *f.exponent_high);
}

}  // namespace

namespace {

// What decides the exit code: (metric, stat) pairs, stat empty for every
// statistic of the metric; none: every row but set-up operations.
struct Gate {
  std::set<std::pair<std::string, std::string>> rows;
  std::string from;
};

bool IsStat(std::string_view name) {
  return std::any_of(std::begin(kStats), std::end(kStats),
                     [name](const StatDef& s) { return name == s.name; });
}

Result<Gate> GateOf(const CompareOptions& o, const BenchmarkResults& candidate,
                    const std::set<std::string>& ops) {
  Gate gate;
  auto known = [&ops](const std::string& m) { return m == "run_duration" || ops.contains(m); };
  if (!o.gate.empty()) {
    gate.from = "--metric";
    for (const auto& named : o.gate) {
      std::string metric = named, stat;
      if (auto colon = named.rfind(':'); colon != std::string::npos && !known(named)) {
        metric = named.substr(0, colon);
        stat = named.substr(colon + 1);
        if (!IsStat(stat)) {
          return Error{
              fmt::format("--metric {}: {} is not a statistic compare tests (p50, p95, "
                          "p99, mean)",
                          named, stat)};
        }
      }
      if (!known(metric)) {
        return Error{
            fmt::format("--metric {}: neither side measured {} (measured: run_duration{}{})", named,
                        metric, ops.empty() ? "" : ", ", fmt::join(ops, ", "))};
      }
      gate.rows.insert({metric, stat});
    }
    return gate;
  }
  // The scenario's own latency thresholds say what it is about.
  auto thresholds = ParseThresholds(ThresholdsOf(candidate));
  if (!thresholds.ok()) return gate;  // the run refused such a file; compare judges every row
  for (const auto& t : *thresholds) {
    if (t.kind != ThresholdKind::kLatency || !known(t.metric)) continue;
    std::string stat = t.stat == "avg" ? "mean" : t.stat;
    gate.rows.insert({t.metric, IsStat(stat) ? stat : ""});
  }
  if (!gate.rows.empty()) gate.from = "the scenario's thresholds";
  return gate;
}

// Operations called fewer than kSetUpCallsPerRepetition times a repetition,
// on average, on either side.
std::set<std::string> SetUpOperations(const std::vector<results::RepetitionSummary>& base,
                                      const std::vector<results::RepetitionSummary>& cand,
                                      const std::set<std::string>& ops) {
  std::set<std::string> out;
  for (const auto& op : ops) {
    for (const auto* reps : {&base, &cand}) {
      double calls = static_cast<double>(SideOf(*reps, op).pooled.count());
      if (calls < kSetUpCallsPerRepetition * static_cast<double>(reps->size())) out.insert(op);
    }
  }
  return out;
}

}  // namespace

Result<Comparison> Compare(const std::vector<BenchmarkResults>& baseline,
                           const std::vector<BenchmarkResults>& candidate,
                           const CompareOptions& o) {
  if (baseline.empty() || candidate.empty()) return Error{"compare needs results on both sides"};
  if (!(o.alpha > 0 && o.alpha < 1)) return Error{"--alpha must be between 0 and 1"};
  if (o.min_effect < 0) return Error{"--min-effect must not be negative"};
  auto base_reps = SummariesOf(baseline);
  auto cand_reps = SummariesOf(candidate);
  std::set<std::string> ops;
  for (const auto* side : {&baseline, &candidate}) {
    for (const auto& r : *side) {
      for (const auto& [name, op] : r.operations) ops.insert(name);
    }
  }
  Comparison out;
  out.baseline_repetitions = base_reps.size();
  out.candidate_repetitions = cand_reps.size();
  uint64_t seed = o.seed;
  for (const auto& op : ops) {
    JudgeMetric(op, "calls", SideOf(base_reps, op), SideOf(cand_reps, op), 1.0 / 1000, o, seed,
                out.changes);
  }
  JudgeMetric("run_duration", "runs", SideOf(base_reps, "run_duration"),
              SideOf(cand_reps, "run_duration"), 1, o, seed, out.changes);
  auto gate = GateOf(o, candidate.front(), ops);
  if (!gate.ok()) return gate.error();
  out.gate_from = gate->from;
  for (const auto& [metric, stat] : gate->rows) {
    out.gate.push_back(stat.empty() ? metric : metric + ":" + stat);
  }
  std::set<std::string> set_up;
  if (gate->rows.empty()) set_up = SetUpOperations(base_reps, cand_reps, ops);
  for (const auto& op : set_up) {
    auto per = [&](const std::vector<results::RepetitionSummary>& reps) {
      return static_cast<double>(SideOf(reps, op).pooled.count()) /
             static_cast<double>(std::max<size_t>(reps.size(), 1));
    };
    out.set_up.push_back(fmt::format("{} ({:.2g} vs {:.2g} calls a repetition)", op, per(base_reps),
                                     per(cand_reps)));
  }
  for (auto& c : out.changes) {
    if (!gate->rows.empty()) {
      c.gated = gate->rows.contains({c.metric, ""}) || gate->rows.contains({c.metric, c.stat});
      // A statistic the gate names by name must be answered: not tested is
      // not a pass. A metric named whole gates the statistics it can test.
      if (c.verdict == ChangeVerdict::kNotTested && gate->rows.contains({c.metric, c.stat})) {
        out.inconclusive = true;
        out.untested.push_back(fmt::format("{}:{} ({})", c.metric, c.stat, c.not_tested));
      }
    } else {
      c.gated = !set_up.contains(c.metric);
    }
    c.fails = c.gated && c.verdict == ChangeVerdict::kRegressed;
    out.regressed |= c.fails;
    out.inconclusive |= c.gated && c.verdict == ChangeVerdict::kInconclusive;
  }
  out.growth = CompareGrowth(baseline, candidate);
  for (const auto& g : out.growth) out.regressed |= g.steeper;
  out.inconclusive &= !out.regressed;
  return out;
}

std::string ComparisonText(const Comparison& c, const CompareOptions& o) {
  std::string out =
      fmt::format("{:<20} {:<5} {:>10} {:>10} {:>8} {:>19} {:>8} {:>8}  {}\n", "metric", "stat",
                  "baseline", "candidate", "change", fmt::format("{:g}% CI", (1 - o.alpha) * 100),
                  "p", "detects", "verdict");
  for (const auto& m : c.changes) {
    if (m.verdict == ChangeVerdict::kNotTested) continue;
    out += fmt::format("{:<20} {:<5} {:>10} {:>10} {:>8} {:>19} {:>8.3g} {:>8}  {}\n", m.metric,
                       m.stat, FormatMillis(m.baseline), FormatMillis(m.candidate), Pct(m.change),
                       fmt::format("[{}, {}]", Pct(m.ci_low), Pct(m.ci_high)), m.p_value,
                       DetectableText(m.detectable), VerdictCell(m));
  }
  if (!c.growth.empty()) {
    out += fmt::format("\n{:<22} {:<5} {:>24} {:>24}  {}\n", "growth exponent", "stat",
                       "baseline [95% CI]", "candidate [95% CI]", "verdict");
    for (const auto& g : c.growth) {
      out += fmt::format("{:<22} {:<5} {:>24} {:>24}  {}\n", g.metric, g.stat,
                         ExponentText(g.baseline), ExponentText(g.candidate),
                         g.steeper ? "steeper (FAIL)" : "not steeper");
    }
  }
  out += fmt::format(
      "\nOver {}; a change is significant when its interval excludes 0 (p < {:g}); \"detects\": "
      "the smallest slowdown found 4 times in 5 at these sample sizes; a regression fails above "
      "{:.1f}%\n",
      SamplesText(c), o.alpha, o.min_effect * 100);
  if (auto not_tested = NotTested(c); !not_tested.empty()) {
    out += fmt::format("not tested: {}\n", fmt::join(not_tested, ", "));
  }
  out += GateText(c) + "\n";
  for (const auto& line : InconclusiveLines(c, o)) out += line + "\n";
  out += fmt::format("verdict: {}\n", GateVerdict(c));
  return out;
}

std::string ComparisonMarkdown(const Comparison& c, const CompareOptions& o) {
  std::string out =
      fmt::format("### kfpbench compare — {}\n\n", c.regressed      ? "❌ regression"
                                                   : c.inconclusive ? "⚠️ inconclusive"
                                                                    : "✅ no failing regression");
  out += fmt::format(
      "| metric | stat | baseline | candidate | change | {:g}% CI | p | detects | verdict |\n",
      (1 - o.alpha) * 100);
  out += "|---|---|---:|---:|---:|---:|---:|---:|---|\n";
  for (const auto& m : c.changes) {
    if (m.verdict == ChangeVerdict::kNotTested) continue;
    out += fmt::format("| {} | {} | {} | {} | {} | [{}, {}] | {:.3g} | {} | {}{} |\n", m.metric,
                       m.stat, FormatMillis(m.baseline), FormatMillis(m.candidate), Pct(m.change),
                       Pct(m.ci_low), Pct(m.ci_high), m.p_value, DetectableText(m.detectable),
                       m.fails ? "❌ " : "", VerdictCell(m));
  }
  out += fmt::format(
      "\nOver {}; significant when the interval excludes 0; a regression fails above {:.1f}%.\n",
      SamplesText(c), o.min_effect * 100);
  if (auto not_tested = NotTested(c); !not_tested.empty()) {
    out += fmt::format("Not tested: {}.\n", fmt::join(not_tested, ", "));
  }
  out += "\n" + GateText(c) + ".\n";
  for (const auto& line : InconclusiveLines(c, o)) out += "\n**" + line + "**\n";
  return out;
}

nlohmann::json ComparisonJson(const Comparison& c, const CompareOptions& o) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& m : c.changes) {
    rows.push_back({{"metric", m.metric},
                    {"stat", m.stat},
                    {"sample", m.sample},
                    {"n_baseline", m.n_baseline},
                    {"n_candidate", m.n_candidate},
                    {"baseline_ms", m.baseline},
                    {"candidate_ms", m.candidate},
                    {"change", m.change},
                    {"ci", {m.ci_low, m.ci_high}},
                    {"p_value", m.p_value},
                    {"detectable_change", std::isfinite(m.detectable) ? nlohmann::json(m.detectable)
                                                                      : nlohmann::json(nullptr)},
                    {"repetitions_differ", m.repetitions_differ},
                    {"verdict", VerdictName(m.verdict)},
                    {"not_tested", m.not_tested},
                    {"gated", m.gated},
                    {"fails", m.fails}});
  }
  nlohmann::json growth = nlohmann::json::array();
  for (const auto& g : c.growth) {
    auto side = [](const results::PowerLawFit& f) {
      return nlohmann::json{{"exponent", f.exponent},
                            {"exponent_low", f.exponent_low ? nlohmann::json(*f.exponent_low)
                                                            : nlohmann::json(nullptr)},
                            {"exponent_high", f.exponent_high ? nlohmann::json(*f.exponent_high)
                                                              : nlohmann::json(nullptr)}};
    };
    growth.push_back({{"scenario", g.scenario},
                      {"metric", g.metric},
                      {"stat", g.stat},
                      {"baseline", side(g.baseline)},
                      {"candidate", side(g.candidate)},
                      {"steeper", g.steeper}});
  }
  return {{"alpha", o.alpha},
          {"min_effect", o.min_effect},
          {"confidence", 1 - o.alpha},
          {"gate", c.gate},
          {"gate_from", c.gate_from},
          {"set_up", c.set_up},
          {"seed", o.seed},
          {"regressed", c.regressed},
          {"inconclusive", c.inconclusive},
          {"baseline_repetitions", c.baseline_repetitions},
          {"candidate_repetitions", c.candidate_repetitions},
          {"changes", std::move(rows)},
          {"growth", std::move(growth)}};
}

std::vector<std::string> ComparabilityWarnings(
    const std::vector<const results::BenchmarkResults*>& results,
    const std::vector<std::string>& names) {
  std::vector<std::string> out;
  if (results.size() < 2) return out;
  auto target = [](const results::BenchmarkResults& r) {
    return r.target.embedded ? std::string("the embedded backend")
                             : fmt::format("{} ({})", r.target.url, r.target.api_version);
  };
  const auto& first = *results.front();
  for (size_t i = 1; i < results.size(); ++i) {
    const auto& other = *results[i];
    if (other.scenario_source != first.scenario_source) {
      out.push_back(fmt::format("{} and {} ran different scenario files ({} and {})", names[0],
                                names[i], first.scenario_path, other.scenario_path));
    }
    if (target(other) != target(first)) {
      out.push_back(fmt::format("{} and {} ran against different targets ({} and {})", names[0],
                                names[i], target(first), target(other)));
    }
  }
  return out;
}

}  // namespace kfpbench::report
