#!/usr/bin/env bash
# kfpbench's RANDOM_GETS against wrk on the same embedded-backend URL, with
# the same number of connections, one after the other in the same run. Both
# send the perf-tests read chain (list pipelines, list versions, list
# experiments, list runs, get run); kfpbench also records every latency.
#
#   bench/wrk_compare.sh [CONNECTIONS] [SECONDS]      (needs: apt-get install wrk)
set -euo pipefail
cd "$(dirname "$0")/.."
connections=${1:-8}
seconds=${2:-15}
bin=build/kfpbench
work=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT

"$bin" serve --port 0 --executor stub --stub-duration constant:10ms > "$work/serve.log" 2>&1 &
server=$!
for _ in $(seq 50); do grep -q "serving" "$work/serve.log" && break; sleep 0.1; done
url=$(grep -o 'http://[0-9.:]*' "$work/serve.log" | head -1)

# Some state to read: a pipeline, an experiment and a few runs.
cat > "$work/seed.json" <<JSON
[{"mode": "PIPELINE_RUN", "runTime": "3s", "numTimes": 4, "pipelineFileName": "$PWD/examples/pipelines/sleep_chain.yaml"}]
JSON
"$bin" run "$work/seed.json" --host "$url" --keep --quiet --poll-interval 50ms --out "$work/seed" > /dev/null

pipeline=$(curl -s "$url/apis/v2beta1/pipelines" | sed -n 's/.*"pipeline_id":"\([^"]*\)".*/\1/p' | head -1)
run=$(curl -s "$url/apis/v2beta1/runs" | sed -n 's/.*"run_id":"\([^"]*\)".*/\1/p' | head -1)
cat > "$work/chain.lua" <<LUA
local paths = {
  "/apis/v2beta1/pipelines?page_size=20",
  "/apis/v2beta1/pipelines/$pipeline/versions?page_size=20",
  "/apis/v2beta1/experiments?page_size=20",
  "/apis/v2beta1/runs?page_size=20&sort_by=created_at%20desc",
  "/apis/v2beta1/runs/$run",
}
local i = 0
request = function()
  i = i % #paths + 1
  return wrk.format("GET", paths[i])
end
LUA

echo "== wrk: $connections connections, ${seconds}s"
wrk -t 1 -c "$connections" -d "${seconds}s" -s "$work/chain.lua" "$url" | tee "$work/wrk.txt"
wrk_rps=$(awk '/Requests\/sec/ {print $2}' "$work/wrk.txt")

cat > "$work/gets.json" <<JSON
[{"mode": "RANDOM_GETS", "runTime": "${seconds}s", "concurrency": $connections}]
JSON
echo "== kfpbench RANDOM_GETS: $connections workers, ${seconds}s"
"$bin" run "$work/gets.json" --host "$url" --quiet --out "$work/gets" | tee "$work/kfpbench.txt"
kfp_rps=$(python3 -c "
import json; d = json.load(open('$work/gets/results.json'))
print(sum(o['count'] for o in d['operations'].values() if o['count'] > 1) / d['elapsed_s'])")
echo
echo "wrk:      $wrk_rps requests/s"
echo "kfpbench: $kfp_rps requests/s (every latency recorded)"
python3 -c "print(f'ratio:    {$kfp_rps / $wrk_rps:.2f}')"
