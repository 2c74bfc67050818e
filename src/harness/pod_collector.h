// `run --kube-context`: after the runs finished (before clean-up deletes them
// and their pods), reads the pods each run's task details name and adds the
// pod lifecycle section to the results.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "kube/pod_reader.h"
#include "results/pod_lifecycle.h"
#include "results/results.h"

namespace kfpbench::harness {

struct PodRef {
  std::string run_id;
  std::string step;
  std::string pod;
};

// The pods of every finished run: each task's pod_name, then pods that only
// its child_tasks name (attributed to that task). Each pod once, in run order.
std::vector<PodRef> PodsOfRuns(const std::vector<results::RunRecord>& runs);

// Reads the pods through kubectl and builds the section. Never fails: pods
// that are gone and kubectl errors are counted in it.
results::PodLifecycle CollectPodLifecycle(const std::vector<results::RunRecord>& runs,
                                          const kube::PodReaderOptions& options);

// For HarnessOptions::before_cleanup: collects into results.pod_lifecycle.
std::function<void(results::BenchmarkResults&)> PodLifecycleStep(kube::PodReaderOptions options);

}  // namespace kfpbench::harness
