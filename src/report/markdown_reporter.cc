#include <fmt/format.h>

#include "report/reporter.h"
#include "report/thresholds.h"

namespace kfpbench::report {
namespace {

// A table cell: a '|' would end the cell, a line break the row.
std::string Cell(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

std::string Ms(double ms) { return FormatDuration(FromSeconds(ms / 1000)); }

}  // namespace

Result<std::string> MarkdownReporter::Render(const harness::BenchmarkResults& r,
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
                     Cell(r.kfpbench_version), Cell(r.target.url),
                     r.target.embedded ? " (embedded backend)" : "", elapsed, r.runs.size(),
                     r.partial ? " · **partial**: " + Cell(r.partial_reason) : "");
  if (!verdicts->empty()) {
    out += "\n| | metric | threshold | observed | margin |\n|---|---|---|---:|---|\n";
    for (const auto& v : *verdicts) {
      out += fmt::format("| {} | {} | `{}` | {} | {} |\n", v.passed ? "✅" : "❌", Cell(v.metric),
                         Cell(v.expression), Cell(v.observed_text), Cell(v.margin));
    }
  }
  if (!r.operations.empty()) {
    out +=
        "\n| operation | calls | errors | calls/s | p50 | p95 | p99 | max |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const auto& [name, op] : r.operations) {
      const auto& h = op.latency_us;
      auto p = [&](double q) { return Ms(h.ValueAtPercentile(q) / 1000.0); };
      out += fmt::format("| {} | {} | {} | {:.1f} | {} | {} | {} | {} |\n", Cell(name), h.count(),
                         op.errors, elapsed > 0 ? h.count() / elapsed : 0.0, p(50), p(95), p(99),
                         Ms(h.max() / 1000.0));
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
                         Ms(h->ValueAtPercentile(50)), Ms(h->ValueAtPercentile(95)),
                         Ms(h->ValueAtPercentile(99)), Ms(h->max()));
    }
  }
  if (!r.errors.empty()) {
    out += "\n**Errors**\n\n";
    for (const auto& e : r.errors) out += "- " + Cell(e) + "\n";
  }
  return out;
}

Status MarkdownReporter::Report(const harness::BenchmarkResults& results) {
  auto text = Render(results, thresholds_);
  if (!text.ok()) return text.error();
  return WriteFileAtomically(path_, *text);
}

}  // namespace kfpbench::report
