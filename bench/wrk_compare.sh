#!/usr/bin/env bash
# kfpbench's RANDOM_GETS against wrk on the same embedded-backend URL, with
# the same number of connections, one after the other in the same run, on two
# call mixes: the perf-tests read chain (list pipelines, list versions, list
# experiments, list runs, get run) and GetRun alone. kfpbench also records
# every latency. Beside requests/s it prints each client's own CPU time per
# call (user + system, from GNU time): the server shares the machine, so the
# client's CPU is taken from it.
#
#   bench/wrk_compare.sh [CONNECTIONS] [SECONDS]      (needs: apt-get install wrk time)
set -euo pipefail
cd "$(dirname "$0")/.."
connections=${1:-8}
seconds=${2:-15}
bin=${BIN:-build/kfpbench}  # BIN=other/kfpbench compares another build
. bench/lib.sh
work=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT

start_server "$bin" "$work"
seed_state "$bin" "$work" "$url"

pipeline=$(curl -s "$url/apis/v2beta1/pipelines" | sed -n 's/.*"pipeline_id":"\([^"]*\)".*/\1/p' | head -1)
run=$(curl -s "$url/apis/v2beta1/runs" | sed -n 's/.*"run_id":"\([^"]*\)".*/\1/p' | head -1)
chain_paths='"/apis/v2beta1/pipelines?page_size=20",
  "/apis/v2beta1/pipelines/'"$pipeline"'/versions?page_size=20",
  "/apis/v2beta1/experiments?page_size=20",
  "/apis/v2beta1/runs?page_size=20&sort_by=created_at%20desc",
  "/apis/v2beta1/runs/'"$run"'",'
getrun_paths='"/apis/v2beta1/runs/'"$run"'",'

# compare NAME LUA_PATHS SCENARIO_EXTRA: one wrk run and one kfpbench run.
compare() {
  local name=$1 paths=$2 extra=$3
  cat > "$work/$name.lua" <<LUA
local paths = {
  $paths
}
local i = 0
request = function()
  i = i % #paths + 1
  return wrk.format("GET", paths[i])
end
LUA
  echo "== $name: wrk, $connections connections, ${seconds}s"
  /usr/bin/time -f "%U %S" -o "$work/$name.wrk.cpu" \
    wrk -t 1 -c "$connections" -d "${seconds}s" -s "$work/$name.lua" "$url" | tee "$work/$name.wrk"
  local wrk_rps wrk_calls
  wrk_rps=$(awk '/Requests\/sec/ {print $2}' "$work/$name.wrk")
  wrk_calls=$(awk '/requests in/ {print $1}' "$work/$name.wrk")

  cat > "$work/$name.json" <<JSON
[{"mode": "RANDOM_GETS", "runTime": "${seconds}s", "concurrency": $connections$extra}]
JSON
  echo "== $name: kfpbench RANDOM_GETS, $connections workers, ${seconds}s"
  /usr/bin/time -f "%U %S" -o "$work/$name.kfp.cpu" \
    "$bin" run "$work/$name.json" --host "$url" --quiet --out "$work/$name" > "$work/$name.kfp"
  python3 - "$name" "$wrk_rps" "$wrk_calls" "$work" <<'PY' | tee -a "$work/summary"
import json, sys
name, wrk_rps, wrk_calls, work = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
d = json.load(open(f"{work}/{name}/results.json"))
calls = sum(o["count"] for o in d["operations"].values() if o["count"] > 1)
kfp_rps = calls / d["elapsed_s"]
cpu = lambda f: sum(map(float, open(f).read().split()[-2:]))
wrk_us = cpu(f"{work}/{name}.wrk.cpu") / wrk_calls * 1e6
kfp_us = cpu(f"{work}/{name}.kfp.cpu") / calls * 1e6
print(f"{name:7} wrk {wrk_rps:8.0f} req/s {wrk_us:6.1f} us CPU/call | kfpbench {kfp_rps:8.0f} req/s "
      f"{kfp_us:6.1f} us CPU/call | ratio {kfp_rps / wrk_rps:.2f}")
PY
}

compare chain "$chain_paths" ""
compare getrun "$getrun_paths" ', "mix": {"GetRun": 1}'
echo
echo "== summary ($connections connections, ${seconds}s each; kfpbench records every latency)"
cat "$work/summary"
