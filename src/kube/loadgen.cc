#include "kube/loadgen.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "ir/quantity.h"
#include "kube/images.h"

namespace kfpbench::kube {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// How many leading ".." a lexically normal relative path has.
int LeadingParents(const fs::path& p) {
  int n = 0;
  for (const auto& part : p) {
    if (part != "..") break;
    ++n;
  }
  return n;
}

// Adds `text` at `path` unless the same path is shipped already (two
// scenarios naming one pipeline); whether it was added.
bool Add(std::vector<ShippedFile>& files, const std::string& path, std::string text) {
  for (const auto& f : files) {
    if (f.path == path) return false;
  }
  files.push_back({path, std::move(text)});
  return true;
}

}  // namespace

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

Status ShipScenario(const fs::path& scenario, const std::vector<NamedFile>& named,
                    LoadgenOptions& o) {
  // The pods' kfpbench resolves a name beside the scenario first, as here:
  // the scenario sits as many folders deep as its names climb out with "..".
  int depth = 0;
  for (const auto& f : named) {
    fs::path name = fs::path(f.name).lexically_normal();
    if (name.is_absolute()) {
      return Error{fmt::format(
          "{}: '{}' is a path on this machine, which no pod has; name it relative to the "
          "scenario's folder (or to a --pipelines folder) so it can be shipped",
          f.where, f.name)};
    }
    if (f.pipeline_dir < 0) depth = std::max(depth, LeadingParents(name));
  }
  fs::path home;
  for (int i = 1; i <= depth; ++i) home /= fmt::format("d{}", i);
  auto text = ReadShippedText("scenario", scenario);
  if (!text.ok()) return text.error();
  o.files.clear();
  o.pipeline_dirs.clear();
  o.step_images_pointed = 0;
  o.scenario_path = (home / scenario.filename()).generic_string();
  Add(o.files, o.scenario_path, std::move(*text));
  int dirs = 0;
  for (const auto& f : named) dirs = std::max(dirs, f.pipeline_dir + 1);
  for (int i = 0; i < dirs; ++i) o.pipeline_dirs.push_back("pipelines-" + std::to_string(i));
  for (const auto& f : named) {
    fs::path name = fs::path(f.name).lexically_normal();
    fs::path at = f.pipeline_dir < 0 ? (home / name).lexically_normal()
                                     : fs::path(o.pipeline_dirs[f.pipeline_dir]) / name;
    if (LeadingParents(at.lexically_normal()) > 0) {
      return Error{fmt::format("{}: '{}' climbs out of its --pipelines folder; name it inside",
                               f.where, f.name)};
    }
    auto content = ReadShippedText(f.where, f.path);
    if (!content.ok()) return content.error();
    int pointed = 0;
    if (!o.image.empty()) *content = PointUnpublishedImages(*content, o.image, pointed);
    if (Add(o.files, at.lexically_normal().generic_string(), std::move(*content))) {
      o.step_images_pointed += pointed;
    }
  }
  // The folders no file was found in stay off the command line.
  std::vector<std::string> used;
  for (const auto& d : o.pipeline_dirs) {
    bool any = std::any_of(o.files.begin(), o.files.end(),
                           [&](const ShippedFile& f) { return f.path.rfind(d + "/", 0) == 0; });
    used.push_back(any ? d : "");
  }
  o.pipeline_dirs = used;
  std::erase(o.pipeline_dirs, "");
  return CheckConfigMapSize(o.files, "the scenario and the files it names");
}

namespace {

Status CheckLoadgenOptions(const LoadgenOptions& o) {
  if (o.shards < 1 || o.shards > 100000) return Error{"--shards must be between 1 and 100000"};
  if (o.host.empty()) return Error{"--host is required: the shards load a KFP API in the cluster"};
  if (o.name.empty() || o.name.size() > 40) return Error{"--name must be 1 to 40 characters"};
  if (o.scenario_path.empty() || o.files.empty()) return Error{"no scenario file"};
  if (o.image.empty()) {
    return Error{
        "--image is required: no kfpbench image is published; build the Dockerfile's, push it "
        "where the nodes pull from and name it (docs/KUBERNETES.md)"};
  }
  if (IsUnpublishedImage(o.image)) {
    return Error{"--image " + o.image +
                 ": that name is published nowhere, so no node could pull it; build the "
                 "Dockerfile's image, push it to your registry and name that (docs/KUBERNETES.md)"};
  }
  if (o.start_at == WallTime{}) return Error{"no start time for the shards"};
  if (!(o.time_scale > 0)) return Error{"--time-scale must be above 0"};
  if (auto q = ir::ParseQuantityCpu(o.cpu); !q.ok()) return Error{"--cpu: " + q.error().message};
  for (const auto& [flag, value] : {std::pair{"--memory", o.memory}, {"--storage", o.storage}}) {
    if (auto q = ir::ParseQuantityMemory(value); !q.ok()) {
      return Error{std::string(flag) + ": " + q.error().message};
    }
  }
  return Ok();
}

// What each shard's container runs: wait for the common start, run its shard
// of the scenario, then keep its results until they are collected.
std::string ShardScript(const LoadgenOptions& o) {
  const std::string mount = kLoadgenFilesMount;
  const std::string results = kLoadgenResultsMount;
  std::string run = "kfpbench run " + ShellQuote(mount + "/" + o.scenario_path) + " --host " +
                    ShellQuote(o.host) + " --shard \"$i/" + std::to_string(o.shards) +
                    "\" --out \"" + results + "/shard-$i\" --quiet";
  for (const auto& d : o.pipeline_dirs) run += " --pipelines " + ShellQuote(mount + "/" + d);
  if (!o.kfp_namespace.empty()) run += " --namespace " + ShellQuote(o.kfp_namespace);
  if (o.time_scale != 1.0) run += fmt::format(" --time-scale {}", o.time_scale);
  if (!o.ca_file_path.empty()) run += " --ca-file " + ShellQuote(mount + "/" + o.ca_file_path);
  if (!o.token_secret.empty()) {
    run += " --token-file " + ShellQuote(std::string(kLoadgenTokenMount) + "/token");
  }
  const int64_t start_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(o.start_at.time_since_epoch()).count();
  const int64_t collect_s = std::max<int64_t>(
      1, std::chrono::duration_cast<std::chrono::seconds>(o.collect_within).count());
  // JOB_COMPLETION_INDEX comes from the Job controller (FACTS.md §6); the
  // shell expands it, as Kubernetes does not expand $(VAR) it did not set.
  // The shell stays PID 1 to keep the results after the load, so it passes
  // SIGTERM on as the interrupt kfpbench drains on.
  std::string script = fmt::format(
      R"sh(i="${{JOB_COMPLETION_INDEX}}"
start_ns={start_ns}
late_ns=$(( $(date +%s%N) - start_ns ))
if [ "$late_ns" -gt 1000000000 ]; then
  echo "shard $i: started $(( late_ns / 1000000 )) ms after {start}, out of step with the other shards; render again with a later --start-at" >&2
  exit 3
fi
if [ "$late_ns" -lt 0 ]; then
  wait_ns=$(( -late_ns ))
  sleep "$(( wait_ns / 1000000000 )).$(printf %09d $(( wait_ns % 1000000000 )))"
fi
{run} &
pid=$!
trap 'kill -INT "$pid" 2>/dev/null' INT TERM
wait "$pid"; code=$?
while kill -0 "$pid" 2>/dev/null; do wait "$pid"; code=$?; done
echo "$code" > {results}/exit-code-$i
touch {results}/ready
waited=0
while [ ! -e {results}/collected ] && [ "$waited" -lt {collect_s} ]; do sleep 5; waited=$(( waited + 5 )); done
exit "$code"
)sh",
      fmt::arg("start_ns", start_ns), fmt::arg("start", FormatRfc3339(o.start_at)),
      fmt::arg("run", run), fmt::arg("results", results), fmt::arg("collect_s", collect_s));
  return script;
}

// The shard's volumes: the shipped files, its results folder and the token (if any).
json ShardVolumes(const LoadgenOptions& o, const json& files_volume_source) {
  json volumes = {{{"name", "files"}, {"configMap", files_volume_source}},
                  {{"name", "results"}, {"emptyDir", {{"sizeLimit", o.storage}}}}};
  if (!o.token_secret.empty()) {
    // 0440: only the pod's group (fsGroup, the image's user) reads the token.
    volumes.push_back({{"name", "token"},
                       {"secret",
                        {{"secretName", o.token_secret},
                         {"items", {{{"key", "token"}, {"path", "token"}}}},
                         {"defaultMode", 0440}}}});
  }
  return volumes;
}

// The shard's container, with its volumes mounted.
json ShardContainer(const LoadgenOptions& o) {
  const std::string results = kLoadgenResultsMount;
  json resources = {{"cpu", o.cpu}, {"memory", o.memory}};
  // The scheduler places a pod by its requests: the results' emptyDir is
  // asked for too (not limited beyond its sizeLimit, so logs cannot evict it).
  json requests = resources;
  requests["ephemeral-storage"] = o.storage;
  json volume_mounts = {{{"name", "files"}, {"mountPath", kLoadgenFilesMount}, {"readOnly", true}},
                        {{"name", "results"}, {"mountPath", results}}};
  if (!o.token_secret.empty()) {
    volume_mounts.push_back(
        {{"name", "token"}, {"mountPath", kLoadgenTokenMount}, {"readOnly", true}});
  }
  json container = {
      {"name", "kfpbench"},
      {"image", o.image},
      {"command", {"/bin/sh", "-c", ShardScript(o)}},
      {"resources", {{"requests", requests}, {"limits", resources}}},
      // Ready once the shard's results are complete: `kubectl wait
      // --for=condition=Ready` is the signal to copy them out.
      {"readinessProbe",
       {{"exec", {{"command", {"test", "-e", results + "/ready"}}}}, {"periodSeconds", 5}}},
      {"volumeMounts", volume_mounts},
      // The container half of the `restricted` Pod Security Standard.
      {"securityContext",
       {{"allowPrivilegeEscalation", false},
        {"capabilities", {{"drop", {"ALL"}}}},
        {"runAsNonRoot", true}}}};
  return container;
}

}  // namespace

Result<std::vector<json>> RenderLoadgen(const LoadgenOptions& o) {
  if (auto st = CheckLoadgenOptions(o); !st.ok()) return st.error();
  json labels = {{"app.kubernetes.io/managed-by", "kfpbench"}, {"app.kubernetes.io/name", o.name}};
  const std::string files_name = o.name + "-files";
  auto shipped = RenderShippedFiles(files_name, o.kube_namespace, labels, o.files);
  json meta = {{"name", o.name}, {"namespace", o.kube_namespace}, {"labels", labels}};
  json job = {{"apiVersion", "batch/v1"},
              {"kind", "Job"},
              {"metadata", meta},
              {"spec",
               {{"completionMode", "Indexed"},
                {"completions", o.shards},
                {"parallelism", o.shards},
                // Per index: a shard that fails (late, or kfpbench exited non-zero)
                // neither restarts nor stops the others, which keep their results
                // for collection; the Job then ends Failed naming failedIndexes.
                {"backoffLimitPerIndex", 0},
                {"template",
                 {{"metadata", {{"labels", labels}}},
                  {"spec",
                   {{"restartPolicy", "Never"},
                    // The shards talk to KFP, never to the Kubernetes API.
                    {"automountServiceAccountToken", false},
                    // The pod half of the `restricted` Pod Security Standard: the
                    // image's non-root user (Dockerfile), which also owns the
                    // volumes' files through fsGroup.
                    {"securityContext",
                     {{"runAsNonRoot", true},
                      {"runAsUser", kLoadgenUid},
                      {"runAsGroup", kLoadgenUid},
                      {"fsGroup", kLoadgenUid},
                      {"seccompProfile", {{"type", "RuntimeDefault"}}}}},
                    {"containers", {ShardContainer(o)}},
                    // One shard a node while nodes last: shards sharing a node
                    // share its network and CPU, and would measure each other.
                    {"topologySpreadConstraints",
                     {{{"maxSkew", 1},
                       {"topologyKey", "kubernetes.io/hostname"},
                       {"whenUnsatisfiable", "ScheduleAnyway"},
                       {"labelSelector", {{"matchLabels", labels}}}}}},
                    {"volumes", ShardVolumes(o, shipped.volume_source)}}}}}}}};
  return std::vector<json>{shipped.config_map, job};
}

Status ShipCaFile(const fs::path& ca_file, LoadgenOptions& o) {
  auto text = ReadShippedText("--ca-file", ca_file);
  if (!text.ok()) return text.error();
  o.ca_file_path = "ca/" + ca_file.filename().string();
  if (!Add(o.files, o.ca_file_path, std::move(*text))) {
    return Error{"--ca-file: " + o.ca_file_path + " is shipped already"};
  }
  return CheckConfigMapSize(o.files, "the scenario, the files it names and the CA file");
}

std::string TokenSecretCommand(const LoadgenOptions& o, const fs::path& token_file) {
  return fmt::format("kubectl create secret generic {} -n {} --from-file=token={}", o.token_secret,
                     o.kube_namespace, ShellQuote(token_file.string()));
}

}  // namespace kfpbench::kube
