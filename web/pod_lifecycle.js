// kfpbench HTML report, pod lifecycle section (run --kube-context): per-step
// pod latency tables and a timeline of every pod's phases. Runs right after
// report.js in the same <script>, reads the same embedded results, and keeps
// its conventions: data-drawn on the chart, errors into #kfpbench-errors.
(function () {
  "use strict";
  const { el, table } = kfpbenchPage;

  const R = JSON.parse(document.getElementById("kfpbench-results").textContent);
  const P = R.pod_lifecycle;
  if (!P) return;
  const MAX_PODS = 200;
  const LATENCIES = [["scheduled", "created → scheduled"], ["initialized", "created → initialized"],
    ["containers_started", "created → containers started"], ["containers_ready", "created → containers ready"],
    ["ready", "created → ready"], ["image_pull", "image pull (each)"], ["running", "main container ran"]];
  const PHASES = [["#f0ad4e", "pending (created → scheduled)"], ["#9467bd", "init containers (→ initialized)"],
    ["#17becf", "starting (→ containers started)"], ["#337ab7", "main container running"]];

  function fmtMs(ms) {
    if (ms === null || ms === undefined || !isFinite(ms)) return "–";
    if (ms < 1000) return ms.toFixed(0) + " ms";
    if (ms < 60000) return (ms / 1000).toPrecision(3) + " s";
    const s = Math.round(ms / 1000);
    return Math.floor(s / 60) + "m" + (s % 60) + "s";
  }

  function time(text) {
    if (!text) return null;
    const t = Date.parse(text);
    return isNaN(t) ? null : t;
  }

  function draw() {
    const s = el("section", {}, el("h2", {}, "Pod lifecycle"));
    // Before the environment section when there is one, else at the end.
    const app = document.getElementById("app");
    const env = Array.from(app.querySelectorAll("section > h2")).find((h) => h.textContent === "Environment");
    app.insertBefore(s, env ? env.parentNode : null);
    s.appendChild(el("p", { class: "note" },
      "Pods of the runs' steps, read with kubectl (context " + (P.context || "current") + ", namespace " + P.namespace +
      ") from pod conditions, container statuses and events, like kube-burner's pod latency. Condition times have " +
      "one-second resolution; image pulls come from the kubelet's Pulled messages. Readiness of finished pods without " +
      "readiness probes is their containers' start."));
    s.appendChild(el("p", {}, P.pods_requested + " pods named by finished runs: " + P.pods_read + " read, " +
      P.pods_missing + " gone (not found), " + P.pods_unread + " unread (kubectl failed), " +
      P.pods_without_events + " without events (expired?), " + P.kubectl_calls + " kubectl calls."));
    if ((P.errors || []).length) {
      const ul = el("ul", { class: "warn" });
      for (const e of P.errors) ul.appendChild(el("li", {}, e));
      s.appendChild(ul);
    }
    const steps = Object.keys(P.steps || {}).sort();
    const rows = [];
    for (const step of steps) {
      const st = P.steps[step];
      for (const [key, label] of LATENCIES) {
        const q = st.latency_ms[key];
        if (!q || !q.count) continue;
        rows.push([step, label, q.count, fmtMs(q.p50), fmtMs(q.p95), fmtMs(q.p99), fmtMs(q.max)]);
      }
    }
    if (rows.length) s.appendChild(table(["step", "latency", "samples", "p50", "p95", "p99", "max"], rows, 2));
    if (steps.length) {
      s.appendChild(el("h3", {}, "Per step"));
      s.appendChild(table(["step", "pods", "images pulled", "already present", "failed pulls", "FailedScheduling events", "ready inferred"],
        steps.map((k) => { const st = P.steps[k]; return [k, st.pods, st.image_pulls, st.images_present, st.pull_failures, st.failed_scheduling, st.ready_inferred]; }), 1));
    }
    timeline(s);
    if ((P.missing_pods || []).length) {
      s.appendChild(el("h3", {}, "Pods not read"));
      s.appendChild(table(["run", "step", "pod", "why"], P.missing_pods.slice(0, 50).map((m) => [m.run_id, m.step, m.pod, m.why]), 4));
    }
  }

  // One lane per pod in creation order, its phases as bars.
  function timeline(s) {
    const box = el("div", { class: "chart", "data-chart": "pod-timeline", "data-drawn": "false" }, el("h3", {}, "Pod timeline"));
    s.appendChild(box);
    const pods = (P.pods || []).filter((p) => time(p.created_at) !== null)
      .sort((a, b) => time(a.created_at) - time(b.created_at));
    if (pods.length === 0) {
      box.appendChild(el("p", { class: "empty" }, "No pod could be read."));
      box.setAttribute("data-drawn", "empty");
      return;
    }
    const shown = pods.slice(0, MAX_PODS);
    const ends = (p) => {
      const main = (p.containers || []).find((c) => !c.init && c.name === "main") || (p.containers || []).find((c) => !c.init) || {};
      const started = (p.containers || []).filter((c) => !c.init).map((c) => time(c.started_at));
      const all = started.length && started.every((t) => t !== null) ? Math.max(...started) : null;
      return { created: time(p.created_at), scheduled: time(p.scheduled_at), initialized: time(p.initialized_at),
        started: all, mainStart: time(main.started_at), mainEnd: time(main.finished_at) };
    };
    const spans = shown.map(ends);
    const t0 = Math.min(...spans.map((x) => x.created));
    let t1 = t0 + 1000;
    for (const x of spans) for (const v of Object.values(x)) if (v !== null) t1 = Math.max(t1, v);
    const left = 260, right = 20, top = 26, lane = 14;
    const width = Math.max(500, box.clientWidth || 900);
    const height = top + lane * shown.length + 30;
    const dpr = window.devicePixelRatio || 1;
    const canvas = el("canvas", { width: width * dpr, height: height * dpr, style: "width:" + width + "px;height:" + height + "px" });
    box.appendChild(canvas);
    const g = canvas.getContext("2d");
    g.scale(dpr, dpr);
    const x = (t) => left + ((t - t0) / (t1 - t0)) * (width - left - right);
    g.font = "11px sans-serif";
    const tick = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600].find((v) => v * 8 >= (t1 - t0) / 1000) || 7200;
    g.strokeStyle = "#e3e3e3";
    for (let sec = 0; sec <= (t1 - t0) / 1000; sec += tick) {
      const px = x(t0 + sec * 1000);
      g.beginPath(); g.moveTo(px, top - 4); g.lineTo(px, height - 26); g.stroke();
      g.fillStyle = "#555"; g.fillText(fmtMs(sec * 1000), px - 10, height - 12);
    }
    shown.forEach((p, i) => {
      const y = top + i * lane, e = spans[i];
      g.fillStyle = "#333";
      // The step and the pod's distinguishing tail ("impl-2917736631").
      g.fillText((p.step + " · " + p.pod.split("-").slice(-2).join("-")).slice(0, 42), 4, y + 10);
      const bar = (from, to, color) => {
        if (from === null || to === null) return;
        g.fillStyle = color;
        g.fillRect(x(from), y + 2, Math.max(1, x(to) - x(from)), lane - 4);
      };
      bar(e.created, e.scheduled, PHASES[0][0]);
      bar(e.scheduled, e.initialized, PHASES[1][0]);
      bar(e.initialized, e.started, PHASES[2][0]);
      bar(e.mainStart, e.mainEnd, p.phase === "Failed" ? "#d62728" : PHASES[3][0]);
    });
    let lx = left;
    for (const [c, label] of PHASES) {
      g.fillStyle = c; g.fillRect(lx, 6, 12, 10);
      g.fillStyle = "#333"; g.fillText(label, lx + 16, 15);
      lx += 24 + g.measureText(label).width;
    }
    if (pods.length > shown.length) s.appendChild(el("p", { class: "note" }, "First " + shown.length + " of " + pods.length + " pods shown."));
    box.setAttribute("data-drawn", "true");
  }

  try {
    draw();
  } catch (e) {
    reportError("podLifecycle: " + (e && e.stack ? e.stack : e));
  }
})();
