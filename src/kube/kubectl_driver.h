// The Kubernetes driver: kubectl with the user's kubeconfig applies the
// manifest, waits on the job's conditions, reads every replica's log and
// deletes the job, so it works on any cluster the user can reach.
#pragma once

#include <atomic>
#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

#include "kube/driver.h"

namespace kfpbench::kube {

// What a job's .status says: batch/v1 Complete/Failed, or the training
// operator's Succeeded/Failed (FACTS.md §5, §6).
struct JobState {
  bool finished = false;
  bool succeeded = false;
  std::string reason;  // of the deciding condition
  std::string message;
};
JobState ReadJobState(JobKind kind, const nlohmann::json& job);

struct KubectlDriverOptions {
  std::string kubectl = "kubectl";  // looked up on PATH
  std::string context;              // --context, empty: the current one
  std::chrono::milliseconds poll{2000};
  std::chrono::milliseconds command_timeout{60000};
  bool keep = false;  // leave the job (and its pods) in the cluster
  const std::atomic<bool>* interrupted = nullptr;
};

class KubectlDriver : public Driver {
 public:
  explicit KubectlDriver(KubectlDriverOptions options) : options_(std::move(options)) {}
  std::string name() const override { return "kubernetes"; }
  JobOutcome Run(const JobConfig& config, const SweepPoint& point) override;

 private:
  Result<std::string> Kubectl(std::vector<std::string> args) const;
  // The steps of Run: create the job (after applying the files it ships in
  // a ConfigMap: true when there are some; a job of the same name being
  // deleted is waited out until `deadline`, another refused), wait for it to
  // finish (a timeout or an interrupt sets `error`), read every replica's
  // log, delete what was applied.
  Result<bool> Apply(const JobConfig& config, const SweepPoint& point,
                     std::chrono::steady_clock::time_point deadline) const;
  JobState Wait(const JobConfig& config, const SweepPoint& point,
                std::chrono::steady_clock::time_point deadline, std::string& error) const;
  std::vector<std::string> ReadLogs(const JobConfig& config, const SweepPoint& point,
                                    JobOutcome& outcome) const;
  void Delete(const JobConfig& config, const SweepPoint& point, bool has_config_map) const;
  KubectlDriverOptions options_;
};

// The label selector of a job's pods.
std::string PodSelector(JobKind kind, const std::string& job_name);

}  // namespace kfpbench::kube
