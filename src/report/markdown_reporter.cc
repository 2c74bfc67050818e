#include <fmt/format.h>

#include "report/caveats.h"
#include "report/reporter.h"
#include "report/thresholds.h"
#include "util/strings.h"

namespace kfpbench::report {
Result<std::string> MarkdownReporter::Render(const results::BenchmarkResults& r,
                                             const nlohmann::json& thresholds) {
  auto verdicts = VerdictsFor(r, thresholds);
  if (!verdicts.ok()) return verdicts.error();
  size_t failed = 0;
  for (const auto& v : *verdicts) failed += v.passed ? 0 : 1;
  double elapsed = ToSeconds(r.finished - r.started);
  std::string out = "### kfpbench results";
  if (!verdicts->empty()) {
    out += failed ? fmt::format(" — ❌ {} of {} thresholds failed", failed, verdicts->size())
                  : fmt::format(" — ✅ all {} thresholds passed", verdicts->size());
  }
  out += fmt::format("\n\n`kfpbench {}` against `{}`{} · {:.1f} s · {} runs{}\n",
                     MarkdownCell(r.kfpbench_version), MarkdownCell(r.target.url),
                     r.target.embedded ? " (embedded backend)" : "", elapsed, r.runs.size(),
                     r.partial ? " · **partial**" : "");
  if (auto caveats = CaveatsOf(r); !caveats.empty()) {
    out += "\n> **Caveats**\n>\n";
    for (const auto& c : caveats) out += "> - " + MarkdownCell(c.text) + "\n";
  }
  if (!verdicts->empty()) {
    out += "\n| | metric | threshold | observed | margin |\n|---|---|---|---:|---|\n";
    for (const auto& v : *verdicts) {
      out += fmt::format("| {} | {} | `{}` | {} | {} |\n", v.passed ? "✅" : "❌",
                         MarkdownCell(v.metric), MarkdownCell(v.expression),
                         MarkdownCell(v.observed_text), MarkdownCell(v.margin));
    }
  }
  if (!r.operations.empty()) {
    out +=
        "\n| operation | calls | errors | calls/s | p50 | p95 | p99 | max |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const auto& [name, op] : r.operations) {
      const auto& h = op.latency_us;
      auto p = [&](double q) { return FormatMillis(h.ValueAtPercentile(q) / 1000.0); };
      out += fmt::format("| {} | {} | {} | {:.1f} | {} | {} | {} | {} |\n", MarkdownCell(name),
                         h.count(), op.errors, elapsed > 0 ? h.count() / elapsed : 0.0, p(50),
                         p(95), p(99), FormatMillis(h.max() / 1000.0));
    }
  }
  auto durations = r.RunDurationsMs();
  auto waits = r.QueueWaitsMs();
  if (!r.runs.empty()) {
    std::string states;
    for (const auto& [state, n] : r.RunsByState()) {
      states += fmt::format("{}{} {}", states.empty() ? "" : ", ", n, state);
    }
    out += fmt::format(
        "\nRuns: {}\n\n| | count | p50 | p95 | p99 | max |\n|---|---:|---:|---:|---:|---:|\n",
        states);
    for (const auto& [label, h] :
         {std::pair{"run duration", &durations}, std::pair{"queue wait", &waits}}) {
      out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", label, h->count(),
                         FormatMillis(h->ValueAtPercentile(50)),
                         FormatMillis(h->ValueAtPercentile(95)),
                         FormatMillis(h->ValueAtPercentile(99)), FormatMillis(h->max()));
    }
  }
  for (const auto& stop : r.stress_stops) {
    double peak = r.StressPeakPerMinute(stop.scenario);
    out += fmt::format(
        "\n**Stress search, scenario {}**: {} ({})\n\n"
        "| runs/min | runs | failed | p95 from intended start | SLO |\n|---:|---:|---:|---:|---|\n",
        stop.scenario,
        peak == 0 ? "no rate held"
        : stop.reason == results::StressStopReason::kSloBroken
            ? fmt::format("peak {:g} runs/min", peak)
            : fmt::format("held up to {:g} runs/min, not broken", peak),
        MarkdownCell(stop.detail));
    for (const auto& s : r.stress_steps) {
      if (s.scenario != stop.scenario) continue;
      out +=
          fmt::format("| {:g} | {} | {} | {} | {} |\n", s.rate_per_minute, s.runs, s.failed,
                      FormatMillis(static_cast<double>(s.p95_ms)), s.held ? "✅ held" : "❌ broken");
    }
  }
  for (const auto& curve : r.growth) {
    out += fmt::format(
        "\n**Growth, scenario {}**: latency ~ runs stored^k over {} level(s){}\n\n"
        "| operation | k of p50 [95%] | k of p99 [95%] | p99 at {} runs |\n|---|---|---|---:|\n",
        curve.scenario, curve.levels.size(),
        curve.stopped_because.empty() ? ""
                                      : " (stopped: " + MarkdownCell(curve.stopped_because) + ")",
        curve.extrapolate_to);
    auto k = [](const std::optional<results::PowerLawFit>& f) {
      if (!f) return std::string("–");
      return f->exponent_low ? fmt::format("{:.2f} [{:.2f}, {:.2f}] {}", f->exponent,
                                           *f->exponent_low, *f->exponent_high, f->verdict)
                             : fmt::format("{:.2f} {}", f->exponent, f->verdict);
    };
    for (const auto& [op, f] : curve.Fits()) {
      out +=
          fmt::format("| {} | {} | {} | {} |\n", op, k(f.p50), k(f.p99),
                      f.p99_at_extrapolation ? FormatMillis(*f.p99_at_extrapolation / 1000) : "–");
    }
  }
  if (!r.schedules.empty()) {
    auto lags = r.TriggerLagsMs();
    out += "\n| scheduled runs | fires owed | runs made | missed |\n|---|---:|---:|---:|\n";
    for (const auto& s : r.schedules) {
      out += fmt::format("| scenario {} ({} schedules) | {} | {} | {} |\n", s.scenario,
                         s.recurring_runs, s.expected_fires, s.observed_fires, s.Missed());
    }
    if (lags.count() > 0) {
      out += fmt::format("\nTrigger lag: p50 {}, max {} over {} runs\n",
                         FormatMillis(static_cast<double>(lags.ValueAtPercentile(50))),
                         FormatMillis(static_cast<double>(lags.max())), lags.count());
    }
  }
  if (!r.errors.empty()) {
    out += "\n**Errors**\n\n";
    for (const auto& e : r.errors) out += "- " + MarkdownCell(e) + "\n";
  }
  return out;
}

Status MarkdownReporter::Report(const results::BenchmarkResults& results) {
  auto text = Render(results, thresholds_);
  if (!text.ok()) return text.error();
  return WriteFileAtomically(path_, *text);
}

}  // namespace kfpbench::report
