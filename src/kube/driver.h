// Drivers run one sweep point of a job config and hand back the replicas'
// logs: on this machine as processes (local) or on a cluster (kubectl).
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "kube/job_config.h"
#include "kube/log_metrics.h"

namespace kfpbench::kube {

struct JobOutcome {
  bool succeeded = false;
  // Why the job failed: the replica, its exit code or condition, and its log tail.
  std::string error;
  std::vector<ReplicaLog> logs;
  double duration_seconds = 0;
};

class Driver {
 public:
  virtual ~Driver() = default;
  virtual std::string name() const = 0;
  // Checks, once before the first point runs, what every point would need
  // (e.g. an interpreter that can import the framework), so a sweep fails
  // with one clear message instead of once per replica.
  virtual Status Preflight(const JobConfig& /*config*/, const SweepPoint& /*point*/) {
    return Ok();
  }
  // Runs the job to the end (or its timeout) and cleans up after it.
  virtual JobOutcome Run(const JobConfig& config, const SweepPoint& point) = 0;
};

struct LocalDriverOptions {
  std::filesystem::path work_root;  // empty: a fresh folder under /tmp
  bool keep = false;                // keep logs and hostfiles
  // Once the replicas that decide success are done, the others get this long
  // to exit on their own (PyTorch workers finish just after the master).
  std::chrono::milliseconds linger{10000};
  const std::atomic<bool>* interrupted = nullptr;
};

// One local process per replica with the environment the Kubeflow operators
// give it, with loopback addresses in place of Service names.
class LocalDriver : public Driver {
 public:
  explicit LocalDriver(LocalDriverOptions options) : options_(std::move(options)) {}
  std::string name() const override { return "local"; }
  Status Preflight(const JobConfig& config, const SweepPoint& point) override;
  JobOutcome Run(const JobConfig& config, const SweepPoint& point) override;

 private:
  LocalDriverOptions options_;
};

// One replica as the local driver starts it; exposed for tests.
struct LocalReplica {
  std::string role;
  int index = 0;
  std::string name;  // <job>-<role>-<index>, lower case, like the operator's pods
  std::vector<std::pair<std::string, std::string>> env;
  bool decides = false;  // its success completes the job
  bool started = true;   // MPI workers are hosted by mpirun, not started
};
// `ports` are free loopback ports, one per replica (TF) or one (PyTorch);
// `work_dir` receives the MPI hostfile.
Result<std::vector<LocalReplica>> PlanLocalReplicas(const JobConfig& config,
                                                    const SweepPoint& point,
                                                    const std::vector<int>& ports,
                                                    const std::filesystem::path& work_dir);

// When `argv0` names a Python interpreter, checks that it imports `module`;
// the error names the interpreter as PATH resolves it and suggests one that
// can (pyenv, conda or a venv often put a python3 without Debian's packages
// first on PATH).
Status CheckInterpreterImports(const std::string& argv0, const std::string& module);

// A free TCP port on 127.0.0.1 (bound, read, released).
Result<int> FreePort();

}  // namespace kfpbench::kube
