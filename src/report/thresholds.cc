#include "report/thresholds.h"

#include <cctype>
#include <charconv>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kfp/client.h"
#include "util/human.h"
#include "util/strings.h"

namespace kfpbench::report {
namespace {

using nlohmann::json;

std::optional<double> Number(std::string_view s) {
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// "p95" -> 95, "p999" -> 99.9, "p(99.5)" -> 99.5.
std::optional<double> Percentile(std::string_view stat) {
  if (stat.size() < 2 || stat[0] != 'p') return std::nullopt;
  std::string_view rest = stat.substr(1);
  std::optional<double> p;
  if (rest.front() == '(' && rest.back() == ')') {
    p = Number(rest.substr(1, rest.size() - 2));
  } else {
    for (char c : rest) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    }
    std::string digits(rest);
    // p999 is 99.9 and p9999 99.99 (HdrHistogram's names); p100 is the maximum.
    if (digits.size() > 2 && digits != "100") {
      if (!digits.starts_with("99")) return std::nullopt;
      digits.insert(2, ".");
    }
    p = Number(digits);
  }
  if (!p || *p < 0 || *p > 100) return std::nullopt;
  return p;
}

bool IsRunMetric(const std::string& m) { return m == "run_duration" || m == "queue_wait"; }

bool IsKnownOperation(const std::string& m) {
  for (auto op : kfp::kOperations) {
    if (op == m) return true;
  }
  return false;
}

std::string Text(ThresholdKind kind, double v) {
  switch (kind) {
    case ThresholdKind::kLatency:
      return FormatMillis(v);
    case ThresholdKind::kErrorRate:
      return fmt::format("{:.3g}%", v * 100);
    case ThresholdKind::kCount:
      return fmt::format("{}", v);
    case ThresholdKind::kRate:
      return fmt::format("{:.3g}/s", v);
    case ThresholdKind::kExponent:  // latency ~ runs^v
      return fmt::format("runs^{:.2f}", v);
  }
  return "";
}

Result<double> ParseLimit(ThresholdKind kind, std::string_view value) {
  switch (kind) {
    case ThresholdKind::kLatency: {
      double ms = 0;
      if (auto bare = Number(value)) {
        ms = *bare;  // k6: a bare number is milliseconds
      } else {
        auto d = ParseDuration(value);
        if (!d.ok()) return Error{"expected a duration such as 500ms, 2s or 10m"};
        ms = ToSeconds(*d) * 1000;
      }
      if (!(ms >= 0)) return Error{"a latency limit cannot be negative"};
      return ms;
    }
    case ThresholdKind::kErrorRate: {
      if (!value.empty() && value.back() == '%') {
        auto pct = Number(TrimSpace(value.substr(0, value.size() - 1)));
        if (!pct || *pct < 0 || *pct > 100) return Error{"expected a percentage from 0% to 100%"};
        return *pct / 100;
      }
      auto f = Number(value);
      if (!f || *f < 0 || *f > 1) return Error{"expected a percentage (1%) or a fraction (0.01)"};
      return *f;
    }
    case ThresholdKind::kCount: {
      auto n = Number(value);
      if (!n || *n < 0) return Error{"expected a non-negative number"};
      return *n;
    }
    case ThresholdKind::kRate: {
      // The unit is part of the syntax: scenarios give rates per minute and
      // k6 per second, so a bare number would be read wrong by someone.
      double per = 0;
      if (value.ends_with("/s")) {
        value.remove_suffix(2);
        per = 1;
      } else if (value.ends_with("/m")) {
        value.remove_suffix(2);
        per = 60;
      } else if (value.ends_with("/h")) {
        value.remove_suffix(2);
        per = 3600;
      }
      auto n = Number(TrimSpace(value));
      if (per == 0 || !n || *n < 0) {
        return Error{"expected a rate with its unit, such as 10/s, 600/m or 36000/h"};
      }
      return *n / per;
    }
    case ThresholdKind::kExponent: {
      auto n = Number(value);
      if (!n) return Error{"expected an exponent, a plain number such as 0.3"};
      return *n;
    }
  }
  return Error{"unknown kind"};
}

bool Compare(double observed, const std::string& op, double limit) {
  if (op == "<") return observed < limit;
  if (op == "<=") return observed <= limit;
  if (op == ">") return observed > limit;
  return observed >= limit;
}

struct Observation {
  bool has_data = false;
  double value = 0;
  std::string no_data_because{};  // when there is none and more can be said than "no samples"
};

Observation Latency(const metrics::Histogram& h, const Threshold& t, double to_ms) {
  if (h.count() == 0) return {};
  double v = 0;
  if (t.percentile >= 0) {
    v = static_cast<double>(h.ValueAtPercentile(t.percentile));
  } else if (t.stat == "min") {
    v = static_cast<double>(h.min());
  } else if (t.stat == "max") {
    v = static_cast<double>(h.max());
  } else {
    v = h.mean();
  }
  return {true, v * to_ms};
}

// The steepest fitted exponent of the operation over the growth scenarios.
Observation GrowthExponent(const results::BenchmarkResults& r, const Threshold& t) {
  Observation o;
  for (const auto& curve : r.growth) {
    auto fits = curve.Fits();
    auto it = fits.find(t.metric);
    if (it == fits.end()) continue;
    const auto& fit = t.stat == "growth_exponent_p99" ? it->second.p99 : it->second.p50;
    if (!fit) continue;
    o.value = o.has_data ? std::max(o.value, fit->exponent) : fit->exponent;
    o.has_data = true;
  }
  return o;
}

Observation Observe(const results::BenchmarkResults& r, const Threshold& t) {
  if (t.kind == ThresholdKind::kExponent) return GrowthExponent(r, t);
  double elapsed_s = ToSeconds(r.finished - r.started);
  if (IsRunMetric(t.metric)) {
    auto h = t.metric == "run_duration" ? r.RunDurationsMs() : r.QueueWaitsMs();
    switch (t.kind) {
      case ThresholdKind::kLatency:
        return Latency(h, t, 1.0);
      case ThresholdKind::kCount:
        return {true, static_cast<double>(h.count())};
      case ThresholdKind::kRate:
        return {true, elapsed_s > 0 ? h.count() / elapsed_s : 0.0};
      case ThresholdKind::kExponent:
        return {};
      case ThresholdKind::kErrorRate: {
        if (r.runs.empty()) return {};
        size_t bad = 0;
        for (const auto& run : r.runs) {
          if (run.state != RuntimeState::kSucceeded && run.state != RuntimeState::kSkipped) ++bad;
        }
        return {true, static_cast<double>(bad) / r.runs.size()};
      }
    }
  }
  static const metrics::OperationStats kNone;
  const metrics::OperationStats* found = &kNone;
  if (auto it = r.operations.find(t.metric); it != r.operations.end()) {
    found = &it->second;
  } else if (auto o = r.observer.operations.find(t.metric); o != r.observer.operations.end()) {
    // Thresholds judge the workload's calls only. kfpbench's own following
    // of its runs (ListRuns, GetRun at --observer-qps) is not the load the
    // scenario asks about, and its pace is kfpbench's, not the target's.
    Observation none;
    none.no_data_because = fmt::format(
        "the workload made no {} call; only kfpbench's observer did ({} calls, not judged: "
        "thresholds judge the workload's calls)",
        t.metric, o->second.latency_us.count());
    return none;
  }
  const metrics::OperationStats& op = *found;
  uint64_t n = op.latency_us.count();
  switch (t.kind) {
    case ThresholdKind::kLatency:
      return Latency(op.latency_us, t, 1e-3);
    case ThresholdKind::kCount:
      return {true, static_cast<double>(n)};
    case ThresholdKind::kRate:
      return {true, elapsed_s > 0 ? n / elapsed_s : 0.0};
    case ThresholdKind::kErrorRate:
      if (n == 0) return {};
      return {true, static_cast<double>(op.errors) / n};
    case ThresholdKind::kExponent:
      return {};
  }
  return {};
}

// A growth exponent in words: how latency grows with the runs stored, and
// what the limit allows. A difference of exponents ("0.373 (124%) under the
// limit") means nothing to a reader.
std::string ExponentMargin(const Threshold& t, double observed, bool passed) {
  std::string_view how = results::GrowthVerdict(observed);
  std::string grows = how == "constant"      ? "stays flat"
                      : how == "logarithmic" ? "grows slowly (sublinearly)"
                      : how == "linear"      ? "grows about in proportion"
                                             : "grows faster than the runs do";
  std::string stat = t.stat == "growth_exponent_p99" ? "p99" : "p50";
  bool upper = t.op[0] == '<';
  // By how much, in what a reader can weigh: what ten times the runs stored
  // does to latency, measured and allowed.
  double measured = std::pow(10.0, observed), allowed = std::pow(10.0, t.limit);
  double apart = measured / allowed - 1;
  return fmt::format(
      "{} latency {} as the runs stored grow: about runs^{:.2f}, {} runs^{:.2f}; ten times the "
      "runs stored multiply it by {:.2f} where the limit allows {:.2f} ({:.0f}% {}){}",
      stat, grows, observed,
      upper ? (passed ? "within the limit of" : "steeper than the limit of")
            : (passed ? "at least the limit of" : "flatter than the limit of"),
      t.limit, measured, allowed, std::abs(apart) * 100, apart > 0 ? "more" : "less",
      passed ? "" : " — FAILED");
}

std::string Margin(const Threshold& t, double observed, bool passed) {
  if (t.kind == ThresholdKind::kExponent) return ExponentMargin(t, observed, passed);
  double diff = std::fabs(observed - t.limit);
  std::string amount = Text(t.kind, diff);
  if (t.kind == ThresholdKind::kErrorRate) {
    // Error rates are percentages already: their difference is in points.
    double points = diff * 100;
    amount = fmt::format("{:.3g} percentage point{}", points, points == 1 ? "" : "s");
  }
  // Relative to the limit: a share of it below twice it, a multiple beyond
  // ("1900%" reads worse than "20x the limit").
  std::string relative;
  if (t.limit != 0 && observed / t.limit >= 2) {
    relative = fmt::format(" (observed is {:.3g}x the limit)", observed / t.limit);
  } else if (t.limit != 0) {
    amount += fmt::format(" ({:.0f}%)", diff / t.limit * 100);
  }
  bool upper = t.op[0] == '<';  // the limit is a ceiling
  if (passed) return fmt::format("{} {} the limit{}", amount, upper ? "under" : "above", relative);
  if (diff == 0) return "exactly at the limit";
  return fmt::format("{} {} the limit{}", amount, upper ? "over" : "short of", relative);
}

Result<std::vector<std::string>> Expressions(const std::string& metric, const json& spec) {
  std::vector<std::string> out;
  auto one = [&](const json& e) -> Status {
    if (e.is_string()) {
      out.push_back(e.get<std::string>());
      return Ok();
    }
    if (e.is_object() && e.contains("threshold") && e["threshold"].is_string()) {
      for (const auto& [key, value] : e.items()) {
        if (key != "threshold") {
          // k6's abortOnFail and delayAbortEval stop a test as it runs;
          // kfpbench judges thresholds after the run, so it refuses them
          // rather than ignore them.
          return Error{fmt::format(
              "thresholds.{}: {}: not supported (kfpbench judges thresholds after the run; "
              "--max-error-rate stops a run early)",
              metric, key)};
        }
      }
      out.push_back(e["threshold"].get<std::string>());
      return Ok();
    }
    return Error{fmt::format(
        "thresholds.{}: each threshold must be a string such as \"p95 < 500ms\" (got {})", metric,
        e.dump())};
  };
  if (spec.is_array()) {
    for (const auto& e : spec) {
      if (Status s = one(e); !s.ok()) return s.error();
    }
  } else if (Status s = one(spec); !s.ok()) {
    return s.error();
  }
  return out;
}

}  // namespace

Result<Threshold> ParseThreshold(const std::string& metric, const std::string& expression) {
  auto bad = [&](const std::string& why) {
    return Error{fmt::format("threshold {}: \"{}\": {}", metric, expression, why)};
  };
  if (metric.empty()) return bad("empty metric name");
  std::string_view text = TrimSpace(expression);
  size_t op_pos = text.find_first_of("<>=!");
  if (op_pos == std::string_view::npos) {
    return bad("expected STAT OP VALUE, e.g. \"p95 < 500ms\" (OP is <, <=, > or >=)");
  }
  Threshold t;
  t.metric = metric;
  t.expression = expression;
  t.stat = std::string(TrimSpace(text.substr(0, op_pos)));
  size_t op_len = op_pos + 1 < text.size() && text[op_pos + 1] == '=' ? 2 : 1;
  t.op = std::string(text.substr(op_pos, op_len));
  if (t.op != "<" && t.op != "<=" && t.op != ">" && t.op != ">=") {
    return bad(fmt::format("unsupported operator '{}' (use <, <=, > or >=)", t.op));
  }
  std::string_view value = TrimSpace(text.substr(op_pos + op_len));
  if (value.empty()) return bad("missing value after the operator");
  if (auto p = Percentile(t.stat)) {
    t.percentile = *p;
  } else if (t.stat == "med") {
    t.percentile = 50;
  } else if (t.stat == "avg" || t.stat == "mean" || t.stat == "min" || t.stat == "max") {
  } else if (t.stat == "error_rate") {
    t.kind = ThresholdKind::kErrorRate;
  } else if (t.stat == "count") {
    t.kind = ThresholdKind::kCount;
  } else if (t.stat == "rate") {
    t.kind = ThresholdKind::kRate;
  } else if (t.stat == "growth_exponent" || t.stat == "growth_exponent_p99") {
    t.kind = ThresholdKind::kExponent;
    if (!results::IsGrowthOperation(metric)) {
      return bad(fmt::format("{} is measured for the growth shape's operations only ({})", t.stat,
                             fmt::join(results::kGrowthOperations, ", ")));
    }
  } else {
    return bad(fmt::format(
        "unknown statistic '{}' (known: p50 p90 p95 p99 p999 p(NN) med min max mean avg count "
        "error_rate rate growth_exponent growth_exponent_p99)",
        t.stat));
  }
  if (t.kind != ThresholdKind::kExponent && results::IsGrowthOperation(metric) &&
      !IsKnownOperation(metric)) {
    return bad(
        fmt::format("{} is a growth operation: only growth_exponent and "
                    "growth_exponent_p99 are measured for it",
                    metric));
  }
  if (metric == "queue_wait" &&
      (t.kind == ThresholdKind::kErrorRate || t.kind == ThresholdKind::kRate)) {
    return bad(fmt::format("{} is not defined for queue_wait", t.stat));
  }
  auto limit = ParseLimit(t.kind, value);
  if (!limit.ok()) return bad(fmt::format("'{}': {}", value, limit.error().message));
  t.limit = *limit;
  return t;
}

bool IsKnownMetric(const std::string& metric) {
  return IsRunMetric(metric) || IsKnownOperation(metric) || results::IsGrowthOperation(metric);
}

Result<std::vector<Threshold>> ParseThresholds(const json& thresholds) {
  std::vector<Threshold> parsed;
  if (thresholds.is_null()) return parsed;
  if (!thresholds.is_object()) {
    return Error{"thresholds: must be an object mapping a metric to expressions"};
  }
  std::vector<std::string> problems;
  for (const auto& [metric, spec] : thresholds.items()) {
    if (!IsKnownMetric(metric)) {
      problems.push_back(fmt::format(
          "thresholds.{}: no such metric (known: run_duration, queue_wait, the operations {}, and "
          "for growth_exponent {})",
          metric, fmt::join(kfp::kOperations, ", "), fmt::join(results::kGrowthOperations, ", ")));
      continue;
    }
    for (const auto& item : spec.is_array() ? spec : json::array({spec})) {
      if (item.is_array()) {
        problems.push_back(fmt::format(
            "thresholds.{}: each threshold must be a string such as \"p95 < 500ms\" (got {})",
            metric, item.dump()));
        continue;
      }
      auto exprs = Expressions(metric, item);
      if (!exprs.ok()) {
        problems.push_back(exprs.error().message);
        continue;
      }
      for (const auto& e : *exprs) {
        auto t = ParseThreshold(metric, e);
        if (!t.ok()) {
          // As a JSON path, like every other problem of the file.
          std::string message = t.error().message;
          std::string own = "threshold " + metric + ": ";
          if (message.starts_with(own)) message = message.substr(own.size());
          problems.push_back(fmt::format("thresholds.{}: {}", metric, message));
        } else {
          parsed.push_back(std::move(*t));
        }
      }
    }
  }
  if (!problems.empty()) return Error{fmt::format("{}", fmt::join(problems, "\n"))};
  return parsed;
}

Result<std::vector<Verdict>> EvaluateThresholds(const results::BenchmarkResults& results,
                                                const json& thresholds) {
  std::vector<Verdict> verdicts;
  auto parsed = ParseThresholds(thresholds);
  if (!parsed.ok()) return parsed.error();
  for (const auto& t : *parsed) {
    Observation o = Observe(results, t);
    Verdict v;
    v.metric = t.metric;
    v.expression = t.expression;
    v.limit = t.limit;
    v.limit_text = Text(t.kind, t.limit);
    v.has_data = o.has_data;
    if (!o.has_data) {
      // Nothing measured can't show the criterion holds: a missing operation
      // (or a typo in its name) must not pass silently.
      v.passed = false;
      v.observed_text = "no data";
      v.margin = o.no_data_because.empty() ? "no samples to judge" : o.no_data_because;
    } else {
      v.observed = o.value;
      v.passed = Compare(o.value, t.op, t.limit);
      // A latency beside its limit keeps the digits that keep the comparison.
      v.observed_text =
          t.kind == ThresholdKind::kLatency
              ? FormatDurationAgainst(FromSeconds(o.value / 1000), FromSeconds(t.limit / 1000))
              : Text(t.kind, o.value);
      v.margin = Margin(t, o.value, v.passed);
    }
    verdicts.push_back(std::move(v));
  }
  return verdicts;
}

json ThresholdsOf(const results::BenchmarkResults& results) {
  const json& src = results.scenario_source;
  if (src.is_object() && src.contains("thresholds") && src["thresholds"].is_object()) {
    return src["thresholds"];
  }
  return json::object();
}

Result<std::vector<Verdict>> VerdictsFor(const results::BenchmarkResults& results,
                                         const json& thresholds) {
  return EvaluateThresholds(results, thresholds.is_null() ? ThresholdsOf(results) : thresholds);
}

bool AllPassed(const std::vector<Verdict>& verdicts) {
  for (const auto& v : verdicts) {
    if (!v.passed) return false;
  }
  return true;
}

json VerdictsToJson(const std::vector<Verdict>& verdicts) {
  json out = json::array();
  for (const auto& v : verdicts) {
    out.push_back({{"metric", v.metric},
                   {"expression", v.expression},
                   {"passed", v.passed},
                   {"has_data", v.has_data},
                   {"observed", v.observed},
                   {"observed_text", v.observed_text},
                   {"limit", v.limit},
                   {"limit_text", v.limit_text},
                   {"margin", v.margin}});
  }
  return out;
}

}  // namespace kfpbench::report
