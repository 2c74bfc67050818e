// `kfpbench kube loadgen`: spreads one scenario over an Indexed Job whose pods
// each run a shard of it (`kfpbench run --shard $JOB_COMPLETION_INDEX/N`), so
// N pods send what one machine would, and `kfpbench merge` combines them.
//
// What the set needs to run on a first cluster, and nothing more: the scenario
// and every file it names in one ConfigMap, the token from a Secret, results on
// each pod's own emptyDir (no ReadWriteMany storage class needed) kept until
// they are copied out, requests and limits, and a common start time.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kube/shipped_files.h"
#include "util/result.h"
#include "util/time.h"

namespace kfpbench::kube {

// Where the pods find what the ConfigMap ships, the token Secret, and results.
inline constexpr const char* kLoadgenFilesMount = "/etc/kfpbench/scenario";
inline constexpr const char* kLoadgenTokenMount = "/var/run/secrets/kfpbench";
inline constexpr const char* kLoadgenResultsMount = "/results";
// The non-root user (and group) the load pods run as: the Dockerfile's USER.
inline constexpr int kLoadgenUid = 10001;

// A file a scenario names, as written in it and as this machine found it.
struct NamedFile {
  std::string where;           // "[0].pipelineFileName", for messages
  std::string name;            // as written: "pipelines/sleep_chain.yaml"
  std::filesystem::path path;  // the file this machine read
  // The --pipelines folder it was found in (index), or -1: beside the scenario.
  int pipeline_dir = -1;
};

struct LoadgenOptions {
  std::string name = "kfpbench-loadgen";
  std::string kube_namespace = "default";  // where the Job runs (--kube-namespace)
  // What every shard's `kfpbench run` gets as the flags of the same names:
  // the KFP namespace (multi-user KFP), the time scale, and the CA file
  // (shipped among `files`, its path below the mount; empty: none).
  std::string kfp_namespace;
  double time_scale = 1.0;
  std::string ca_file_path;
  // Built from the Dockerfile and pushed where the nodes pull from
  // (docs/KUBERNETES.md); required, as no kfpbench image is published. The
  // shipped pipelines' kfpbench steps run it too.
  std::string image;
  std::string host;  // the KFP API the shards load
  int shards = 1;
  // The scenario (among `files`) and what it names, as ShipScenario lays them out.
  std::string scenario_path;
  std::vector<ShippedFile> files;
  std::vector<std::string> pipeline_dirs;  // below kLoadgenFilesMount: run's --pipelines
  // Step images in the shipped pipelines that named the unpublished
  // placeholder and now name `image` (set by ShipScenario).
  int step_images_pointed = 0;
  // A Secret in the namespace whose key `token` holds the bearer token; empty: none.
  std::string token_secret;
  // Per load pod, requests and limits alike (Guaranteed QoS: a throttled or
  // evicted load generator measures itself, not KFP).
  std::string cpu = "1";
  std::string memory = "1Gi";
  std::string storage = "1Gi";  // emptyDir size limit for the shard's results
  // Every shard sleeps until this instant, then starts; a pod that arrives
  // more than a second later exits 3 instead of loading out of step.
  WallTime start_at{};
  // After its load, a shard keeps its results this long for `kubectl cp`.
  Duration collect_within = std::chrono::hours(1);
};

// Lays the scenario and the files it names out below the mount as the pods'
// kfpbench will look for them (the scenario's own folder, then --pipelines),
// reading each one. Steps that name kfpbench's unpublished image
// (images.h) run `options.image` instead: KFP starts them on the cluster.
// Refuses what a pod could not be given: absolute names, unreadable or
// non-UTF-8 files, more than a ConfigMap holds.
Status ShipScenario(const std::filesystem::path& scenario, const std::vector<NamedFile>& named,
                    LoadgenOptions& options);

// Ships the CA certificate that verifies KFP's https (a public file) beside
// the scenario, for the shards' --ca-file. Call after ShipScenario.
Status ShipCaFile(const std::filesystem::path& ca_file, LoadgenOptions& options);

// ConfigMap (the files) and the Indexed Job, in apply order. Pods and
// containers meet the `restricted` Pod Security Standard (non-root, no
// privilege escalation, every capability dropped, seccomp RuntimeDefault).
Result<std::vector<nlohmann::json>> RenderLoadgen(const LoadgenOptions& options);

// `kubectl create secret` for the token Secret the Job names: the token file
// goes from disk to the cluster, never through kfpbench's output.
std::string TokenSecretCommand(const LoadgenOptions& options,
                               const std::filesystem::path& token_file);

// Single-quoted for /bin/sh.
std::string ShellQuote(const std::string& s);

}  // namespace kfpbench::kube
