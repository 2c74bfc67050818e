// Kubernetes manifests for one sweep point of a job config: batch/v1 Job or
// the Kubeflow training operator's TFJob, PyTorchJob and MPIJob (kubeflow.org/v1).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "kube/job_config.h"
#include "util/result.h"

namespace kfpbench::kube {

// The container every replica runs, templates resolved.
struct ResolvedContainer {
  std::vector<std::string> command;
  std::vector<std::pair<std::string, std::string>> env;
  std::vector<std::pair<std::string, std::string>> annotations;  // the pod's
};
Result<ResolvedContainer> Resolve(const JobConfig& config, const SweepPoint& point);

Result<nlohmann::json> RenderManifest(const JobConfig& config, const SweepPoint& point);

// Block-style YAML; strings that YAML would read back as numbers, booleans or
// null are quoted (an env value of 32 must stay the string "32").
std::string ToYaml(const nlohmann::json& doc);

// The job held back: a batch/v1 Job's `spec.suspend`, a training-operator
// job's `spec.runPolicy.suspend`. `job render` prints every sweep point so,
// since `kubectl apply` of the whole stream would start the points at once
// and each would measure the others; they are resumed one at a time.
void Suspend(nlohmann::json& job);

}  // namespace kfpbench::kube
