// Reads pods and their events through kubectl (the user's kubeconfig), in a
// bounded number of calls: pods by name in batches, and the namespace's pod
// events in one list. Nothing here is fatal: what could not be read is
// counted and said.
#pragma once

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kfpbench::kube {

struct PodReaderOptions {
  std::string kubectl = "kubectl";  // looked up on PATH
  std::string context;              // --context; empty: the current one
  std::string namespace_;           // where the pods run
  size_t batch = 50;                // pod names per `kubectl get pods`
  std::chrono::milliseconds command_timeout{120000};
};

struct PodReadout {
  std::map<std::string, nlohmann::json> pods;  // found, by name
  std::set<std::string> missing;               // not found (deleted, garbage-collected)
  std::set<std::string> unread;                // their kubectl call failed
  std::map<std::string, std::vector<nlohmann::json>> events;  // by pod name
  bool events_read = false;                                   // the events list was read
  std::vector<std::string> errors;                            // one line per failed call
  int kubectl_calls = 0;
};

// `kubectl get pods NAME... -n NS --ignore-not-found -o json` per batch of
// names, then `kubectl get events -n NS --field-selector involvedObject.kind=Pod
// -o json` once (one call instead of one per pod; kubectl pages it).
PodReadout ReadPods(const std::vector<std::string>& names, const PodReaderOptions& options);

}  // namespace kfpbench::kube
