#include "capture/capture_page.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "report/html_inline.h"
#include "util/files.h"
#include "util/percentile.h"

namespace kfpbench::capture {
namespace {

using nlohmann::json;

// At most this many intervals on the time axis, each a whole number of
// seconds, minutes or hours.
constexpr double kMaxBuckets = 300;

double BucketSeconds(double span) {
  for (double step : {1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 900.0, 1800.0,
                      3600.0, 7200.0, 21600.0, 43200.0, 86400.0}) {
    if (span / step <= kMaxBuckets) return step;
  }
  return std::ceil(span / kMaxBuckets / 86400.0) * 86400.0;
}

// Arrivals and failures per interval, and the runs in flight over each
// interval: the time-weighted mean of how many had arrived and not yet
// finished, from every run's interval (censored runs stay to the end). A
// count sampled on the intervals' boundaries misses every run shorter than
// an interval: runs of 0.4 s arriving 4 a second read 0 in flight, not 1.6.
json Timeline(const std::vector<RunSpan>& spans) {
  double end = 0;
  for (const auto& s : spans) end = std::max({end, s.created, s.finished.value_or(0.0)});
  const double bucket = BucketSeconds(std::max(end, 1.0));
  const auto n = static_cast<size_t>(std::floor(end / bucket)) + 1;
  std::vector<int64_t> arrived(n, 0), failed(n, 0);
  std::vector<double> busy(n, 0);  // run-seconds in flight within each interval
  auto at = [&](double t) { return std::min(n - 1, static_cast<size_t>(std::floor(t / bucket))); };
  const double horizon = static_cast<double>(n) * bucket;
  for (const auto& s : spans) {
    ++arrived[at(s.created)];
    if (s.finished && s.failed) ++failed[at(*s.finished)];
    const double from = s.created, to = s.finished.value_or(horizon);
    for (size_t i = at(from); i < n && static_cast<double>(i) * bucket < to; ++i) {
      const double lo = static_cast<double>(i) * bucket, hi = lo + bucket;
      busy[i] += std::max(0.0, std::min(to, hi) - std::max(from, lo));
    }
  }
  json t = json::array(), in_flight = json::array();
  for (size_t i = 0; i < n; ++i) {
    t.push_back(static_cast<double>(i) * bucket);
    in_flight.push_back(busy[i] / bucket);
  }
  return {{"bucket_seconds", bucket},
          {"t", std::move(t)},
          {"arrived", arrived},
          {"failed", failed},
          {"in_flight", std::move(in_flight)}};
}

// Each step's model, flagged where its lognormal fit fails its own
// Kolmogorov-Smirnov test at 5% (D above the critical value): replay.json's
// stub steps and the simulator draw from that fit all the same, so the page
// says so beside the step.
json StepsWithVerdicts(const json& steps) {
  json out = steps.is_object() ? steps : json::object();
  for (auto& [label, m] : out.items()) {
    if (!m.contains("lognormal")) continue;
    const json& fit = m["lognormal"];
    m["fit_rejected"] = fit.value("ks_d", 0.0) > fit.value("ks_d_5pct", 1.0);
  }
  return out;
}

// Percentiles 1..99 (nearest rank) of each label's samples: one line each on
// a shared x axis.
json QuantileCurves(const std::map<std::string, StepSamples>& steps,
                    std::vector<double> StepSamples::*samples) {
  json curves = json::object();
  for (const auto& [label, s] : steps) {
    std::vector<double> sorted = s.*samples;
    if (sorted.empty()) continue;
    std::sort(sorted.begin(), sorted.end());
    json line = json::array();
    for (int p = 1; p <= 99; ++p) line.push_back(sorted[NearestRank(sorted.size(), p / 100.0) - 1]);
    curves[label] = std::move(line);
  }
  return curves;
}

constexpr const char* kCaptureJs = R"JS(
(function () {
  "use strict";
  const { el, section, table } = kfpbenchPage;
  const data = JSON.parse(document.getElementById("capture-data").textContent);
  const colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"];
  const fixed = (v, d) => (v === null || v === undefined ? "" : Number(v).toFixed(d));
  // Seconds as the tick labels need them: "250 ms" rather than a "0" that
  // uPlot's default rounding makes of 0.25.
  const seconds = (v) => v === 0 ? "0" : Math.abs(v) < 1 ? +(v * 1000).toPrecision(3) + " ms" : +v.toPrecision(4) + " s";
  function chart(parent, title, xLabel, yLabel, x, lines, yValues) {
    const box = el("div", { class: "chart" }, el("h3", {}, title));
    box.dataset.drawn = "false";
    parent.appendChild(box);
    if (!x.length || !lines.length) { box.dataset.drawn = "empty"; return; }
    const series = [{ label: xLabel }].concat(lines.map((l, i) => ({
      label: l.label, stroke: colors[i % colors.length], width: 2, points: { show: x.length < 40 } })));
    const yAxis = yValues ? { label: yLabel, size: 70, values: (u, vals) => vals.map(yValues) } : { label: yLabel };
    new uPlot({ width: 900, height: 280, series: series, scales: { x: { time: false } },
                axes: [{ label: xLabel }, yAxis] },
              [x].concat(lines.map((l) => l.values)), box);
    box.dataset.drawn = "true";
  }
  const s = data.summary;
  const head = section("Captured load", data.window);
  head.appendChild(table(["runs", "tasks", "still running (censored)", "makespan (s)", "run p50 (s)", "run p95 (s)"],
    [[s.runs, s.tasks, s.censored, fixed(s.makespan_seconds, 1), fixed(s.run_p50, 2), fixed(s.run_p95, 2)]], 0));
  const tl = data.timeline;
  const per = tl.bucket_seconds;
  const minutes = tl.t.map((v) => v / 60);
  const overTime = section("Over time", "minutes from the first run; one point per " + per + " s");
  chart(overTime, "Arrivals and failures per interval", "minutes", "runs",
        minutes, [{ label: "arrived", values: tl.arrived }, { label: "failed (by end)", values: tl.failed }]);
  chart(overTime, "Runs in flight (mean over each interval)", "minutes", "runs",
        minutes, [{ label: "in flight", values: tl.in_flight }]);
  const mix = section("The mix", "one row per pipeline version");
  mix.appendChild(table(["pipeline", "version", "version id", "runs", "share", "states", "run p50 (s)", "run p95 (s)", "spec"],
    data.mix.map((m) => [m.pipeline_name, m.version_name || "(unnamed)", m.pipeline_version, m.runs, fixed(100 * m.share, 1) + "%",
      Object.entries(m.states).map(([k, v]) => k + " " + v).join(", "),
      fixed(m.run_seconds.p50, 2), fixed(m.run_seconds.p95, 2), m.spec_missing ? "missing" : "kept"]), 3));
  const steps = section("Steps", "by executor label: executions that succeeded, their duration (start to end) and " +
    "queue wait (created to started), failures and cache hits");
  steps.appendChild(table(["step", "succeeded", "failed", "failure rate", "cached", "p50 (s)", "p95 (s)",
    "wait p50 (s)", "wait p95 (s)", "lognormal median (s)", "sigma", "KS D (5%)"],
    Object.entries(data.steps).map(([label, m]) => [label, m.succeeded, m.failed,
      fixed(100 * m.failure_rate, 1) + "%", m.cached, fixed(m.duration_seconds.p50, 3),
      fixed(m.duration_seconds.p95, 3), fixed(m.overhead_seconds.p50, 3), fixed(m.overhead_seconds.p95, 3),
      m.lognormal ? fixed(m.lognormal.median_seconds, 3) : "", m.lognormal ? fixed(m.lognormal.sigma, 3) : "",
      m.lognormal ? el("span", m.fit_rejected ? { class: "fail" } : {}, fixed(m.lognormal.ks_d, 3) + " (" +
        fixed(m.lognormal.ks_d_5pct, 3) + ")" + (m.fit_rejected ? " fit rejected" : "")) : ""]), 1));
  const rejected = Object.entries(data.steps).filter(([, m]) => m.fit_rejected).map(([label]) => label);
  if (rejected.length) {
    steps.appendChild(el("p", { class: "warn", id: "fit-rejected" }, "The lognormal fit of " + rejected.join(", ") +
      " fails its own Kolmogorov-Smirnov test at 5% (D above the critical value in brackets): replay.json's stub steps " +
      "and the simulator's workloads still draw these steps from that fit, so their durations there follow the fit, " +
      "not the quantiles measured here. Compare the replay with the capture (the two-sample KS test) before trusting it."));
  }
  const pct = Array.from({ length: 99 }, (_, i) => i + 1);
  const curves = (c) => Object.entries(c).map(([label, values]) => ({ label: label, values: values }));
  chart(steps, "Step durations by percentile", "percentile", "duration", pct, curves(data.durations), seconds);
  chart(steps, "Queue waits (created to started) by percentile", "percentile", "queue wait", pct, curves(data.waits), seconds);
  document.getElementById("kfpbench-status").setAttribute("data-ready", "true");
})();
)JS";

}  // namespace

json CapturePageData(const Samples& samples, const json& workload) {
  const json& runs = workload.value("run_seconds", json::object());
  json summary = {{"runs", samples.runs},
                  {"tasks", samples.tasks},
                  {"censored", samples.censored},
                  {"makespan_seconds", workload.value("makespan_seconds", json())},
                  {"run_p50", runs.value("p50", json())},
                  {"run_p95", runs.value("p95", json())}};
  const json& window = workload.value("window", json::object());
  return {{"window", fmt::format("runs created from {} to {}", window.value("since", ""),
                                 window.value("until", ""))},
          {"summary", std::move(summary)},
          {"timeline", Timeline(samples.spans)},
          {"mix", workload.value("mix", json::array())},
          {"steps", StepsWithVerdicts(workload.value("steps", json::object()))},
          {"durations", QuantileCurves(samples.steps, &StepSamples::durations)},
          {"waits", QuantileCurves(samples.steps, &StepSamples::overheads)}};
}

Status WriteCapturePage(const std::filesystem::path& path, const Samples& samples,
                        const json& workload) {
  std::string html = report::ReportPageOpen("kfpbench capture");
  html += "<script type=\"application/json\" id=\"capture-data\">";
  html += report::ScriptJson(CapturePageData(samples, workload));
  html += "</script>\n";
  html += report::UplotScript();
  html += "<script>";
  html += report::Inline(kCaptureJs, "script");
  html += "</script>\n</body>\n</html>\n";
  return WriteFileAtomically(path, html);
}

}  // namespace kfpbench::capture
