// Benchmark job configs: system settings, workload parameters and a sweep,
// turned into one concrete run per sweep point (the Kubebench design).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "util/result.h"

namespace kfpbench::kube {

enum class JobKind { kJob, kTFJob, kPyTorchJob, kMPIJob };

// Everything kfpbench knows of a kind, in one row of one table.
struct JobKindInfo {
  JobKind kind;
  std::string name;         // the manifest's kind: "PyTorchJob"
  std::string api_version;  // "kubeflow.org/v1"
  std::string resource;     // the "plural.group" kubectl takes: pytorchjobs.kubeflow.org
  // The main container: the training operator finds it by this name.
  std::string container;
  // The Python module its replicas import; empty where the kind implies none.
  std::string framework_module;
  // Roles (replica types) it accepts, in the order replicas are ranked.
  std::vector<std::string> roles;
};

const JobKindInfo& KindInfo(JobKind kind);
// By manifest name ("TFJob"); null when none.
const JobKindInfo* FindKind(const std::string& name);

// How one metric is read from replica logs.
struct MetricSpec {
  std::string name;
  std::string regex;  // ECMAScript, with one named group (?<value>...) or (?P<name>...)
  std::string jsonl;  // or: a key of JSON objects, one per log line
  std::string per_replica = "mean";  // last, mean, min, max, sum over a replica's values
  std::string across = "sum";        // sum, mean, min, max over replicas
  std::vector<std::string> roles;    // empty: every role
};

struct ReplicaSpec {
  std::string role;
  int count = 0;
};

// Parameters keep their YAML text: they are substituted into strings.
using Params = std::map<std::string, std::string>;

struct JobConfig {
  std::string name;
  JobKind kind = JobKind::kJob;
  std::string namespace_ = "default";
  std::string image;
  std::vector<std::string> command;                      // templates
  std::vector<std::pair<std::string, std::string>> env;  // values are templates
  // Pod annotations (kubernetes driver and `job render`), values templates:
  // a mesh's `sidecar.istio.io/inject: "false"`, or the run time a stand-in
  // kubelet (kwok, scripts/stack) gives the pods.
  std::vector<std::pair<std::string, std::string>> annotations;
  std::vector<ReplicaSpec> replicas;  // in KindRoles order
  // Container resources, passed through as JSON text ({"requests":{...},"limits":{...}}).
  std::string resources_json;
  int timeout_seconds = 600;
  Params parameters;          // defaults
  std::vector<Params> sweep;  // overrides per point; empty means one point
  std::vector<MetricSpec> metrics;
  std::filesystem::path dir;  // the config file's folder, {{config_dir}}
};

// One run: the config with every parameter fixed.
struct SweepPoint {
  int index = 0;
  std::string job_name;  // DNS-1123: <name>-<index>
  // Defaults, overrides and built-ins: job_name, namespace, and config_dir
  // (the config's folder unless a parameter of that name overrides it).
  Params params;
};

// Strict: unknown keys, wrong types and bad values are errors naming the key.
Result<JobConfig> ParseJobConfig(const std::string& yaml_text,
                                 const std::filesystem::path& dir = ".");
Result<JobConfig> LoadJobConfig(const std::filesystem::path& file);

std::vector<SweepPoint> ExpandSweep(const JobConfig& config);

// Sets a parameter's default from the command line (--set key=value); a
// swept parameter cannot be set (it would silently undo the sweep).
Status SetParameter(JobConfig& config, const std::string& assignment);

// Replaces every {{name}} (spaces allowed inside the braces); an unknown name
// is an error, so a typo never reaches a cluster.
Result<std::string> Substitute(const std::string& text, const Params& params);

}  // namespace kfpbench::kube
