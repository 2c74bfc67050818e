#!/usr/bin/env bash
# One run of a ParallelFor over N runtime items (a list pipeline parameter),
# each iteration one stub step of 0 s, on `kfpbench serve`: seconds from
# CreateRun until GetRun says SUCCEEDED (polled every 50 ms), and the
# server's RSS afterwards. Usage: bench/wide_loop.sh [BIN] [N...]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/kfpbench}
shift || true
sizes=("$@")
[ ${#sizes[@]} -eq 0 ] && sizes=(100 1000 4000 10000)
work=$(mktemp -d)
source bench/lib.sh
start_server "$bin" "$work" --stub-duration constant:0s
trap 'kill $server 2> /dev/null; rm -rf "$work"' EXIT
cat > "$work/loop.yaml" <<'YAML'
pipelineInfo: {name: wide-loop}
schemaVersion: 2.1.0
components:
  comp-echo:
    executorLabel: exec-echo
    inputDefinitions: {parameters: {msg: {parameterType: STRING}}}
  comp-for-loop-1:
    inputDefinitions:
      parameters:
        pipelinechannel--list: {parameterType: LIST}
        pipelinechannel--list-loop-item: {parameterType: STRING}
    dag:
      tasks:
        echo:
          componentRef: {name: comp-echo}
          inputs: {parameters: {msg: {componentInputParameter: pipelinechannel--list-loop-item}}}
deploymentSpec:
  executors:
    exec-echo: {container: {image: alpine, command: [echo, '{{$.inputs.parameters[''msg'']}}']}}
root:
  inputDefinitions: {parameters: {list: {parameterType: LIST}}}
  dag:
    tasks:
      for-loop-1:
        componentRef: {name: comp-for-loop-1}
        inputs: {parameters: {pipelinechannel--list: {componentInputParameter: list}}}
        parameterIterator:
          itemInput: pipelinechannel--list-loop-item
          items: {inputParameter: pipelinechannel--list}
YAML
python3 - "$url" "$work/loop.yaml" "$server" "${sizes[@]}" <<'PY'
import json, sys, time, urllib.request, uuid
url, path, pid, sizes = sys.argv[1] + "/apis/v2beta1", sys.argv[2], sys.argv[3], sys.argv[4:]
boundary = uuid.uuid4().hex
body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"uploadfile\"; filename=\"l.yaml\"\r\n\r\n"
        + open(path).read() + f"\r\n--{boundary}--\r\n").encode()
req = urllib.request.Request(url + "/pipelines/upload?name=wide-loop", data=body,
                             headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
pipeline = json.load(urllib.request.urlopen(req))["pipeline_id"]
print(f"{'items':>8} {'seconds':>8} {'state':>10} {'rss_MiB':>8}")
for n in map(int, sizes):
    run = {"display_name": f"loop-{n}", "pipeline_version_reference": {"pipeline_id": pipeline},
           "runtime_config": {"parameters": {"list": [str(i) for i in range(n)]}}}
    start = time.time()
    req = urllib.request.Request(url + "/runs", data=json.dumps(run).encode(),
                                 headers={"Content-Type": "application/json"})
    run_id = json.load(urllib.request.urlopen(req))["run_id"]
    while True:
        state = json.load(urllib.request.urlopen(f"{url}/runs/{run_id}"))["state"]
        if state in ("SUCCEEDED", "FAILED", "CANCELED"): break
        time.sleep(0.05)
    rss = int(open(f"/proc/{pid}/status").read().split("VmRSS:")[1].split()[0]) // 1024
    print(f"{n:>8} {time.time() - start:>8.2f} {state:>10} {rss:>8}")
PY
