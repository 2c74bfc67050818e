#include "plan/capacity_page.h"

#include <algorithm>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "plan/plan.h"
#include "report/html_inline.h"
#include "report/markup.h"
#include "sim/binding.h"
#include "util/files.h"
#include "util/human.h"

namespace kfpbench::plan {
namespace {

using nlohmann::json;

Result<SweepPoint> SweepProbe(const sim::ClusterSpec& cluster, const sim::WorkloadSpec& workload,
                              int64_t runs, int nodes, const Replications& reps, Duration limit) {
  auto replicated = Replicate(cluster, workload, runs, nodes, reps);
  if (!replicated.ok()) return replicated.error();
  auto r = SimulateAllAtOnce(cluster, workload, runs, nodes);
  if (!r.ok()) return r.error();
  SweepPoint p;
  p.nodes = nodes;
  p.runs = runs;
  p.makespan_s = ToSeconds(replicated->makespan);
  p.median_s = ToSeconds(replicated->median);
  p.min_s = ToSeconds(replicated->min);
  p.max_s = ToSeconds(replicated->max);
  p.p50_s = r->run_ms.ValueAtPercentile(50) / 1000.0;
  p.p95_s = r->run_ms.ValueAtPercentile(95) / 1000.0;
  if (limit > Duration::zero()) {
    Judge(*replicated, reps, limit, IsRandom(workload));
    p.within = replicated->within.Estimate();
    p.within_low = replicated->within.low;
    p.within_high = replicated->within.high;
  }
  const sim::Binding binding = sim::WhatBinds(*r);
  p.binds = binding.what == sim::Binds::kResource ? "nodes' " + binding.resource
                                                  : sim::BindsName(binding.what);
  p.cpu_util = r->cpu_utilisation;
  p.memory_util = r->memory_utilisation;
  p.pending_share = binding.pending_share;
  p.store_share = binding.store_share;
  p.api_share = binding.api_share;
  if (auto waves = Waves(cluster, workload, runs, nodes); waves.ok()) {
    p.waves_s = ToSeconds(waves->time);
    p.api_s = waves->api_per_run.demand_seconds * static_cast<double>(runs);
    p.store_s = waves->store_per_run.demand_seconds * static_cast<double>(runs);
  }
  return p;
}

json Columns(const std::vector<SweepPoint>& points) {
  json j = {{"nodes", json::array()},       {"runs", json::array()},
            {"makespan", json::array()},    {"median", json::array()},
            {"min", json::array()},         {"max", json::array()},
            {"p50", json::array()},         {"p95", json::array()},
            {"waves", json::array()},       {"api", json::array()},
            {"store", json::array()},       {"within", json::array()},
            {"within_low", json::array()},  {"within_high", json::array()},
            {"binds", json::array()},       {"cpu_util", json::array()},
            {"memory_util", json::array()}, {"pending_share", json::array()},
            {"store_share", json::array()}, {"api_share", json::array()}};
  for (const auto& p : points) {
    j["nodes"].push_back(p.nodes);
    j["runs"].push_back(p.runs);
    j["makespan"].push_back(p.makespan_s);
    j["median"].push_back(p.median_s);
    j["min"].push_back(p.min_s);
    j["max"].push_back(p.max_s);
    j["p50"].push_back(p.p50_s);
    j["p95"].push_back(p.p95_s);
    j["waves"].push_back(p.waves_s);
    j["api"].push_back(p.api_s);
    j["store"].push_back(p.store_s);
    j["within"].push_back(p.within);
    j["within_low"].push_back(p.within_low);
    j["within_high"].push_back(p.within_high);
    j["binds"].push_back(p.binds);
    j["cpu_util"].push_back(p.cpu_util);
    j["memory_util"].push_back(p.memory_util);
    j["pending_share"].push_back(p.pending_share);
    j["store_share"].push_back(p.store_share);
    j["api_share"].push_back(p.api_share);
  }
  return j;
}

// Draws every chart whose data the page carries; each chart's element says
// whether it drew (data-drawn), errors are listed, and the status element is
// marked ready at the end, so a headless browser can check the page.
constexpr const char* kPageJs = R"JS(
(function () {
  const errors = document.getElementById('errors');
  function fail(msg) {
    errors.hidden = false;
    const li = document.createElement('li');
    li.textContent = msg;
    errors.appendChild(li);
  }
  window.addEventListener('error', (e) => fail(String(e.message)));
  const data = JSON.parse(document.getElementById('capacity-data').textContent);
  const charts = document.getElementById('charts');
  const colors = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e'];
  // marks: {x, xLabel, y, yLabel} draws a vertical line at x and a
  // horizontal one at y (in the chart's units); band: [upper, lower] line
  // indexes whose area is shaded.
  // labels: one short text per x, written above its point (what binds).
  function chart(title, xLabel, yLabel, x, lines, marks, band, labels) {
    const box = document.createElement('section');
    box.className = 'chart';
    box.dataset.drawn = 'false';
    const h = document.createElement('h2');
    h.textContent = title;
    box.appendChild(h);
    charts.appendChild(box);
    try {
      if (!x || x.length === 0) { box.dataset.drawn = 'empty'; return; }
      const series = [{ label: xLabel }];
      const columns = [x];
      lines.forEach((l, i) => {
        series.push({ label: l.label, stroke: l.stroke || colors[i % colors.length],
                      width: l.width || 2,
                      dash: l.dash, points: { show: x.length < 40 } });
        columns.push(l.values);
      });
      const opts = { width: 900, height: 300, series: series,
                     scales: { x: { time: false } },
                     axes: [{ label: xLabel }, { label: yLabel }] };
      if (band) opts.bands = [{ series: [band[0] + 1, band[1] + 1], fill: 'rgba(31,119,180,0.15)' }];
      opts.hooks = { draw: [] };
      if (labels) {
        box.dataset.labels = labels.join('|');
        opts.hooks.draw.push((u) => {
          const ctx = u.ctx;
          ctx.save();
          ctx.fillStyle = '#333';
          ctx.font = '11px sans-serif';
          labels.forEach((text, i) => {
            const px = u.valToPos(x[i], 'x', true);
            const w = ctx.measureText(text).width;
            ctx.fillText(text, px - w / 2, u.bbox.top + 12 + 13 * (i % 2));
          });
          ctx.restore();
        });
      }
      if (marks) {
        opts.hooks.draw.push((u) => {
          const ctx = u.ctx;
          ctx.save();
          ctx.strokeStyle = '#444';
          ctx.fillStyle = '#444';
          ctx.setLineDash([4, 4]);
          ctx.lineWidth = 1;
          ctx.font = '12px sans-serif';
          const vertical = (x, label, row) => {
            const px = u.valToPos(x, 'x', true);
            ctx.beginPath();
            ctx.moveTo(px, u.bbox.top);
            ctx.lineTo(px, u.bbox.top + u.bbox.height);
            ctx.stroke();
            ctx.fillText(label, px + 4, u.bbox.top + 14 * row);
          };
          if (marks.x != null) vertical(marks.x, marks.xLabel, 1);
          if (marks.knee != null) vertical(marks.knee, marks.kneeLabel, 2);
          if (marks.y != null) {
            const py = u.valToPos(marks.y, 'y', true);
            ctx.beginPath();
            ctx.moveTo(u.bbox.left, py);
            ctx.lineTo(u.bbox.left + u.bbox.width, py);
            ctx.stroke();
            const w = ctx.measureText(marks.yLabel).width;
            ctx.fillText(marks.yLabel, u.bbox.left + u.bbox.width - w - 4, py - 4);
          }
          ctx.restore();
        });
        if (marks.y != null) {
          // Keep T on the chart even when every makespan is far below it.
          const top = Math.max(marks.y, ...lines.map((l) => Math.max(...l.values)));
          opts.scales.y = { range: (u, lo, hi) => [0, Math.max(hi, top) * 1.05] };
        }
      }
      new uPlot(opts, columns, box);
      box.dataset.drawn = 'true';
    } catch (e) {
      fail(title + ': ' + e);
    }
  }
  const hours = (v) => v.map((s) => s / 3600);
  const answer = data.answer;
  const q = answer ? answer.quantile_name : 'quantile';
  const any = (v) => v && v.some((s) => s > 0);
  function sweepLines(d) {
    const edge = '#9ecae1';
    const lines =
        [{ label: 'makespan, slowest replication', values: hours(d.max), stroke: edge, width: 1 },
         { label: 'makespan, fastest replication', values: hours(d.min), stroke: edge, width: 1 },
         { label: 'makespan ' + q, values: hours(d.makespan) },
         { label: 'makespan median', values: hours(d.median) },
         { label: 'run p50', values: hours(d.p50) },
         { label: 'run p95', values: hours(d.p95) },
         { label: 'waves x single run', values: hours(d.waves), dash: [6, 4] }];
    // A shared service's demand alone: the floor more nodes cannot lower.
    if (any(d.store)) {
      lines.push({ label: 'artifact store alone', values: hours(d.store), stroke: '#8c564b',
                   dash: [2, 3] });
    }
    if (any(d.api)) {
      lines.push({ label: 'API server alone', values: hours(d.api), stroke: '#e377c2',
                   dash: [2, 3] });
    }
    return lines;
  }
  // The first x from which a shared service's demand alone is at least the
  // nodes' waves estimate: from there on, scaling is no longer linear.
  function knee(d, x) {
    for (let i = 0; i < x.length; ++i) {
      const floor = Math.max(d.store ? d.store[i] : 0, d.api ? d.api[i] : 0);
      if (floor > 0 && floor >= d.waves[i]) return x[i];
    }
    return null;
  }
  function marks(d, x, at, label, kneeText) {
    const m = { x: answer ? at : null, xLabel: answer ? label : '' };
    if (answer && answer.deadline_seconds) {
      m.y = answer.deadline_seconds / 3600;
      m.yLabel = 'T = ' + answer.deadline_text;
    }
    const k = knee(d, x);
    if (k != null) {
      m.knee = k;
      m.kneeLabel = kneeText + k;
    }
    return (m.x == null && m.y == null && m.knee == null) ? null : m;
  }
  if (data.by_runs) {
    const d = data.by_runs;
    chart('Makespan and run duration versus runs (at ' + d.nodes[0] + ' nodes)', 'runs',
          'hours', d.runs, sweepLines(d),
          marks(d, d.runs, answer && answer.runs, answer ? 'N = ' + answer.runs : '',
                'a shared service alone sets the pace from runs = '), [0, 1]);
  }
  if (data.by_nodes) {
    const d = data.by_nodes;
    chart('Makespan and run duration versus nodes (' + d.runs[0] + ' runs)', 'nodes', 'hours',
          d.nodes, sweepLines(d),
          marks(d, d.nodes, answer && answer.nodes, answer ? 'K = ' + answer.nodes : '',
                'more nodes stop helping from nodes = '), [0, 1]);
  }
  // The share of replications finishing within T, with its interval as a
  // band, and the quantile the answer is held to.
  function withinChart(d, x, xLabel, at, atLabel) {
    if (!answer || !answer.deadline_seconds || !d.within || d.within.every((v) => v < 0)) return;
    const pct = (v) => v.map((s) => 100 * s);
    const edge = '#9ecae1';
    chart('Replications finishing within T = ' + answer.deadline_text + ' versus ' + xLabel +
          ' (band: ' + Math.round(100 * answer.confidence) + '% Wilson interval over ' +
          answer.replications + ' replications)', xLabel, '% of replications', x,
          [{ label: 'interval high', values: pct(d.within_high), stroke: edge, width: 1 },
           { label: 'interval low', values: pct(d.within_low), stroke: edge, width: 1 },
           { label: 'within T', values: pct(d.within) }],
          { x: at, xLabel: atLabel, y: 100 * answer.quantile, yLabel: q }, [0, 1]);
  }
  // What binds at each point, named above it, and the figures it is named by.
  function bindsChart(d, x, xLabel) {
    if (!d.binds) return;
    const pct = (v) => v.map((s) => 100 * s);
    chart('What binds versus ' + xLabel, xLabel, '%', x,
          [{ label: 'CPU allocated', values: pct(d.cpu_util) },
           { label: 'memory allocated', values: pct(d.memory_util) },
           { label: 'task time waiting for a node', values: pct(d.pending_share) },
           { label: 'held inside the artifact store', values: pct(d.store_share) },
           { label: 'held inside the API', values: pct(d.api_share) }],
          null, null, d.binds);
  }
  if (data.by_runs) {
    withinChart(data.by_runs, data.by_runs.runs, 'runs', answer && answer.runs,
                answer ? 'N = ' + answer.runs : '');
    bindsChart(data.by_runs, data.by_runs.runs, 'runs');
  }
  if (data.by_nodes) {
    withinChart(data.by_nodes, data.by_nodes.nodes, 'nodes', answer && answer.nodes,
                answer ? 'K = ' + answer.nodes : '');
    bindsChart(data.by_nodes, data.by_nodes.nodes, 'nodes');
  }
  // The levels a calibration was fitted to (the calibration file's
  // fit.summary), one point each: measured, predicted, the near-equal fits'
  // band, and above each its role and error on a level the fit did not see.
  function fitChart(f) {
    const levels = f.levels;
    const x = levels.map((l, i) => i + 1);
    const seconds = (key) => levels.map((l) => (l[key] != null ? l[key] / 3600 : null));
    const pct = (e) => (e >= 0 ? '+' : '') + (100 * e).toFixed(1) + '%';
    const labels = levels.map((l) => {
      let text = l.name + ': ' + l.role;
      if (l.role === 'held out' && l.error != null) text += ' ' + pct(l.error);
      if (l.leave_one_out_error != null) text += ', left out ' + pct(l.leave_one_out_error);
      return text;
    });
    const edge = '#9ecae1';
    chart('Calibration: makespan of each level, measured and predicted (' +
          (f.identifiability.decided ? 'the near-equal fits agree' :
           'the near-equal fits disagree: the data cannot decide') + ')', 'level', 'hours', x,
          [{ label: 'near-equal fits, highest',
             values: levels.map((l) => l.near_fits_makespan_seconds[1] / 3600), stroke: edge, width: 1 },
           { label: 'near-equal fits, lowest',
             values: levels.map((l) => l.near_fits_makespan_seconds[0] / 3600), stroke: edge, width: 1 },
           { label: 'measured', values: seconds('measured_makespan_seconds') },
           { label: 'predicted by the fit', values: seconds('predicted_makespan_seconds'), dash: [6, 3] }],
          null, [0, 1], labels);
  }
  if (data.fit) fitChart(data.fit);
  if (data.series) {
    const s = data.series;
    const t = s.t.map((v) => v / 3600);
    chart('Nodes and CPU over time', 'hours', 'count / cores', t,
          [{ label: 'nodes', values: s.nodes },
           { label: 'CPU allocated', values: s.cpu_used },
           { label: 'CPU capacity', values: s.cpu_capacity }]);
    chart('Utilisation over time', 'hours', '% of CPU allocated', t,
          [{ label: 'CPU allocated', values: s.cpu_used.map(
              (u, i) => (s.cpu_capacity[i] > 0 ? (100 * u) / s.cpu_capacity[i] : 0)) }]);
    chart('Work waiting over time', 'hours', 'count', t,
          [{ label: 'pending tasks', values: s.pending_tasks },
           { label: 'runs alive', values: s.runs_alive }]);
  }
  const status = document.getElementById('status');
  status.dataset.ready = 'true';
})();
)JS";

constexpr const char* kPageCss = R"CSS(
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
pre.summary { background: #f6f6f6; padding: 0.8em; border-radius: 4px; white-space: pre-wrap; }
section.chart { margin: 1.5em 0; }
section.chart h2 { font-size: 1.05em; }
#errors { color: #b00; }
)CSS";

}  // namespace

Result<Sweeps> SweepAround(const sim::ClusterSpec& cluster, const sim::WorkloadSpec& workload,
                           int64_t runs, int nodes, const Replications& reps, Duration limit) {
  if (runs <= 0 || nodes <= 0) return Error{"a sweep needs positive runs and nodes"};
  Sweeps out;
  std::set<int64_t> run_counts;
  for (double f : {0.125, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0}) {
    run_counts.insert(std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(runs) * f)));
  }
  for (int64_t n : run_counts) {
    auto p = SweepProbe(cluster, workload, n, nodes, reps, limit);
    if (!p.ok()) return p.error();
    out.by_runs.push_back(*p);
  }
  std::set<int> node_counts;
  for (double f : {0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 4.0}) {
    node_counts.insert(std::max(1, static_cast<int>(static_cast<double>(nodes) * f)));
  }
  for (int k : node_counts) {
    auto p = SweepProbe(cluster, workload, runs, k, reps, limit);
    if (!p.ok()) return p.error();
    out.by_nodes.push_back(*p);
  }
  return out;
}

json PageData(const CapacityPage& page) {
  json j = json::object();
  if (page.sweeps != nullptr) {
    if (!page.sweeps->by_runs.empty()) j["by_runs"] = Columns(page.sweeps->by_runs);
    if (!page.sweeps->by_nodes.empty()) j["by_nodes"] = Columns(page.sweeps->by_nodes);
  }
  if (page.over_time != nullptr) j["series"] = page.over_time->series.ToJson();
  if (page.fit != nullptr && page.fit->contains("levels")) j["fit"] = *page.fit;
  if (page.answer != nullptr) {
    const Answer& a = *page.answer;
    j["answer"] = {{"nodes", a.nodes},
                   {"runs", a.runs},
                   {"quantile", a.replications.quantile},
                   {"quantile_name", QuantileName(a.replications.quantile)},
                   {"replications", a.replications.count},
                   {"makespan_seconds", ToSeconds(a.makespan)},
                   {"median_seconds", ToSeconds(a.at_answer.median)},
                   {"min_seconds", ToSeconds(a.at_answer.min)},
                   {"max_seconds", ToSeconds(a.at_answer.max)},
                   {"replications_taken", a.at_answer.makespans.size()},
                   {"confidence", a.replications.confidence},
                   {"binds", a.binds}};
    if (a.at_answer.verdict != Verdict::kNotJudged) {
      j["answer"]["probability"] = a.at_answer.within.Estimate();
      j["answer"]["interval"] = {a.at_answer.within.low, a.at_answer.within.high};
      j["answer"]["verdict"] = VerdictName(a.at_answer.verdict);
    }
    if (a.deadline > Duration::zero()) {
      j["answer"]["deadline_seconds"] = ToSeconds(a.deadline);
      j["answer"]["deadline_text"] = FormatDurationExact(a.deadline);
    }
  }
  return j;
}

std::string RenderCapacityPage(const CapacityPage& page) {
  std::string html = report::PageHead(page.title);
  html += kPageCss;
  html += "</style>\n</head>\n<body>\n<h1>";
  html += report::EscapeMarkup(page.title);
  html += "</h1>\n<ul id=\"errors\" hidden></ul>\n";
  html += "<div id=\"status\" data-ready=\"false\" hidden></div>\n";
  html += "<pre class=\"summary\">";
  html += report::EscapeMarkup(page.summary);
  html += "</pre>\n<div id=\"charts\"></div>\n";
  html +=
      "<noscript><p>The charts need JavaScript; their data are in the element "
      "capacity-data below.</p></noscript>\n";
  html += "<script type=\"application/json\" id=\"capacity-data\">";
  html += report::ScriptJson(PageData(page));
  html += "</script>\n";
  html += report::UplotScript();
  html += "<script>";
  html += report::Inline(kPageJs, "script");
  html += "</script>\n</body>\n</html>\n";
  return html;
}

Status WriteCapacityPage(const CapacityPage& page, const std::filesystem::path& path) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  return WriteFileAtomically(path, RenderCapacityPage(page));
}

}  // namespace kfpbench::plan
