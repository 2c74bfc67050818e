// kfpbench HTML report: draws results.json (embedded in the page) with uPlot
// and a canvas timeline. Everything is inlined at build time; the page loads
// nothing from anywhere.
//
// For automated checks, every chart container carries data-drawn="true" once
// it has drawn ("empty" when there was nothing to draw), any script error is
// appended to #kfpbench-errors as an <li class="js-error">, and
// #kfpbench-status gets data-ready="true" when the whole page is done.
(function () {
  "use strict";

  const { el, section, table } = kfpbenchPage;

  const R = JSON.parse(document.getElementById("kfpbench-results").textContent);
  const V = JSON.parse(document.getElementById("kfpbench-verdicts").textContent);
  // What changes the meaning of the figures (report/caveats.h), as the
  // console, Markdown and JUnit say it.
  const C = JSON.parse(document.getElementById("kfpbench-caveats").textContent);
  const PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
                   "#7f7f7f", "#bcbd22", "#17becf"];
  const MAX_LATENCY_CHARTS = 8;
  const MAX_TIMELINE_RUNS = 300;
  // More lanes than this and the timeline starts folded, so that it does not
  // push the sections after it a screen or more down.
  const OPEN_TIMELINE_RUNS = 40;

  // ---- small helpers --------------------------------------------------------

  function fmtMs(ms) {
    if (ms === null || ms === undefined || !isFinite(ms)) return "–";
    const a = Math.abs(ms);
    if (a < 1) return (ms * 1000).toFixed(0) + " µs";
    if (a < 1000) return ms.toPrecision(3) + " ms";
    if (a < 60000) return (ms / 1000).toPrecision(3) + " s";
    const s = Math.round(ms / 1000);
    if (a < 3600000) return Math.floor(s / 60) + "m" + (s % 60) + "s";
    return Math.floor(s / 3600) + "h" + Math.floor((s % 3600) / 60) + "m";
  }

  function parseTime(text) {
    if (!text) return null;
    const t = Date.parse(text);
    return isNaN(t) ? null : t;
  }

  // A chart container whose data-drawn flag automated checks read.
  function chartBox(parent, id, title) {
    const box = el("div", { class: "chart", "data-chart": id, "data-drawn": "false" });
    if (title) box.appendChild(el("h3", {}, title));
    parent.appendChild(box);
    return box;
  }

  function markEmpty(box, why) {
    box.appendChild(el("p", { class: "empty" }, why));
    box.setAttribute("data-drawn", "empty");
  }

  function plot(box, opts, data) {
    const width = Math.max(300, box.clientWidth || 600);
    opts.width = width;
    opts.height = opts.height || 260;
    opts.hooks = opts.hooks || {};
    opts.hooks.draw = [() => box.setAttribute("data-drawn", "true")];
    return new uPlot(opts, data, box);
  }

  // The histogram's bucket arithmetic (src/metrics/histogram.cc): exact below
  // 256, then 128 buckets per power of two; a bucket is shown by its upper edge.
  function bucketHighest(index) {
    if (index < 256) return index;
    const shift = Math.floor(index / 128) - 1;
    const mantissa = index - shift * 128;
    return mantissa * Math.pow(2, shift) + Math.pow(2, shift) - 1;
  }

  const opNames = Object.keys(R.operations || {}).sort(
    (a, b) => R.operations[b].count - R.operations[a].count || a.localeCompare(b));
  const color = {};
  opNames.forEach((n, i) => (color[n] = PALETTE[i % PALETTE.length]));

  // ---- header ---------------------------------------------------------------

  // "0 runs" after a growth fill's thousands would read as nothing happened:
  // its runs are created, not followed one by one.
  function runsText() {
    const followed = R.runs ? R.runs.count : 0;
    if (!noRunsButGrowth()) return followed + " runs";
    let filled = 0;
    for (const g of Object.values(R.growth || {})) for (const l of g.levels || []) filled += l.fill.runs_created;
    return filled + " runs created by the growth fill";
  }

  function header() {
    const failed = V.filter((v) => !v.passed).length;
    const badge = V.length === 0 ? el("span", { class: "badge" }, "no thresholds")
      : failed ? el("span", { class: "badge fail" }, failed + " of " + V.length + " thresholds failed")
      : el("span", { class: "badge pass" }, "all " + V.length + " thresholds passed");
    const h = el("header", {},
      el("h1", {}, "kfpbench report ", badge),
      el("p", {}, (R.scenario && R.scenario.path ? R.scenario.path + " against " : "against ") +
        (R.target ? R.target.url : "?") + (R.target && R.target.embedded ? " (embedded backend)" : "") +
        " · " + (R.started_at || "?") + " · " + Number(R.elapsed_s || 0).toFixed(1) + " s · " + runsText()));
    document.getElementById("app").appendChild(h);
  }

  // First on the page, thresholds or not: the caveats, then what was
  // measured, a line each.
  function summary() {
    const s = el("section", { id: "kfpbench-summary" }, el("h2", {}, "Summary"));
    if (C.length) {
      const ul = el("ul", { class: "caveats" });
      for (const c of C) ul.appendChild(el("li", { class: "warn", "data-caveat": c.key }, c.text));
      s.appendChild(ul);
    }
    const lines = el("ul");
    let calls = 0, errors = 0;
    for (const o of Object.values(R.operations || {})) { calls += o.count || 0; errors += o.errors || 0; }
    lines.appendChild(el("li", {}, calls + " API calls, " + errors + " failed"));
    if (!noRunsButGrowth()) {
      const r = R.runs || {};
      const states = Object.entries(r.by_state || {}).map(([k, v]) => v + " " + k).join(", ");
      const d = r.duration_ms;
      lines.appendChild(el("li", {}, (r.count || 0) + " runs" + (states ? " (" + states + ")" : "") +
        (d && d.count ? "; run duration p50 " + fmtMs(d.p50) + ", p95 " + fmtMs(d.p95) + ", max " + fmtMs(d.max) : "")));
    } else {
      lines.appendChild(el("li", {}, runsText()));
    }
    const failed = V.filter((v) => !v.passed).length;
    lines.appendChild(el("li", failed ? { class: "fail" } : {}, V.length === 0 ? "no thresholds set"
      : failed ? failed + " of " + V.length + " thresholds failed" : "all " + V.length + " thresholds passed"));
    if ((R.errors || []).length) lines.appendChild(el("li", { class: "fail" }, R.errors.length + " scenario error(s), listed under Environment"));
    s.appendChild(lines);
    document.getElementById("app").appendChild(s);
  }

  function verdicts() {
    const s = section("Thresholds");
    if (V.length === 0) {
      s.appendChild(el("p", { class: "note" }, "The scenario file sets no thresholds."));
      return;
    }
    s.appendChild(table(["", "metric", "threshold", "observed", "limit", "margin"], V.map((v) => [
      el("span", { class: v.passed ? "pass" : "fail" }, v.passed ? "✔ pass" : "✘ fail"),
      v.metric, el("code", {}, v.expression), v.observed_text, v.limit_text, v.margin]), 3));
  }

  // The calls of every growth level's measured mix, per operation (its
  // variants, ListRuns:deep, are calls of ListRuns): what a growth scenario
  // measured, apart from its fill's calls.
  function measuredCalls() {
    const out = {};
    for (const g of Object.values(R.growth || {})) {
      for (const l of g.levels || []) {
        for (const [op, o] of Object.entries(l.operations || {})) {
          const name = op.split(":")[0];
          out[name] = (out[name] || 0) + o.latency_us.count;
        }
      }
    }
    return out;
  }

  function operationsTable() {
    const growth = Object.keys(R.growth || {}).length > 0;
    const s = growth
      ? section("API calls, every phase", "The fill, its settling and the measured mix together; the measured mix alone, level by level, is in Growth above. Latency percentiles by nearest rank over a log-linear histogram (at most 0.78 % above the true value).")
      : section("API calls", "Latency percentiles by nearest rank over a log-linear histogram (at most 0.78 % above the true value).");
    const measured = growth ? measuredCalls() : {};
    const phases = growth ? ["fill and settling", "measured mix"] : [];
    s.appendChild(table(["operation", "calls"].concat(phases, ["errors", "error rate", "calls/s", "p50", "p90", "p95", "p99", "p99.9", "max"]),
      opNames.map((n) => {
        const o = R.operations[n], l = o.latency_us;
        const name = el("span", {}, el("span", { class: "swatch", style: "background:" + color[n] }), " " + n);
        const split = growth ? [Math.max(0, o.count - (measured[n] || 0)), measured[n] || 0] : [];
        return [name, o.count].concat(split, [o.errors, (100 * o.error_rate).toFixed(2) + " %", o.throughput_per_s.toFixed(2),
          fmtMs(l.p50 / 1000), fmtMs(l.p90 / 1000), fmtMs(l.p95 / 1000), fmtMs(l.p99 / 1000),
          fmtMs(l.p999 / 1000), fmtMs(l.max / 1000)]);
      }), 1));
  }

  // What following the runs asked of the target, apart from the workload above.
  function observerCalls() {
    const o = R.observer;
    if (!o) return;
    const s = section("Observer calls", "kfpbench's own calls to follow its runs (not in the API calls above): " +
      o.calls + " calls, " + (100 * o.share_of_calls).toFixed(1) + " % of all calls, " + o.calls_per_run.toFixed(2) +
      " per run; budget " + (o.qps_budget > 0 ? o.qps_budget + "/s" : "unlimited") + ".");
    s.appendChild(table(["operation", "calls", "errors", "calls/s", "p50", "p95", "p99", "max"],
      Object.keys(o.operations || {}).sort().map((n) => {
        const c = o.operations[n], l = c.latency_us;
        return [n, c.count, c.errors, c.throughput_per_s.toFixed(2), fmtMs(l.p50 / 1000), fmtMs(l.p95 / 1000),
          fmtMs(l.p99 / 1000), fmtMs(l.max / 1000)];
      }), 1));
    const lag = o.observe_lag_ms || {};
    s.appendChild(el("p", {}, o.runs_by_listing + " runs' ends found by listing (" + o.list_sweeps + " sweeps), " +
      o.runs_by_polling + " polled one by one" + (o.polling_reason ? " (" + o.polling_reason + ")" : "") +
      (lag.count ? "; seen after the server's finished_at by p50 " + fmtMs(lag.p50) + ", p95 " + fmtMs(lag.p95) +
        ", max " + fmtMs(lag.max) + " (this widens observed times only; durations are the server's)" : "") + "."));
  }

  // ---- charts ---------------------------------------------------------------

  function latencyOverTime() {
    const s = section("Latency over time", "Per second of the benchmark: p50, p95 and p99 of the calls that completed in that second.");
    const grid = el("div", { class: "grid" });
    s.appendChild(grid);
    const shown = opNames.slice(0, MAX_LATENCY_CHARTS);
    if (shown.length === 0) markEmpty(chartBox(grid, "latency-none", ""), "No API calls were recorded.");
    for (const n of shown) {
      const ts = R.operations[n].timeseries || [];
      const box = chartBox(grid, "latency-" + n, n);
      if (ts.length === 0) { markEmpty(box, "No calls."); continue; }
      const data = [ts.map((w) => w.t), ts.map((w) => w.p50_us / 1000), ts.map((w) => w.p95_us / 1000),
        ts.map((w) => w.p99_us / 1000)];
      plot(box, {
        height: 220,
        // Every operation on the benchmark's own time axis, so charts line up.
        scales: { x: { time: false, range: [0, Math.max(1, Math.ceil(R.elapsed_s || 0))] } },
        axes: [{ label: "seconds" }, { label: "ms", size: 60 }],
        series: [{ label: "t (s)" },
          { label: "p50", stroke: "#2ca02c", width: 1.5, value: (u, v) => fmtMs(v) },
          { label: "p95", stroke: "#ff7f0e", width: 1.5, value: (u, v) => fmtMs(v) },
          { label: "p99", stroke: "#d62728", width: 1.5, value: (u, v) => fmtMs(v) }],
      }, data);
    }
    if (opNames.length > shown.length) {
      s.appendChild(el("p", { class: "note" }, (opNames.length - shown.length) + " less frequent operations not charted."));
    }
  }

  // Percentile plot in HdrHistogram's style: x is 1/(1-q) on a log axis, so
  // 90 %, 99 %, 99.9 % are evenly spaced and the tail gets room.
  function latencyDistribution() {
    const s = section("Latency distribution", "Latency at each percentile, from the full histogram of every call (log percentile axis).");
    const box = chartBox(s, "latency-distribution", "");
    const tables = [];
    const names = [];
    let maxX = 10;
    for (const n of opNames) {
      const h = R.operations[n].histogram;
      if (!h || !h.count) continue;
      const xs = [1], ys = [null];
      let cum = 0;
      const buckets = h.buckets.slice().sort((a, b) => a[0] - b[0]);
      for (const [index, count] of buckets) {
        cum += count;
        const q = Math.min(cum / h.count, 1 - 0.5 / h.count);  // the last point stays finite
        const x = 1 / (1 - q);
        const y = Math.max(Math.min(bucketHighest(index), h.max), 1) / 1000;  // log axis: no zero
        if (x <= xs[xs.length - 1]) { ys[ys.length - 1] = y; continue; }
        if (ys[0] === null) ys[0] = y;
        xs.push(x);
        ys.push(y);
      }
      maxX = Math.max(maxX, xs[xs.length - 1]);
      tables.push([xs, ys]);
      names.push(n);
    }
    if (tables.length === 0) { markEmpty(box, "No API calls were recorded."); return; }
    const data = uPlot.join(tables);
    const splits = [];
    for (let x = 1; x <= maxX * 10; x *= 10) splits.push(x);
    const pct = (x) => {
      const q = 100 * (1 - 1 / x);
      return (q === 0 ? "0" : q.toFixed(Math.max(0, Math.round(Math.log10(x)) - 2))) + "%";
    };
    plot(box, {
      height: 320,
      scales: { x: { time: false, distr: 3, log: 10 }, y: { distr: 3, log: 10 } },
      axes: [{ label: "percentile", splits: () => splits, values: (u, vals) => vals.map(pct) },
        { label: "ms (log)", size: 60 }],
      series: [{ label: "percentile", value: (u, v) => (v === null ? "–" : pct(v)) }].concat(names.map((n) => ({
        label: n, stroke: color[n], width: 1.5, spanGaps: true, value: (u, v) => fmtMs(v) }))),
    }, data);
  }

  function throughput() {
    const s = section("Throughput and errors", "Calls completed per second, by operation, and failed calls (no response or HTTP ≥ 400) per second.");
    const box = chartBox(s, "throughput", "");
    const seconds = new Set();
    for (const n of opNames) for (const w of R.operations[n].timeseries || []) seconds.add(w.t);
    if (seconds.size === 0) { markEmpty(box, "No API calls were recorded."); return; }
    const xs = Array.from(seconds).sort((a, b) => a - b);
    const index = new Map(xs.map((t, i) => [t, i]));
    const errors = xs.map(() => 0);
    const series = opNames.map((n) => {
      const ys = xs.map(() => 0);
      for (const w of R.operations[n].timeseries || []) {
        ys[index.get(w.t)] = w.count;
        errors[index.get(w.t)] += w.errors;
      }
      return ys;
    });
    plot(box, {
      height: 280,
      scales: { x: { time: false } },
      axes: [{ label: "seconds" }, { label: "calls/s", size: 60 }],
      series: [{ label: "t (s)" }].concat(opNames.map((n) => ({ label: n, stroke: color[n], width: 1.5 })),
        [{ label: "errors/s", stroke: "#d62728", fill: "rgba(214,39,40,0.15)", width: 2, dash: [6, 3] }]),
    }, [xs].concat(series, [errors]));
  }

  // A growth scenario fills with runs it does not follow one by one: its
  // results hold no run records, and boxes saying so would only push the
  // growth section down the page.
  function noRunsButGrowth() {
    return Object.keys(R.growth || {}).length > 0 && !((R.runs && R.runs.records) || []).length;
  }

  function durationCdf() {
    if (noRunsButGrowth()) return;
    const s = section("Run duration and queue wait", "Cumulative distribution over finished runs: server created_at → finished_at, and created_at → first step started.");
    const box = chartBox(s, "run-duration-cdf", "");
    const records = (R.runs && R.runs.records) || [];
    const cdf = (key) => {
      const v = records.map((r) => r[key]).filter((x) => typeof x === "number").sort((a, b) => a - b);
      const xs = [], ys = [];
      v.forEach((x, i) => {
        const sec = x / 1000;
        if (xs.length && xs[xs.length - 1] === sec) { ys[ys.length - 1] = (i + 1) / v.length; return; }
        xs.push(sec);
        ys.push((i + 1) / v.length);
      });
      return [xs, ys];
    };
    const d = cdf("duration_ms"), w = cdf("queue_wait_ms");
    const tables = [], series = [{ label: "seconds", value: (u, v) => (v === null ? "–" : fmtMs(v * 1000)) }];
    if (d[0].length) { tables.push(d); series.push({ label: "run duration", stroke: "#1f77b4", width: 2, spanGaps: true, paths: uPlot.paths.stepped({ align: 1 }) }); }
    if (w[0].length) { tables.push(w); series.push({ label: "queue wait", stroke: "#ff7f0e", width: 2, spanGaps: true, paths: uPlot.paths.stepped({ align: 1 }) }); }
    if (tables.length === 0) { markEmpty(box, "No run finished."); return; }
    for (const sr of series.slice(1)) sr.value = (u, v) => (v === null ? "–" : (100 * v).toFixed(1) + " %");
    plot(box, {
      height: 280,
      scales: { x: { time: false }, y: { range: [0, 1] } },
      axes: [{ label: "seconds" }, { label: "fraction of runs", size: 60, values: (u, vals) => vals.map((v) => (100 * v).toFixed(0) + "%") }],
      series: series,
    }, uPlot.join(tables));
  }

  // Runs as lanes, their steps as bars: amber while a step waited (created →
  // started: control plane and capacity), blue while it ran, red if it failed.
  function timeline() {
    if (noRunsButGrowth()) return;
    const s = section("Timeline of runs", "One lane per run, in submission order. Grey: client submitted → saw the run finish; outline: server created → finished; per step: waiting (amber) and running (blue; red when failed). DAG tasks are not drawn.");
    const t0 = parseTime(R.started_at);
    const runs = ((R.runs && R.runs.records) || []).filter((r) => parseTime(r.created_at) !== null || parseTime(r.submitted_at) !== null);
    let parent = s;
    if (runs.length > OPEN_TIMELINE_RUNS) {
      parent = el("details", {}, el("summary", {}, Math.min(runs.length, MAX_TIMELINE_RUNS) + " lanes: open to show"));
      s.appendChild(parent);
    }
    const box = chartBox(parent, "timeline", "");
    if (runs.length === 0 || t0 === null) { markEmpty(box, "No run was created."); return; }
    runs.sort((a, b) => (parseTime(a.submitted_at) || parseTime(a.created_at)) - (parseTime(b.submitted_at) || parseTime(b.created_at)));
    const shown = runs.slice(0, MAX_TIMELINE_RUNS);
    let end = parseTime(R.finished_at) || t0;
    for (const r of shown) for (const k of ["observed_at", "finished_at"]) end = Math.max(end, parseTime(r[k]) || 0);
    const span = Math.max(1, end - t0);
    const left = 110, right = 20, top = 24, lane = 16;
    const width = Math.max(400, box.clientWidth || 800);
    const height = top + lane * shown.length + 30;
    const dpr = window.devicePixelRatio || 1;
    const canvas = el("canvas", { width: width * dpr, height: height * dpr, style: "width:" + width + "px;height:" + height + "px" });
    box.appendChild(canvas);
    const g = canvas.getContext("2d");
    g.scale(dpr, dpr);
    const x = (t) => left + ((t - t0) / span) * (width - left - right);
    g.font = "11px sans-serif";
    g.fillStyle = "#555";
    g.strokeStyle = "#e3e3e3";
    const step = niceStep(span / 1000 / 8);
    for (let sec = 0; sec <= span / 1000; sec += step) {
      const px = x(t0 + sec * 1000);
      g.beginPath(); g.moveTo(px, top - 4); g.lineTo(px, height - 26); g.stroke();
      g.fillText(fmtMs(sec * 1000), px - 10, height - 12);
    }
    shown.forEach((r, i) => {
      const y = top + i * lane;
      g.fillStyle = "#333";
      g.fillText((r.run_id || "(not created)").slice(0, 16), 4, y + 11);
      const sub = parseTime(r.submitted_at), obs = parseTime(r.observed_at), cr = parseTime(r.created_at), fin = parseTime(r.finished_at);
      if (sub !== null) {
        g.fillStyle = "#cfcfcf";
        g.fillRect(x(sub), y + 7, Math.max(1, x(obs || fin || sub) - x(sub)), 2);
      }
      if (cr !== null && fin !== null) {
        g.strokeStyle = r.state === "SUCCEEDED" ? "#7a9cc6" : "#d62728";
        g.strokeRect(x(cr) + 0.5, y + 1.5, Math.max(1, x(fin) - x(cr)), lane - 3);
      }
      const steps = (r.tasks || []).filter((t) => !t.dag);
      const h = Math.max(2, (lane - 5) / Math.max(1, steps.length));
      steps.forEach((t, k) => {
        const c = parseTime(t.created_at), st = parseTime(t.started_at), f = parseTime(t.finished_at);
        const ty = y + 2.5 + k * h;
        if (c !== null && st !== null) { g.fillStyle = "#f0ad4e"; g.fillRect(x(c), ty, Math.max(1, x(st) - x(c)), h); }
        if (st !== null && f !== null) { g.fillStyle = t.state === "FAILED" ? "#d62728" : "#337ab7"; g.fillRect(x(st), ty, Math.max(1, x(f) - x(st)), h); }
      });
    });
    const legend = [["#cfcfcf", "client: submitted → saw finish"], ["#f0ad4e", "step waiting"], ["#337ab7", "step running"], ["#d62728", "failed"]];
    let lx = left;
    for (const [c, label] of legend) {
      g.fillStyle = c; g.fillRect(lx, 6, 12, 10);
      g.fillStyle = "#333"; g.fillText(label, lx + 16, 15);
      lx += 24 + g.measureText(label).width;
    }
    if (runs.length > shown.length) s.appendChild(el("p", { class: "note" }, "First " + shown.length + " of " + runs.length + " runs shown."));
    box.setAttribute("data-drawn", "true");
  }

  function niceStep(raw) {
    const steps = [0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200];
    for (const s of steps) if (s >= raw) return s;
    return Math.ceil(raw / 3600) * 3600;
  }

  // ---- stress searches and schedules ----------------------------------------

  const STOPPED = {
    slo_broken: "the SLO broke",
    runtime_reached: "runTime ran out before the SLO broke",
    max_rate_reached: "maxRate was reached before the SLO broke",
    interrupted: "interrupted",
  };

  // Each stress scenario: the rates tried, p95 latency from the intended start
  // at each (green where the SLO held, red where it broke), and why it stopped.
  function stressSearch() {
    const entries = Object.entries(R.stress || {});
    if (entries.length === 0) return;
    const s = section("Stress search", "Each step runs the pipeline open loop at one rate; latency is timed from each run's intended start, so a target that falls behind shows it. The peak is the highest rate whose step held the SLO.");
    for (const [scenario, st] of entries) {
      const steps = st.steps || [];
      const broke = st.stopped === "slo_broken";
      s.appendChild(el("p", {}, "Scenario " + scenario + ": " +
        (st.peak_rate_per_minute ? (broke ? "peak " : "held up to ") + st.peak_rate_per_minute + " runs/min" : "no rate held") +
        (st.stopped ? "; stopped: " + (st.stopped_because || STOPPED[st.stopped] || st.stopped) : "") + "."));
      s.appendChild(table(["runs/min", "runs", "failed", "p95 from intended start", "run errors", "SLO"], steps.map((x) => [
        x.rate_per_minute, x.runs, x.failed, fmtMs(x.p95_latency_from_intended_ms), (100 * x.error_rate).toFixed(1) + " %",
        el("span", { class: x.held ? "pass" : "fail" }, x.held ? "✔ held" : "✘ broken")]), 1));
      const box = chartBox(s, "stress-" + scenario, "p95 latency from intended start by rate");
      if (steps.length === 0) { markEmpty(box, "No step ran."); continue; }
      const xs = steps.map((x) => x.rate_per_minute);
      const held = steps.map((x) => (x.held ? x.p95_latency_from_intended_ms / 1000 : null));
      const brokenAt = steps.map((x) => (x.held ? null : x.p95_latency_from_intended_ms / 1000));
      const dots = (stroke) => ({ stroke: stroke, fill: stroke, width: 0, paths: () => null, points: { show: true, size: 10, fill: stroke } });
      plot(box, {
        height: 240,
        scales: { x: { time: false, distr: xs.length > 1 && xs[xs.length - 1] / xs[0] >= 8 ? 3 : 1 } },
        axes: [{ label: "runs per minute" }, { label: "seconds", size: 60 }],
        series: [{ label: "runs/min" },
          Object.assign({ label: "held" }, dots("#2ca02c"), { value: (u, v) => (v === null ? "–" : fmtMs(v * 1000)) }),
          Object.assign({ label: "broken" }, dots("#d62728"), { value: (u, v) => (v === null ? "–" : fmtMs(v * 1000)) })],
      }, [xs, held, brokenAt]);
    }
  }

  // ---- growth: latency against objects stored ---------------------------------

  // Each growth scenario: its levels and fits in tables, then one log-log
  // chart per operation family of each operation's p99 at each level (dots)
  // with its fitted line (dashed).
  function growth() {
    const entries = Object.entries(R.growth || {});
    if (entries.length === 0) return;
    const s = section("Growth", "Latency against the runs the target stores (ListRuns total_size), level by level; the dashed lines are least-squares fits on log-log axes, latency ~ runs^k, with k's 95% interval. k below 0.1 reads constant, below 0.5 logarithmic, below 1.25 linear.");
    for (const [scenario, g] of entries) {
      const levels = g.levels || [];
      s.appendChild(el("p", {}, "Scenario " + scenario + ": " + levels.length + " level(s)" +
        (g.stopped_because ? "; stopped: " + g.stopped_because : "") + "."));
      s.appendChild(table(["level", "runs stored", "experiments", "runs filled", "fill time", "objects/s", "measured"], levels.map((l) => [
        l.target_runs, l.runs_stored, l.experiments_stored, l.fill.runs_created, fmtMs(l.fill.seconds * 1000),
        l.fill.objects_per_s.toFixed(1), fmtMs(l.measure_seconds * 1000)]), 1));
      const fits = g.fits || {};
      const k = (f) => (f ? f.exponent.toFixed(2) + (f.exponent_low === null ? "" : " [" + f.exponent_low.toFixed(2) + ", " + f.exponent_high.toFixed(2) + "]") + " " + f.verdict : "–");
      s.appendChild(table(["operation", "p50 exponent", "p99 exponent", "p99 at " + g.extrapolate_to + " runs"], Object.entries(fits).map(([op, f]) => [
        op, k(f.p50), k(f.p99), f.p99_at_extrapolation_us === null ? "–" : fmtMs(f.p99_at_extrapolation_us / 1000) +
          (f.p99_at_extrapolation_low_us === null ? "" : " (" + fmtMs(f.p99_at_extrapolation_low_us / 1000) + " to " + fmtMs(f.p99_at_extrapolation_high_us / 1000) + ")")]), 1));
      // The measured mix, level by level: the calls the fits are made of.
      const mixOps = [...new Set(levels.flatMap((l) => Object.keys(l.operations || {})))].sort();
      s.appendChild(el("h3", {}, "Measured mix, level by level: p50 / p99 (calls)"));
      s.appendChild(table(["operation"].concat(levels.map((l) => l.runs_stored + " runs stored")), mixOps.map((op) =>
        [op].concat(levels.map((l) => {
          const o = (l.operations || {})[op];
          return o && o.latency_us.count ? fmtMs(o.latency_us.p50 / 1000) + " / " + fmtMs(o.latency_us.p99 / 1000) + " (" + o.latency_us.count + ")" : "–";
        }))), 1));
      const xs = levels.map((l) => l.runs_stored);
      if (xs.length < 2 || xs.some((x) => !(x > 0))) {
        markEmpty(chartBox(s, "growth-" + scenario, "p99 latency against runs stored (log-log)"), "Fewer than two levels with runs stored.");
        continue;
      }
      // One small chart per operation family (ListRuns and its variants,
      // GetRun, ...): eight fits in one chart overlap past reading.
      const families = {};
      for (const op of Object.keys(fits)) (families[op.split(":")[0]] = families[op.split(":")[0]] || []).push(op);
      const grid = el("div", { class: "grid" });
      s.appendChild(grid);
      for (const [family, ops] of Object.entries(families)) {
        const box = chartBox(grid, "growth-" + scenario + "-" + family, family + ": p99 against runs stored (log-log)");
        const series = [{ label: "runs stored" }];
        const data = [xs];
        ops.forEach((op, i) => {
          const c = PALETTE[i % PALETTE.length];
          const f = fits[op].p99;
          data.push(levels.map((l) => (l.operations[op] && l.operations[op].latency_us.count ? l.operations[op].latency_us.p99 / 1000 : null)));
          series.push({ label: op + " p99", stroke: c, width: 0, paths: () => null, points: { show: true, size: 7, fill: c }, value: (u, v) => fmtMs(v) });
          data.push(xs.map((x) => (f ? Math.exp(f.intercept_ln_us + f.exponent * Math.log(x)) / 1000 : null)));
          series.push({ label: op + " fit", stroke: c, width: 1.5, dash: [6, 4], points: { show: false }, value: (u, v) => fmtMs(v) });
        });
        plot(box, {
          height: 220,
          scales: { x: { time: false, distr: 3 }, y: { distr: 3 } },
          axes: [{ label: "runs stored" }, { label: "ms", size: 60 }],
          series: series,
        }, data);
      }
    }
  }

  function schedules() {
    const entries = Object.entries(R.schedules || {}).filter(([k]) => /^[0-9]+$/.test(k));
    if (entries.length === 0) return;
    const s = section("Scheduled runs", "Fires the schedules owed over the run time against the runs the server made; trigger lag is created_at − scheduled_at.");
    s.appendChild(table(["scenario", "schedules", "fires owed", "runs made", "missed"], entries.map(([k, v]) => [
      k, v.recurring_runs, v.expected_fires, v.observed_fires,
      el("span", { class: v.missed_fires ? "fail" : "pass" }, String(v.missed_fires))]), 1));
    const lag = R.schedules.trigger_lag_ms;
    if (lag && lag.count) {
      s.appendChild(table(["trigger lag", "count", "min", "p50", "p90", "p99", "max"],
        [["", lag.count, fmtMs(lag.min), fmtMs(lag.p50), fmtMs(lag.p90), fmtMs(lag.p99), fmtMs(lag.max)]], 1));
    }
  }

  // ---- context ----------------------------------------------------------------

  function runsSummary() {
    if (noRunsButGrowth()) return;
    const s = section("Runs");
    const r = R.runs || {};
    const states = Object.entries(r.by_state || {}).map(([k, v]) => v + " " + k).join(", ");
    s.appendChild(el("p", {}, (r.count || 0) + " runs: " + (states || "none")));
    const rows = [];
    for (const [label, key] of [["run duration", "duration_ms"], ["queue wait", "queue_wait_ms"], ["start delay (open loop)", "start_delay_ms"]]) {
      const d = r[key];
      if (!d || !d.count) continue;
      rows.push([label, d.count, fmtMs(d.min), fmtMs(d.p50), fmtMs(d.p90), fmtMs(d.p95), fmtMs(d.p99), fmtMs(d.max)]);
    }
    if (rows.length) s.appendChild(table(["", "count", "min", "p50", "p90", "p95", "p99", "max"], rows, 1));
    const failed = (r.records || []).filter((x) => x.error);
    if (failed.length) {
      s.appendChild(el("h3", {}, "Run errors"));
      s.appendChild(table(["run", "state", "error"], failed.slice(0, 50).map((x) => [x.run_id || "(not created)", x.state, x.error]), 3));
    }
  }

  function context() {
    const s = section("Environment");
    const t = R.target || {};
    s.appendChild(table(["", ""], [
      ["kfpbench version", R.kfpbench_version],
      ["target", t.url + (t.embedded ? " (embedded backend)" : "")],
      ["API version", t.api_version],
      ["started", R.started_at], ["finished", R.finished_at],
      ["partial", R.partial ? "yes: " + R.partial_reason : "no"],
    ].concat(R.harness_usage ? [["kfpbench itself" + (t.embedded ? " (with the embedded backend)" : ""),
      (R.harness_usage.cpu_user_s + R.harness_usage.cpu_system_s).toFixed(1) + " s CPU (" +
      R.harness_usage.cpu_cores.toFixed(2) + " cores), peak memory " +
      (R.harness_usage.peak_rss_bytes / 1048576).toFixed(0) + " MiB"]] : [])
      .concat(R.back_pressure && (R.back_pressure.waits || R.back_pressure.not_resent) ? [["back-pressure",
        R.back_pressure.waits + " calls waited Retry-After (" + fmtMs(R.back_pressure.waited_ms) + "), " +
        R.back_pressure.not_resent + " not resent"]] : []), 2));
    s.appendChild(el("h3", {}, "healthz"));
    s.appendChild(el("pre", {}, JSON.stringify(t.healthz === undefined ? null : t.healthz, null, 2)));
    if ((R.errors || []).length || (R.cleanup_failures || []).length) {
      s.appendChild(el("h3", {}, "Errors"));
      const ul = el("ul");
      for (const e of R.errors || []) ul.appendChild(el("li", {}, e));
      for (const c of R.cleanup_failures || []) ul.appendChild(el("li", {}, "not cleaned up: " + c));
      s.appendChild(ul);
    }
    const scaled = R.time_scale !== undefined && R.time_scale !== 1
      ? " — the file as written; every time in it was multiplied by " + R.time_scale + " (--time-scale)" : "";
    const sc = section("Scenario", (R.scenario && R.scenario.path ? R.scenario.path : "") + scaled);
    sc.appendChild(el("pre", {}, JSON.stringify(R.scenario ? R.scenario.source : null, null, 2)));
  }

  // Each part draws on its own, so one failure leaves the rest of the page.
  // A growth scenario's results come first: they are what it measured.
  const hasGrowth = Object.keys(R.growth || {}).length > 0;
  for (const part of [header, summary, verdicts].concat(hasGrowth ? [growth] : [], [operationsTable, observerCalls, latencyOverTime,
    latencyDistribution, throughput, durationCdf, runsSummary, timeline, stressSearch], hasGrowth ? [] : [growth],
    [schedules, context])) {
    try {
      part();
    } catch (e) {
      reportError(part.name + ": " + (e && e.stack ? e.stack : e));
    }
  }
  document.getElementById("kfpbench-status").setAttribute("data-ready", "true");
})();
