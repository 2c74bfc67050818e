#include "harness/pod_collector.h"

#include <set>

#include <spdlog/spdlog.h>

#include "kube/pod_timeline.h"

namespace kfpbench::harness {

std::vector<PodRef> PodsOfRuns(const std::vector<results::RunRecord>& runs) {
  std::vector<PodRef> out;
  std::set<std::string> seen;
  for (const auto& run : runs) {
    if (run.run_id.empty() || !IsTerminal(run.state)) continue;
    // A task's own pod first, so a DAG's child list never claims a step's pod.
    for (const auto& t : run.tasks) {
      if (!t.pods.empty() && !t.pods[0].empty() && seen.insert(t.pods[0]).second) {
        out.push_back({run.run_id, results::PodStep(t.name, t.pods[0]), t.pods[0]});
      }
    }
    for (const auto& t : run.tasks) {
      for (size_t i = 1; i < t.pods.size(); ++i) {
        if (!t.pods[i].empty() && seen.insert(t.pods[i]).second) {
          out.push_back({run.run_id, results::PodStep(t.name, t.pods[i]), t.pods[i]});
        }
      }
    }
  }
  return out;
}

results::PodLifecycle CollectPodLifecycle(const std::vector<results::RunRecord>& runs,
                                          const kube::PodReaderOptions& options) {
  results::PodLifecycle section;
  section.collected = true;
  section.context = options.context;
  section.namespace_ = options.namespace_;
  auto refs = PodsOfRuns(runs);
  section.pods_requested = static_cast<int>(refs.size());
  std::vector<std::string> names;
  names.reserve(refs.size());
  for (const auto& r : refs) names.push_back(r.pod);
  kube::PodReadout readout = kube::ReadPods(names, options);
  section.kubectl_calls = readout.kubectl_calls;
  section.errors = readout.errors;
  static const std::vector<nlohmann::json> kNoEvents;
  for (const auto& ref : refs) {
    auto found = readout.pods.find(ref.pod);
    if (found == readout.pods.end()) {
      section.missing.push_back({ref.run_id, ref.step, ref.pod,
                                 readout.unread.count(ref.pod) ? "kubectl failed" : "not found"});
      continue;
    }
    auto events = readout.events.find(ref.pod);
    auto timeline = kube::ReadPodTimeline(
        found->second, events == readout.events.end() ? kNoEvents : events->second);
    if (!timeline.ok()) {
      section.errors.push_back(timeline.error().message);
      section.missing.push_back({ref.run_id, ref.step, ref.pod, "unreadable"});
      continue;
    }
    section.Add({ref.run_id, ref.step, std::move(*timeline)});
  }
  std::string errors;
  if (!section.errors.empty()) {
    errors = ", ";
    errors += std::to_string(section.errors.size());
    errors += " kubectl errors";
  }
  spdlog::info("pod lifecycle: {} pods named by {} runs, {} read, {} missing, {} kubectl calls{}",
               refs.size(), runs.size(), section.pods.size(), section.missing.size(),
               section.kubectl_calls, errors);
  return section;
}

std::function<void(results::BenchmarkResults&)> PodLifecycleStep(kube::PodReaderOptions options) {
  return [options](results::BenchmarkResults& results) {
    results.pod_lifecycle = CollectPodLifecycle(results.runs, options);
  };
}

}  // namespace kfpbench::harness
