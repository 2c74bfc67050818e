#!/usr/bin/env bash
# A shared bottleneck fitted from two loads and checked at two more (issue 14):
# the embedded backend with a real artifact-store limit (--artifact-bandwidth;
# each of a run's three trainers uploads --stub-artifact-bytes when its time
# is up) on eight 4-CPU nodes, open loop for 12 s at 10, 120, 90 and 180 runs
# a minute. `kfpbench calibrate` fits the bandwidth from the first two;
# `kfpbench simulate` with that calibration predicts the other two; the table
# gives measured and predicted makespan and p95 run duration.
#   bench/shared_store_validation.sh [STUB_DURATION] [BANDWIDTH] [BYTES]
# e.g. bench/shared_store_validation.sh lognormal:300ms:0.3 4Mi 1Mi
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-constant:300ms}
bandwidth=${2:-4Mi}
bytes=${3:-1Mi}
bin=$PWD/build/kfpbench
cluster=$PWD/examples/capacity/cluster_loopback.yaml
pipeline=$PWD/examples/capacity/six_steps.yaml
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

run_level() {
  local rate=$1
  cat > "$work/rate$rate.json" <<JSON
[{"mode": "PIPELINE_RUN", "startTime": 0, "runTime": "12s", "rate": $rate, "pipelineFileName": "$pipeline"}]
JSON
  "$bin" run "$work/rate$rate.json" --executor stub --stub-duration "$duration" \
    --stub-artifact-bytes "exec-train=$bytes" --artifact-bandwidth "$bandwidth" \
    --cluster "$cluster" --poll-interval 100ms --quiet --out "$work/rate$rate" > /dev/null
}

for rate in 10 120 90 180; do run_level "$rate"; done
"$bin" calibrate "$work/rate10" "$work/rate120" --pipeline "$pipeline" --cluster "$cluster" \
  --artifact-bytes "exec-train=$bytes" --out "$work/calibration.json"
echo
echo "| load | runs | metric | measured | predicted | error |"
echo "|---|---|---|---|---|---|"
for rate in 90 180; do
  read -r runs makespan p95 < <(python3 - "$work/rate$rate/results.json" <<'PY'
import json, math, sys
from datetime import datetime
def t(s):
    return datetime.fromisoformat(s.replace("Z", "")[:26])
runs = [r for r in json.load(open(sys.argv[1]))["runs"]["records"] if r["state"] == "SUCCEEDED"]
created = [t(r["created_at"]) for r in runs]
durations = sorted((t(r["finished_at"]) - t(r["created_at"])).total_seconds() for r in runs)
makespan = (max(t(r["finished_at"]) for r in runs) - min(created)).total_seconds()
p95 = durations[max(1, math.ceil(0.95 * len(durations))) - 1]  # nearest rank
print(len(runs), makespan, p95)
PY
)
  cat > "$work/workload$rate.yaml" <<YAML
pipeline: $pipeline
runs: $runs
arrivals: {kind: rate, ratePerSecond: $(python3 -c "print($rate / 60)")}
calibration: $work/calibration.json
YAML
  "$bin" simulate "$cluster" "$work/workload$rate.yaml" --quiet --out "$work/sim$rate.json"
  python3 - "$work/sim$rate.json" "$rate" "$runs" "$makespan" "$p95" <<'PY'
import json, sys
sim = json.load(open(sys.argv[1]))
rate, runs, makespan, p95 = sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
for name, measured, predicted in (("makespan", makespan, sim["makespan_seconds"]),
                                  ("p95 run", p95, sim["run_duration_seconds"]["p95"])):
    print(f"| {rate}/min | {runs} | {name} | {measured:.2f}s | {predicted:.2f}s | "
          f"{(predicted - measured) / measured * 100:+.1f}% |")
PY
done
