// kfpbench job report: draws a sweep's results (results.json's "jobs",
// embedded in the page) — the runs as a table and, with uPlot, each parsed
// metric against each swept parameter: a numeric axis when every value of the
// parameter is a number (base-2 log when they span 16x or more, as batch sizes
// do), categorical otherwise, one series per combination of the other swept
// parameters. Same conventions as report.js: data-drawn on every chart, script
// errors in #kfpbench-errors, #kfpbench-status data-ready="true" when done.
(function () {
  "use strict";

  const { el, section, table } = kfpbenchPage;

  const J = JSON.parse(document.getElementById("kfpbench-jobs").textContent);
  const runs = J.runs || [];
  const PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
                   "#7f7f7f", "#bcbd22", "#17becf"];

  function fmt(v) {
    if (typeof v !== "number" || !isFinite(v)) return "–";
    return Math.abs(v) >= 1000 || Number.isInteger(v) ? v.toFixed(0) : v.toPrecision(4);
  }

  const metricNames = Array.from(new Set(runs.flatMap((r) => Object.keys(r.metrics || {})))).sort();
  const paramNames = Array.from(new Set(runs.flatMap((r) => Object.keys(r.parameters || {})))).sort();
  // The sweep's own parameters; older files without "swept": those that vary.
  const swept = (J.swept && J.swept.length ? J.swept : paramNames.filter(
    (p) => new Set(runs.map((r) => (r.parameters || {})[p])).size > 1)).filter((p) => paramNames.includes(p));

  function header() {
    const ok = runs.filter((r) => r.status === "Succeeded").length;
    const h = el("header", {},
      el("h1", {}, "kfpbench job report"),
      el("p", {}, (J.config || "?") + " · " + (J.kind || "?") + " · driver " + (J.driver || "?") + " · " +
        runs.length + " runs, " + ok + " succeeded" + (swept.length ? " · swept: " + swept.join(", ") : "")));
    document.getElementById("app").appendChild(h);
  }

  function runsTable() {
    const s = section("Runs", "One row per sweep point, as in results.csv; a metric no replica logged is –.");
    s.appendChild(table(["run", "job", "status", "duration"].concat(paramNames, metricNames),
      runs.map((r) => [r.run, r.jobName, r.status, fmt(r.durationSeconds) + " s"].concat(
        paramNames.map((p) => (r.parameters || {})[p]), metricNames.map((m) => fmt((r.metrics || {})[m])))), 3));
    const failed = runs.filter((r) => r.error);
    if (failed.length) {
      s.appendChild(el("h3", {}, "Failures"));
      for (const r of failed) s.appendChild(el("pre", {}, r.jobName + ": " + r.error));
    }
  }

  function isNumber(text) {
    return typeof text === "string" && text.trim() !== "" && isFinite(Number(text));
  }

  // One chart: metric `m` against parameter `p`.
  function chart(parent, m, p) {
    const box = el("div", { class: "chart", "data-chart": "metric-vs-param", "data-metric": m, "data-param": p, "data-drawn": "false" },
      el("h3", {}, m + " vs " + p));
    parent.appendChild(box);
    const others = swept.filter((q) => q !== p);
    const values = runs.map((r) => (r.parameters || {})[p]);
    const numeric = values.length > 0 && values.every(isNumber);
    const points = runs.filter((r) => r.status === "Succeeded" && typeof (r.metrics || {})[m] === "number" &&
      (r.parameters || {})[p] !== undefined);
    if (points.length === 0) {
      box.appendChild(el("p", { class: "empty" }, "No succeeded run logged " + m + "."));
      box.setAttribute("data-drawn", "empty");
      return;
    }
    let labels = [];
    let xs;
    if (numeric) {
      xs = Array.from(new Set(values.map(Number))).sort((a, b) => a - b);
    } else {
      labels = Array.from(new Set(values));
      xs = labels.map((_, i) => i);
    }
    const xOf = (r) => (numeric ? Number(r.parameters[p]) : labels.indexOf(r.parameters[p]));
    const groupOf = (r) => others.map((q) => q + "=" + r.parameters[q]).join(", ") || m;
    const groups = Array.from(new Set(points.map(groupOf)));
    // Repeated points (same parameters) are averaged.
    const series = groups.map((g) => xs.map((x) => {
      const ys = points.filter((r) => groupOf(r) === g && xOf(r) === x).map((r) => r.metrics[m]);
      return ys.length ? ys.reduce((a, b) => a + b, 0) / ys.length : null;
    }));
    const positive = numeric && xs[0] > 0;
    const log = positive && xs.length > 1 && xs[xs.length - 1] / xs[0] >= 16;
    box.setAttribute("data-axis", log ? "log2" : numeric ? "numeric" : "categorical");
    const xScale = { time: false };
    if (log) {
      xScale.distr = 3;
      xScale.log = 2;
    } else if (!numeric) {
      xScale.range = [-0.5, xs.length - 0.5];
    } else if (xs.length === 1) {
      xScale.range = [xs[0] - 1, xs[0] + 1];
    }
    const xAxis = { label: p + (numeric ? "" : " (categories)") };
    if (!numeric) {
      xAxis.splits = () => xs;
      xAxis.values = (u, splits) => splits.map((i) => (Number.isInteger(i) && labels[i] !== undefined ? labels[i] : ""));
    } else if (log) {
      xAxis.splits = () => xs;
    }
    const width = Math.max(300, box.clientWidth || 600);
    new uPlot({
      width: width,
      height: 260,
      scales: { x: xScale },
      axes: [xAxis, { label: m, size: 70 }],
      series: [{ label: p, value: (u, v) => (v === null ? "–" : numeric ? String(v) : labels[v]) }].concat(
        groups.map((g, i) => ({ label: g, stroke: PALETTE[i % PALETTE.length], width: 2, spanGaps: true,
          points: { show: true, size: 8 }, value: (u, v) => fmt(v) }))),
      hooks: { draw: [() => box.setAttribute("data-drawn", "true")] },
    }, [xs].concat(series), box);
  }

  function charts() {
    const s = section("Metric versus parameter",
      "Each parsed metric against each swept parameter, over succeeded runs; with several swept parameters, one line per combination of the others.");
    if (swept.length === 0 || metricNames.length === 0) {
      s.appendChild(el("p", { class: "note" }, swept.length === 0 ? "The config sweeps no parameter." : "The config parses no metric."));
      return;
    }
    const grid = el("div", { class: "grid" });
    s.appendChild(grid);
    for (const m of metricNames) for (const p of swept) chart(grid, m, p);
  }

  for (const part of [header, runsTable, charts]) {
    try {
      part();
    } catch (e) {
      reportError(part.name + ": " + (e && e.stack ? e.stack : e));
    }
  }
  document.getElementById("kfpbench-status").setAttribute("data-ready", "true");
})();
