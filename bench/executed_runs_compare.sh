#!/usr/bin/env bash
# BM_ExecutedRunsHttp of two builds, alternating, in the same run: executed
# ten-step runs per second and task completions per second (stub executor,
# 0 s steps), from the first CreateRun to the last run SUCCEEDED. Alternating
# pairs keep a machine whose load drifts from favouring either build.
#
#   bench/executed_runs_compare.sh OLD_API_BENCH [NEW_API_BENCH] [PAIRS]
#
# e.g. with main built in ../old/build:
#   bench/executed_runs_compare.sh ../old/build/bench/api_bench build/bench/api_bench 3
set -euo pipefail
old=${1:?usage: $0 OLD_API_BENCH [NEW_API_BENCH] [PAIRS]}
new=${2:-build/bench/api_bench}
pairs=${3:-3}

# Executed runs per second of one benchmark run (older builds print only that
# counter; a run is ten task completions).
runs_per_s() {
  "$1" --benchmark_filter=ExecutedRuns --benchmark_format=json 2>/dev/null |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["benchmarks"][0]["executed_runs_per_s"])'
}

printf '%-5s %-4s %18s %24s\n' pair build executed_runs_per_s task_completions_per_s
for pair in $(seq "$pairs"); do
  for build in old new; do
    bin=$old
    [ "$build" = new ] && bin=$new
    r=$(runs_per_s "$bin")
    printf '%-5s %-4s %18.0f %24.0f\n' "$pair" "$build" "$r" "$(python3 -c "print($r * 10)")"
  done
done
