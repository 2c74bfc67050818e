#include "report/compare.h"

#include <cmath>

#include <set>

#include <fmt/format.h>

#include "report/repetitions.h"
#include "results/stats.h"
#include "util/percentile.h"

namespace kfpbench::report {
namespace {

using results::BenchmarkResults;

struct StatDef {
  const char* name;
  double percentile;  // < 0: mean
};
constexpr StatDef kStats[] = {{"p50", 50}, {"p95", 95}, {"p99", 99}, {"mean", -1}};

double OfHistogram(const metrics::Histogram& h, const StatDef& s) {
  return s.percentile < 0 ? h.mean() : static_cast<double>(h.ValueAtPercentile(s.percentile));
}

double OfValues(const std::vector<double>& v, const StatDef& s) {
  return s.percentile < 0 ? results::Mean(v) : Percentile(v, s.percentile);
}

// The samples one side contributes for one statistic, in ms.
struct Samples {
  std::string kind;
  std::vector<double> values;
  std::function<double(const std::vector<double>&)> statistic;
};

Samples OperationSamples(const std::vector<BenchmarkResults>& side,
                         const std::vector<results::RepetitionSummary>& reps, const std::string& op,
                         const StatDef& s, bool repetitions) {
  Samples out;
  if (repetitions) {
    out.kind = "repetitions";
    for (const auto& r : reps) {
      auto it = r.latency_us.find(op);
      if (it != r.latency_us.end() && it->second.count()) {
        out.values.push_back(OfHistogram(it->second, s) / 1000);
      }
    }
    out.statistic = [](const std::vector<double>& v) { return results::Mean(v); };
    return out;
  }
  out.kind = "windows";
  out.statistic = [](const std::vector<double>& v) { return Percentile(v, 50); };
  if (s.percentile < 0) return out;  // windows keep no mean
  for (const auto& r : side) {
    auto it = r.operations.find(op);
    if (it == r.operations.end()) continue;
    for (const auto& w : it->second.windows) {
      if (w.count == 0) continue;
      int64_t v = s.percentile == 50 ? w.p50_us : s.percentile == 95 ? w.p95_us : w.p99_us;
      out.values.push_back(static_cast<double>(v) / 1000);
    }
  }
  return out;
}

Samples RunSamples(const std::vector<BenchmarkResults>& side,
                   const std::vector<results::RepetitionSummary>& reps, const StatDef& s,
                   bool repetitions) {
  Samples out;
  if (repetitions) {
    out.kind = "repetitions";
    for (const auto& r : reps) {
      if (r.run_duration_ms.count()) out.values.push_back(OfHistogram(r.run_duration_ms, s));
    }
    out.statistic = [](const std::vector<double>& v) { return results::Mean(v); };
    return out;
  }
  out.kind = "runs";
  for (const auto& r : side) {
    for (const auto& run : r.runs) {
      if (run.Finished()) {
        out.values.push_back(std::chrono::duration<double, std::milli>(run.RunDuration()).count());
      }
    }
  }
  out.statistic = [s](const std::vector<double>& v) { return OfValues(v, s); };
  return out;
}

MetricChange Judge(const std::string& metric, const StatDef& s, const Samples& base,
                   const Samples& cand, const CompareOptions& o, uint64_t seed) {
  MetricChange c;
  c.metric = metric;
  c.stat = s.name;
  c.sample = base.kind;
  c.n_baseline = base.values.size();
  c.n_candidate = cand.values.size();
  // Fewer than 2 values a side can't show variation, so nothing is claimed.
  if (c.n_baseline < 2 || c.n_candidate < 2) return c;
  c.baseline = base.statistic(base.values);
  c.candidate = cand.statistic(cand.values);
  c.change = c.baseline != 0 ? c.candidate / c.baseline - 1 : 0;
  auto ci = results::BootstrapRelativeChange(base.values, cand.values, base.statistic, o.confidence,
                                             o.bootstrap_iterations, seed);
  c.ci_low = ci.low;
  c.ci_high = ci.high;
  c.p_value = results::MannWhitneyU(cand.values, base.values).p;
  // A change must be both statistically significant and at least the minimum
  // effect to be called one: a 0.5% shift that is real is still no change
  // anyone should act on.
  if (c.p_value >= o.alpha || std::abs(c.change) <= o.min_effect) {
    c.verdict = ChangeVerdict::kNoChange;
  } else {
    c.verdict = c.change > 0 ? ChangeVerdict::kRegressed : ChangeVerdict::kImproved;
  }
  c.fails = c.verdict == ChangeVerdict::kRegressed;
  return c;
}

std::string Pct(double f) { return fmt::format("{:+.1f}%", f * 100); }

}  // namespace

std::string_view VerdictName(ChangeVerdict v) {
  switch (v) {
    case ChangeVerdict::kImproved:
      return "improved";
    case ChangeVerdict::kRegressed:
      return "regressed";
    case ChangeVerdict::kNoChange:
      return "no significant change";
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

Result<Comparison> Compare(const std::vector<BenchmarkResults>& baseline,
                           const std::vector<BenchmarkResults>& candidate,
                           const CompareOptions& o) {
  if (baseline.empty() || candidate.empty()) return Error{"compare needs results on both sides"};
  if (!(o.alpha > 0 && o.alpha < 1)) return Error{"--alpha must be between 0 and 1"};
  if (o.min_effect < 0) return Error{"--min-effect must not be negative"};
  // Repetitions are folders of a side, or the summaries `run --repeat` keeps
  // in its combined results.
  auto base_reps = RepetitionsOf(baseline);
  auto cand_reps = RepetitionsOf(candidate);
  bool repetitions = base_reps.size() >= 2 && cand_reps.size() >= 2;
  std::set<std::string> ops;
  for (const auto* side : {&baseline, &candidate}) {
    for (const auto& r : *side) {
      for (const auto& [name, op] : r.operations) ops.insert(name);
    }
  }
  Comparison out;
  uint64_t seed = o.seed;
  for (const auto& op : ops) {
    for (const auto& s : kStats) {
      out.changes.push_back(Judge(op, s, OperationSamples(baseline, base_reps, op, s, repetitions),
                                  OperationSamples(candidate, cand_reps, op, s, repetitions), o,
                                  seed++));
    }
  }
  for (const auto& s : kStats) {
    out.changes.push_back(Judge("run_duration", s, RunSamples(baseline, base_reps, s, repetitions),
                                RunSamples(candidate, cand_reps, s, repetitions), o, seed++));
  }
  for (const auto& c : out.changes) out.regressed |= c.fails;
  out.growth = CompareGrowth(baseline, candidate);
  for (const auto& g : out.growth) out.regressed |= g.steeper;
  return out;
}

std::string ComparisonText(const Comparison& c, const CompareOptions& o) {
  std::string out = fmt::format("{:<20} {:<5} {:>10} {:>10} {:>8} {:>19} {:>8}  {}\n", "metric",
                                "stat", "baseline", "candidate", "change",
                                fmt::format("{:.0f}% CI", o.confidence * 100), "p", "verdict");
  for (const auto& m : c.changes) {
    if (m.verdict == ChangeVerdict::kNotTested) continue;
    out += fmt::format("{:<20} {:<5} {:>10} {:>10} {:>8} {:>19} {:>8.3g}  {}{}\n", m.metric, m.stat,
                       FormatMillis(m.baseline), FormatMillis(m.candidate), Pct(m.change),
                       fmt::format("[{}, {}]", Pct(m.ci_low), Pct(m.ci_high)), m.p_value,
                       VerdictName(m.verdict), m.fails ? " (FAIL)" : "");
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
  out += fmt::format("\nU test at alpha {} over {}; a regression fails above {:.1f}%: {}\n",
                     o.alpha, c.changes.empty() ? "-" : c.changes.front().sample,
                     o.min_effect * 100, c.regressed ? "REGRESSION" : "no failing regression");
  return out;
}

std::string ComparisonMarkdown(const Comparison& c, const CompareOptions& o) {
  std::string out = fmt::format("### kfpbench compare — {}\n\n",
                                c.regressed ? "❌ regression" : "✅ no failing regression");
  out +=
      fmt::format("| metric | stat | baseline | candidate | change | {:.0f}% CI | p | verdict |\n",
                  o.confidence * 100);
  out += "|---|---|---:|---:|---:|---:|---:|---|\n";
  for (const auto& m : c.changes) {
    if (m.verdict == ChangeVerdict::kNotTested) continue;
    out += fmt::format("| {} | {} | {} | {} | {} | [{}, {}] | {:.3g} | {}{} |\n", m.metric, m.stat,
                       FormatMillis(m.baseline), FormatMillis(m.candidate), Pct(m.change),
                       Pct(m.ci_low), Pct(m.ci_high), m.p_value, m.fails ? "❌ " : "",
                       VerdictName(m.verdict));
  }
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
                    {"verdict", VerdictName(m.verdict)},
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
  return {{"alpha", o.alpha},           {"min_effect", o.min_effect},
          {"confidence", o.confidence}, {"seed", o.seed},
          {"regressed", c.regressed},   {"changes", std::move(rows)},
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
