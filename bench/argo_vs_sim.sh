#!/usr/bin/env bash
# The simulator against Argo Workflows on the local stack (docs/CAPACITY.md,
# "How far to trust it"): each case is simulated once (`kfpbench
# stack-plan`, which also writes every run's arrival, DAG, requests and the
# step times the simulation drew), then the same runs are run as Argo
# Workflows on kwok nodes (stack/argo/cmd/argo-run-plan) and read back in
# simulate's form (`kfpbench stack-result`). Prints one Markdown table:
# simulator / stack (error %) per figure, and replaces the table between
# the `argo-vs-sim` markers of docs/CAPACITY.md with it (--no-doc: not).
#
#   bench/argo_vs_sim.sh [--case NAME]... [--out DIR] [--no-doc]
#
# Needs build/kfpbench, Go (scripts/stack, scripts/argo build what they
# need) and a free machine: the stack's rates are wall-clock rates, and a
# loaded machine slows them (the load average is printed beside each case).
# Each case starts its own stack (its node count) and stops it.
#
# Time scale: every duration and arrival is divided by a case's SCALE (simulated
# seconds per wall second), and Argo's requeue time (DEFAULT_REQUEUE_TIME, 10 s
# on a cluster) by the same, so Argo's per-level delay stays 10 s of simulated
# time; its client QPS and burst are multiplied by it. What does not scale is
# the stack itself (about 6 pods a second end to end on 2 cores): a case
# demanding more pods a second than that, times SCALE, is distorted.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kfpbench=$root/build/kfpbench
runner=$root/build/stack/bin/argo-run-plan
out=$root/build/argo-vs-sim
doc=$root/docs/CAPACITY.md
write_doc=1
only=()
while [ $# -gt 0 ]; do
  case $1 in
    --case) only+=("$2"); shift 2 ;;
    --out) out=$2; shift 2 ;;
    --no-doc) write_doc=0; shift ;;
    *) echo "argo_vs_sim: unknown flag $1" >&2; exit 2 ;;
  esac
done
[ -x "$kfpbench" ] || { echo "argo_vs_sim: no $kfpbench (build it first)" >&2; exit 2; }
mkdir -p "$out"
examples=$root/examples/capacity
here=$root/bench/argo

# name|pipeline|nodes|runs|arrivals (YAML)|steps (YAML)|scale
cases=(
  "chain-20|$here/chain_heavy.yaml|4|20|{kind: all-at-once}|{default: \"lognormal:2m:0.3\", exec-train: \"lognormal:8m:0.3\"}|30"
  "chain-60|$here/chain_heavy.yaml|10|60|{kind: all-at-once}|{default: \"lognormal:2m:0.3\", exec-train: \"lognormal:8m:0.3\"}|30"
  "chain-200|$here/chain_heavy.yaml|20|200|{kind: all-at-once}|{default: \"lognormal:2m:0.3\", exec-train: \"lognormal:8m:0.3\"}|10"
  "fan-out|$here/fan_out_wide.yaml|6|30|{kind: rate, ratePerSecond: 0.008333}|{default: \"1m\", exec-work: \"lognormal:5m:0.3\"}|30"
  "bursty|$examples/six_steps.yaml|2|60|{kind: csv, file: $here/bursty.csv}|{default: \"lognormal:2m:0.3\", exec-train: \"lognormal:8m:0.3\"}|30"
  "parallel-1000|$here/pair.yaml|50|1000|{kind: all-at-once}|{exec-prepare: \"1m\", exec-train: \"lognormal:10m:0.2\"}|15"
)

stop_stack() {
  "$root/scripts/argo" stop >/dev/null 2>&1 || true
  "$root/scripts/stack" stop >/dev/null 2>&1 || true
}
trap stop_stack EXIT

run_case() {
  local name=$1 pipeline=$2 nodes=$3 runs=$4 arrivals=$5 steps=$6 scale=$7
  local dir=$out/$name
  mkdir -p "$dir"
  cat >"$dir/cluster.yaml" <<EOF
pools:
  - {name: fixed, cpu: 16, memory: 64Gi, min: $nodes, max: $nodes}
autoscaler: {enabled: false}
EOF
  cat >"$dir/workload.yaml" <<EOF
pipeline: $pipeline
runs: $runs
arrivals: $arrivals
steps: $steps
seed: 1
EOF
  "$kfpbench" stack-plan "$dir/cluster.yaml" "$dir/workload.yaml" --out "$dir/plan.json" \
    --sim-out "$dir/sim.json" >"$dir/plan.log"
  local requeue qps burst
  requeue=$(awk -v s="$scale" 'BEGIN { printf "%dms", 10000 / s }')
  qps=$((20 * scale))
  burst=$((30 * scale))
  "$root/scripts/stack" start --nodes "$nodes" --node-cpu 16 --node-memory 64Gi \
    --scheduler-max-backoff 1 >"$dir/stack.log" 2>&1
  "$root/scripts/argo" start --requeue-time "$requeue" --qps "$qps" --burst "$burst" >>"$dir/stack.log" 2>&1
  local kubeconfig=$root/build/stack/state/kubeconfig
  "$root/build/stack/bin/kubectl" --kubeconfig "$kubeconfig" create namespace bench >/dev/null
  until "$root/build/stack/bin/kubectl" --kubeconfig "$kubeconfig" get serviceaccount default -n bench >/dev/null 2>&1; do
    sleep 0.2
  done
  local before after status=0
  before=$(cut -d' ' -f1 /proc/loadavg)
  "$runner" --kubeconfig "$kubeconfig" --plan "$dir/plan.json" --out "$dir/record.json" \
    --namespace bench --time-scale "$scale" --qps $((10 * scale)) --timeout 40m 2>"$dir/runner.log" || status=$?
  after=$(cut -d' ' -f1 /proc/loadavg)
  stop_stack
  [ "$status" -eq 0 ] || echo "argo_vs_sim: $name: argo-run-plan exited $status (see $dir/runner.log)" >&2
  "$kfpbench" stack-result "$dir/cluster.yaml" "$dir/plan.json" "$dir/record.json" \
    --out "$dir/stack.json" >"$dir/result.log" || true
  echo "$before $after" >"$dir/load"
  echo "$nodes $runs $scale" >"$dir/shape"
}

for c in "${cases[@]}"; do
  IFS='|' read -r name pipeline nodes runs arrivals steps scale <<<"$c"
  if [ ${#only[@]} -gt 0 ] && [[ ! " ${only[*]} " == *" $name "* ]]; then continue; fi
  echo "argo_vs_sim: $name ($runs runs on $nodes nodes, time scale $scale)" >&2
  run_case "$name" "$pipeline" "$nodes" "$runs" "$arrivals" "$steps" "$scale"
done

# Each case's simulation again with Argo's requeue time (the cluster's
# controlPlane.requeueTime, 10 s as Argo's default): the same draws.
for d in "$out"/*/; do
  [ -f "$d/cluster.yaml" ] && [ -f "$d/workload.yaml" ] || continue
  { cat "$d/cluster.yaml"; echo "controlPlane: {requeueTime: 10s}"; } >"$d/cluster-requeue.yaml"
  "$kfpbench" simulate "$d/cluster-requeue.yaml" "$d/workload.yaml" --out "$d/sim-requeue.json" --quiet
done

# The table, from every case measured so far in $out: each case twice, the
# simulator without a control plane and with Argo's requeue time, against
# the same stack run.
table=$(python3 - "$out" <<'EOF'
import json, os, sys
out = sys.argv[1]
order = ["chain-20", "chain-60", "chain-200", "fan-out", "bursty", "parallel-1000"]
def fmt(s):
    return f"{s / 60:.1f}m" if s >= 60 else f"{s:.0f}s"
def cell(a, b, minutes=True):
    text = (fmt(a) + " / " + fmt(b)) if minutes else f"{a:g} / {b:g}"
    if a > 0:
        text += f" ({100 * (b - a) / a:+.0f}%)"
    elif b > 0:
        text += " (+" + (fmt(b) if minutes else f"{b:g}") + ")"
    return text
# The stack's own pace: pods created in the busiest 10 s of wall time.
def peak_pods_per_second(record):
    created = sorted(p["created"] for r in record["runs"] for p in r["pods"] if p["created"] >= 0)
    best, j = 0, 0
    for i, t in enumerate(created):
        while created[j] < t - 10:
            j += 1
        best = max(best, i - j + 1)
    return best / 10
print("| case | nodes, runs, scale | makespan | run p50 | run p95 | task wait p95 | peak nodes | pods/s (wall, peak) | load |")
print("|---|---|---|---|---|---|---|---|---|")
for name in order:
    d = os.path.join(out, name)
    try:
        sims = [("", json.load(open(os.path.join(d, "sim.json")))),
                (" + requeue 10s", json.load(open(os.path.join(d, "sim-requeue.json"))))]
        stack = json.load(open(os.path.join(d, "stack.json")))
    except OSError:
        continue
    nodes, runs, scale = open(os.path.join(d, "shape")).read().split()
    load = open(os.path.join(d, "load")).read().split()
    pace = peak_pods_per_second(json.load(open(os.path.join(d, "record.json"))))
    done = stack["runs"]["succeeded"]
    shape = f"{nodes}, {runs}" + ("" if done == int(runs) else f" ({done} done)") + f", ×{scale}"
    for label, sim in sims:
        print(f"| {name}{label} | {shape} | "
              + cell(sim["makespan_seconds"], stack["makespan_seconds"]) + " | "
              + cell(sim["run_duration_seconds"]["p50"], stack["run_duration_seconds"]["p50"]) + " | "
              + cell(sim["run_duration_seconds"]["p95"], stack["run_duration_seconds"]["p95"]) + " | "
              + cell(sim["task_pending_seconds"]["p95"], stack["task_pending_seconds"]["p95"]) + " | "
              + cell(sim["peak_nodes"], stack["peak_nodes"], minutes=False) + " | "
              + f"{pace:.1f} | {load[0]}–{load[1]} |")
EOF
)
echo "$table"
if [ "$write_doc" -eq 1 ]; then
  python3 - "$doc" "$table" <<'EOF'
import sys
path, table = sys.argv[1], sys.argv[2]
text = open(path).read()
begin, end = "<!-- argo-vs-sim:begin -->", "<!-- argo-vs-sim:end -->"
if begin not in text or end not in text:
    sys.exit(f"argo_vs_sim: no {begin} ... {end} in {path}")
head, rest = text.split(begin, 1)
_, tail = rest.split(end, 1)
open(path, "w").write(head + begin + "\n" + table + "\n" + end + tail)
EOF
fi
