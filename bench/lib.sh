# Shared by the shell benchmarks: the embedded backend on a loopback port,
# with some state for read load to find. Source it; it sets no traps.

# start_server BIN WORK [serve flags...]: starts `BIN serve` in the
# background, waits for it to listen, and sets $server (pid) and $url.
start_server() {
  local bin=$1 work=$2
  shift 2
  "$bin" serve --port 0 --executor stub --stub-duration constant:10ms "$@" > "$work/serve.log" 2>&1 &
  server=$!
  for _ in $(seq 100); do grep -q "serving" "$work/serve.log" && break; sleep 0.1; done
  url=$(grep -o 'http://[0-9.:]*' "$work/serve.log" | head -1)
}

# seed_state BIN WORK URL: a pipeline, an experiment and a few runs to read.
seed_state() {
  local bin=$1 work=$2 url=$3
  cat > "$work/seed.json" <<JSON
[{"mode": "PIPELINE_RUN", "runTime": "3s", "numTimes": 4, "pipelineFileName": "$PWD/examples/pipelines/sleep_chain.yaml"}]
JSON
  "$bin" run "$work/seed.json" --host "$url" --keep --quiet --poll-interval 50ms --out "$work/seed" > /dev/null
}
