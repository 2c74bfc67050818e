// The pod lifecycle section of the results (`run --kube-context`): for every
// step of every finished run, what its pods spent before doing work —
// scheduling, init containers, image pulls, container start, readiness — as
// kube-burner's pod latency does, in mergeable histograms per step.
#pragma once

#include <array>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kube/pod_timeline.h"
#include "metrics/histogram.h"
#include "util/result.h"

namespace kfpbench::results {

// The latencies of a step's pods, in ms. The first five are measured from the
// pod's creation, as kube-burner's podLatencyQuantiles are, so they add up
// along a pod's life; image_pull has one sample per image pulled; running is
// the main container's start to finish.
inline constexpr std::array<const char*, 7> kPodLatencies = {
    "scheduled",  "initialized", "containers_started", "containers_ready", "ready",
    "image_pull", "running"};

struct StepPodLatency {
  int pods = 0;
  int image_pulls = 0;        // images pulled (one sample each in image_pull)
  int images_present = 0;     // "already present on machine"
  int pull_failures = 0;      // containers with a failed pull event
  int failed_scheduling = 0;  // FailedScheduling events
  int unschedulable = 0;      // pods still Pending because no node fits (no latency sample)
  int ready_inferred = 0;     // readiness taken from container start (finished pods)
  std::map<std::string, metrics::Histogram> ms;  // by name in kPodLatencies
};

// One pod as read, and whose it is.
struct PodRecord {
  std::string run_id;
  std::string step;  // the task's display name; "(driver)" appended for KFP driver pods
  kube::PodTimeline pod;
};

// A pod the run named that could not be read.
struct MissingPod {
  std::string run_id;
  std::string step;
  std::string pod;
  std::string why;  // "not found" (deleted, garbage-collected) or "kubectl failed"
};

struct PodLifecycle {
  bool collected = false;  // --kube-context was given
  std::string context;
  std::string namespace_;
  int pods_requested = 0;
  int pods_without_events = 0;  // read, but no event of theirs was listed (expired after ~1h)
  int kubectl_calls = 0;
  std::vector<std::string> errors;  // kubectl failures, one line each
  std::map<std::string, StepPodLatency> steps;
  std::vector<PodRecord> pods;
  std::vector<MissingPod> missing;

  // Adds a pod to its step's histograms and to `pods`.
  void Add(PodRecord record);
  // Another shard's section: histograms and counts add, lists append.
  void Merge(const PodLifecycle& other);
};

// The step of a pod: the task's name, marked when the pod is one of KFP's
// driver pods (their latency is the control plane's, not the step's).
std::string PodStep(const std::string& task_name, const std::string& pod_name);

// results.json's "pod_lifecycle" (docs/RESULTS.md).
nlohmann::json PodLifecycleToJson(const PodLifecycle& section);
// Errors name the JSON path, e.g. "pod_lifecycle.steps.train.ms.ready: ...".
Result<PodLifecycle> PodLifecycleFromJson(const nlohmann::json& j);

}  // namespace kfpbench::results
