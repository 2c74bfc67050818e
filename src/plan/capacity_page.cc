#include "plan/capacity_page.h"

#include <algorithm>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "plan/plan.h"
#include "report/html_inline.h"
#include "report/markup.h"
#include "util/files.h"

namespace kfpbench::plan {
namespace {

using nlohmann::json;

Result<SweepPoint> SweepProbe(const sim::ClusterSpec& cluster, const sim::WorkloadSpec& workload,
                              int64_t runs, int nodes) {
  auto r = SimulateAllAtOnce(cluster, workload, runs, nodes);
  if (!r.ok()) return r.error();
  SweepPoint p;
  p.nodes = nodes;
  p.runs = runs;
  p.makespan_s = ToSeconds(r->makespan);
  p.p50_s = r->run_ms.ValueAtPercentile(50) / 1000.0;
  p.p95_s = r->run_ms.ValueAtPercentile(95) / 1000.0;
  if (auto waves = Waves(cluster, workload, runs, nodes); waves.ok()) {
    p.waves_s = ToSeconds(waves->time);
  }
  return p;
}

json Columns(const std::vector<SweepPoint>& points) {
  json j = {{"nodes", json::array()}, {"runs", json::array()}, {"makespan", json::array()},
            {"p50", json::array()},   {"p95", json::array()},  {"waves", json::array()}};
  for (const auto& p : points) {
    j["nodes"].push_back(p.nodes);
    j["runs"].push_back(p.runs);
    j["makespan"].push_back(p.makespan_s);
    j["p50"].push_back(p.p50_s);
    j["p95"].push_back(p.p95_s);
    j["waves"].push_back(p.waves_s);
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
  function chart(title, xLabel, yLabel, x, lines) {
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
        series.push({ label: l.label, stroke: colors[i % colors.length], width: 2,
                      dash: l.dash, points: { show: x.length < 40 } });
        columns.push(l.values);
      });
      new uPlot({ width: 900, height: 300, series: series,
                  scales: { x: { time: false } },
                  axes: [{ label: xLabel }, { label: yLabel }] }, columns, box);
      box.dataset.drawn = 'true';
    } catch (e) {
      fail(title + ': ' + e);
    }
  }
  const hours = (v) => v.map((s) => s / 3600);
  if (data.by_runs) {
    const d = data.by_runs;
    chart('Makespan and run duration versus runs (at ' + d.nodes[0] + ' nodes)', 'runs',
          'hours', d.runs, [{ label: 'makespan', values: hours(d.makespan) },
                            { label: 'run p50', values: hours(d.p50) },
                            { label: 'run p95', values: hours(d.p95) },
                            { label: 'waves x single run', values: hours(d.waves), dash: [6, 4] }]);
  }
  if (data.by_nodes) {
    const d = data.by_nodes;
    chart('Makespan and run duration versus nodes (' + d.runs[0] + ' runs)', 'nodes', 'hours',
          d.nodes, [{ label: 'makespan', values: hours(d.makespan) },
                    { label: 'run p50', values: hours(d.p50) },
                    { label: 'run p95', values: hours(d.p95) },
                    { label: 'waves x single run', values: hours(d.waves), dash: [6, 4] }]);
  }
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
                           int64_t runs, int nodes) {
  if (runs <= 0 || nodes <= 0) return Error{"a sweep needs positive runs and nodes"};
  Sweeps out;
  std::set<int64_t> run_counts;
  for (double f : {0.125, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0}) {
    run_counts.insert(std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(runs) * f)));
  }
  for (int64_t n : run_counts) {
    auto p = SweepProbe(cluster, workload, n, nodes);
    if (!p.ok()) return p.error();
    out.by_runs.push_back(*p);
  }
  std::set<int> node_counts;
  for (double f : {0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 4.0}) {
    node_counts.insert(std::max(1, static_cast<int>(static_cast<double>(nodes) * f)));
  }
  for (int k : node_counts) {
    auto p = SweepProbe(cluster, workload, runs, k);
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
