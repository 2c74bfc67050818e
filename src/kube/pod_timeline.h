// The lifecycle of one pod after the fact, from what `kubectl get pod -o json`
// and `kubectl get events -o json` print: when it was scheduled, initialized,
// pulled its images, started its containers and became ready — what
// kube-burner calls pod latency, read from the API rather than watched live.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/result.h"
#include "util/time.h"

namespace kfpbench::kube {

struct ContainerTimeline {
  std::string name;
  bool init = false;  // an init container
  std::string image;
  // From the kubelet's events: the pull took this long (the "in 2.1s" of the
  // Pulled message, else Pulling → Pulled), or the image was already there.
  std::optional<Duration> pull;
  bool image_present = false;  // "already present on machine": no pull
  bool pull_failed = false;    // a Failed/ErrImagePull event for this container
  // From .status.(init)containerStatuses.
  std::optional<WallTime> started, finished;
  std::optional<int> exit_code;
  int restarts = 0;
  bool has_readiness_probe = false;
};

struct PodTimeline {
  std::string name;
  std::string uid;
  std::string node;
  std::string phase;
  WallTime created{};
  // lastTransitionTime of each condition while it is True.
  std::optional<WallTime> scheduled, initialized, containers_ready, ready;
  // A finished pod's ContainersReady/Ready are False (PodCompleted), so when
  // they became True is gone; without readiness probes or gates the kubelet
  // marks a running container ready at once, so its start time stands in.
  bool ready_inferred = false;
  int failed_scheduling = 0;  // FailedScheduling events (e.g. Unschedulable before a node came)
  // Still unplaced because no node fits: the scheduler's message on the
  // PodScheduled=False condition ("0/20 nodes are available: 20 Insufficient
  // cpu."); such a pod is waiting for capacity, not slow to start.
  std::string unschedulable;
  bool events_read = false;                   // any event of this pod was found
  std::vector<ContainerTimeline> containers;  // init containers first, in spec order

  // The regular containers all started (the latest start), if they did.
  std::optional<WallTime> ContainersStarted() const;
  // The main container: "main" (KFP's executor and driver pods) if present,
  // else the first regular container.
  const ContainerTimeline* Main() const;
};

// Reads a Pod object with the events about it (Event objects, any order).
// An error names what is missing (no metadata.name, a bad timestamp).
Result<PodTimeline> ReadPodTimeline(const nlohmann::json& pod,
                                    const std::vector<nlohmann::json>& events);

// The items of an EventList (kubectl get events -o json) about Pods, by pod
// name.
std::map<std::string, std::vector<nlohmann::json>> EventsByPod(const nlohmann::json& event_list);

// "Successfully pulled image "x" in 2.153s (2.153s including waiting). Image
// size: ..." -> 2.153 s; Go's duration text ("1m2.5s", "850.3ms", "12µs").
std::optional<Duration> PullDurationFromMessage(const std::string& message);

}  // namespace kfpbench::kube
