#!/usr/bin/env bash
# kfpbench's own memory through a soak: RANDOM_GETS in open loop (each
# arrival is one pass of the five-call read chain) against `kfpbench serve
# --executor stub` on loopback, with kfpbench's RSS sampled every second from
# /proc. Prints RSS at start (after 10 s), peak and end, the request rate
# achieved and the late starts.
#
#   bench/soak_rss.sh [REQUESTS_PER_SECOND] [SECONDS]     (default 5000 600)
#
# MIX='{"GetRun": 1}' replaces the chain by RANDOM_GETS' weighted mix, one
# call per arrival (cheap calls reach rates the list-heavy chain cannot when
# the server shares the machine).
set -euo pipefail
cd "$(dirname "$0")/.."
rps=${1:-5000}
seconds=${2:-600}
bin=${KFPBENCH:-build/kfpbench}
. bench/lib.sh
work=$(mktemp -d)
trap 'kill "$server" "$client" 2>/dev/null || true; rm -rf "$work"' EXIT

start_server "$bin" "$work" --threads 2
seed_state "$bin" "$work" "$url"

# One chain is five calls, so chains per minute = requests per second * 60 / 5;
# with a mix every arrival is one call.
if [ -n "${MIX:-}" ]; then
  cat > "$work/soak.json" <<JSON
[{"mode": "RANDOM_GETS", "runTime": "${seconds}s", "rate": $((rps * 60)), "mix": $MIX}]
JSON
else
  cat > "$work/soak.json" <<JSON
[{"mode": "RANDOM_GETS", "runTime": "${seconds}s", "rate": $((rps * 12))}]
JSON
fi
"$bin" run "$work/soak.json" --host "$url" --quiet --out "$work/soak" > "$work/run.log" 2>&1 &
client=$!
: > "$work/rss.txt"
while kill -0 "$client" 2>/dev/null; do
  awk '/^VmRSS/ {print $2}' "/proc/$client/status" 2>/dev/null >> "$work/rss.txt" || true
  sleep 1
done
wait "$client" || true
python3 - "$work" "$rps" <<'PY'
import json, sys
work, rps = sys.argv[1], int(sys.argv[2])
rss = [int(x) / 1024 for x in open(f"{work}/rss.txt").read().split() if x.strip()]
d = json.load(open(f"{work}/soak/results.json"))
calls = sum(o["count"] for o in d["operations"].values())
errors = sum(o["errors"] for o in d["operations"].values())
late = d.get("runs", {}).get("late_starts", "n/a")
print(f"asked:      {rps} requests/s for {d['elapsed_s']:.0f} s")
print(f"achieved:   {calls / d['elapsed_s']:.0f} requests/s ({calls} calls, {errors} errors)")
print(f"RSS MiB:    start(10 s) {rss[min(10, len(rss) - 1)]:.1f}  peak {max(rss):.1f}  end {rss[-1]:.1f}  ({len(rss)} samples)")
for key in ("late_starts", "open_loop"):
    if key in d:
        print(f"{key}: {d[key]}")
PY
grep -i "late" "$work/run.log" | head -5 || true
