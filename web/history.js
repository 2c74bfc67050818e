// kfpbench history page: one metric across many results, drawn with uPlot.
// The data (kfpbench history's JSON) is embedded in the page; nothing is
// fetched. As in report.js, the chart container carries data-drawn="true"
// once drawn, script errors land in #kfpbench-errors, and #kfpbench-status
// gets data-ready="true" when the page is done.
(function () {
  "use strict";

  const { el } = kfpbenchPage;

  const H = JSON.parse(document.getElementById("kfpbench-history").textContent);
  const COLORS = { p50: "#1f77b4", p95: "#ff7f0e", p99: "#d62728", mean: "#2ca02c" };

  function fmtMs(ms) {
    if (!isFinite(ms)) return "–";
    if (ms >= 1000) return (ms / 1000).toFixed(2) + " s";
    if (ms >= 10) return ms.toFixed(1) + " ms";
    return ms.toFixed(2) + " ms";
  }

  function table(head, rows) {
    const t = el("table", {});
    t.appendChild(el("thead", {}, el("tr", {}, ...head.map((h) => el("th", {}, h)))));
    const body = el("tbody", {});
    for (const r of rows) body.appendChild(el("tr", {}, ...r.map((c) => el("td", {}, c))));
    t.appendChild(body);
    return t;
  }

  function main() {
    const app = document.getElementById("app");
    app.appendChild(el("h1", {}, "kfpbench history — " + H.metric));
    app.appendChild(el("p", { class: "note" },
      H.points.length + " results, in order; each point is one results folder."));

    const chart = el("section", {}, el("h2", {}, H.metric + " per run"));
    app.appendChild(chart);
    const box = el("div", { class: "chart", "data-chart": "history", "data-drawn": "false" });
    chart.appendChild(box);
    const withData = H.points.filter((p) => p.count > 0);
    if (withData.length === 0) {
      box.appendChild(el("p", { class: "empty" }, "No samples of " + H.metric + " in these results."));
      box.setAttribute("data-drawn", "empty");
    } else {
      const xs = H.points.map((_, i) => i + 1);
      const stat = (k) => H.points.map((p) => (p.count > 0 ? p[k + "_ms"] : null));
      const series = [{ label: "run" }];
      const data = [xs];
      for (const k of ["p50", "p95", "p99", "mean"]) {
        series.push({ label: k, stroke: COLORS[k], width: 2, points: { show: true },
                      value: (u, v) => (v === null ? "–" : fmtMs(v)) });
        data.push(stat(k));
      }
      // The fitted p95 line, so the slope the verdict speaks of is visible.
      const p95 = H.trends.find((t) => t.stat === "p95");
      if (p95 && p95.verdict !== "too few runs") {
        const ys = withData.map((p) => p.p95_ms);
        const idx = H.points.map((p, i) => (p.count > 0 ? i : -1)).filter((i) => i >= 0);
        const mx = idx.reduce((a, b) => a + b, 0) / idx.length;
        const my = ys.reduce((a, b) => a + b, 0) / ys.length;
        series.push({ label: "p95 trend (" + p95.verdict + ")", stroke: "#888", dash: [6, 4], width: 1,
                      value: (u, v) => (v === null ? "–" : fmtMs(v)) });
        data.push(H.points.map((_, i) => my + p95.slope_per_run * (i - mx)));
      }
      const opts = {
        width: Math.max(300, box.clientWidth || 800),
        height: 320,
        scales: { x: { time: false } },
        axes: [{ label: "run (in order)", incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000] }, { label: "ms", values: (u, vals) => vals.map((v) => fmtMs(v)) }],
        series: series,
        hooks: { draw: [() => box.setAttribute("data-drawn", "true")] },
      };
      new uPlot(opts, data, box);
    }

    const trends = el("section", {}, el("h2", {}, "Trend"));
    trends.appendChild(el("p", { class: "note" },
      "Least squares slope per run; the verdict needs a Mann-Kendall p below 0.05 and a drift " +
      "over the runs above 5% (1 percentage point for the error rate)."));
    trends.appendChild(table(["stat", "runs", "slope per run", "drift over the runs", "p", "verdict"],
      H.trends.map((t) => [t.stat, String(t.n),
        t.stat === "error_rate" ? (t.slope_per_run * 100).toFixed(3) + " points" : fmtMs(t.slope_per_run),
        t.stat === "error_rate" ? (t.drift * 100).toFixed(2) + " points" : (t.drift * 100).toFixed(1) + "%",
        t.p_value.toPrecision(3), t.verdict])));
    app.appendChild(trends);

    const points = el("section", {}, el("h2", {}, "Results"));
    points.appendChild(table(["#", "started", "version", "count", "p50", "p95", "p99", "mean", "errors", "results"],
      H.points.map((p, i) => [String(i + 1), p.started_at || "–", p.target_version || "–", String(p.count),
        p.count ? fmtMs(p.p50_ms) : "–", p.count ? fmtMs(p.p95_ms) : "–", p.count ? fmtMs(p.p99_ms) : "–",
        p.count ? fmtMs(p.mean_ms) : "–", (p.error_rate * 100).toFixed(2) + "%", p.source])));
    app.appendChild(points);
  }

  try {
    main();
  } catch (e) {
    reportError(e && e.stack ? e.stack : e);
  }
  document.getElementById("kfpbench-status").setAttribute("data-ready", "true");
})();
