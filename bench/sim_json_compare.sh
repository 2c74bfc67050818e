#!/usr/bin/env bash
# `kfpbench simulate` JSON of two builds, byte for byte: every example
# cluster with every example workload (rate, CSV, all at once, shared
# services), each also as a closed loop (--concurrency) and scaled
# (--arrival-scale), and the engine's test pipelines on a small cluster.
# Prints one line per case and exits 1 if any output differs.
#
#   bench/sim_json_compare.sh OLD_KFPBENCH [NEW_KFPBENCH]
set -euo pipefail
old=${1:?usage: $0 OLD_KFPBENCH [NEW_KFPBENCH]}
new=${2:-build/kfpbench}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ex=examples/capacity
same=0 differ=0

compare() {  # NAME CLUSTER WORKLOAD [flags...]
  local name=$1 cluster=$2 workload=$3
  shift 3
  local a=$work/old.json b=$work/new.json
  "$old" simulate "$cluster" "$workload" --quiet --out "$a" "$@" > /dev/null 2>"$work/old.err" || true
  "$new" simulate "$cluster" "$workload" --quiet --out "$b" "$@" > /dev/null 2>"$work/new.err" || true
  if [ ! -s "$a" ] && [ ! -s "$b" ] && cmp -s "$work/old.err" "$work/new.err"; then
    echo "same (both refused) $name"; same=$((same + 1))
  elif [ -s "$a" ] && cmp -s "$a" "$b"; then
    echo "same $(wc -c < "$a") bytes $name"; same=$((same + 1))
  else
    echo "DIFFERS $name"; differ=$((differ + 1))
  fi
  rm -f "$a" "$b"
}

# Inputs that ask for nothing beyond CPU and memory (the GPU examples are
# refused by builds that predate resources as a list).
for cluster in $ex/cluster*.yaml; do
  case $cluster in *gpu*) continue ;; esac
  for workload in $ex/workload*.yaml; do
    case $workload in *gpu*) continue ;; esac
    name="$(basename "$cluster") $(basename "$workload")"
    compare "$name" "$cluster" "$workload" --runs 200
    compare "$name --concurrency 7" "$cluster" "$workload" --runs 200 --concurrency 7
    compare "$name --arrival-scale 3" "$cluster" "$workload" --arrival-scale 3
  done
done
# The engine's test pipelines (loops, conditions, retries, sub-DAGs, pinned
# steps), 50 at once on three fixed nodes.
cat > "$work/cluster.yaml" <<YAML
pools: [{name: fixed, cpu: 4, memory: 16Gi, min: 3, max: 3, labels: {pool: ml}}]
autoscaler: {enabled: false}
YAML
for pipeline in src/engine/testdata/*.yaml; do
  cat > "$work/workload.yaml" <<YAML
pipeline: $PWD/$pipeline
runs: 50
arrivals: {kind: all-at-once}
steps: {default: {duration: "lognormal:30s:0.5", overhead: 2s}}
YAML
  compare "$(basename "$pipeline")" "$work/cluster.yaml" "$work/workload.yaml"
done
echo "$same same, $differ differ"
[ "$differ" -eq 0 ]
