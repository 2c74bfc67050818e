#include "kube/pod_reader.h"

#include <algorithm>
#include <optional>

#include "kube/pod_timeline.h"
#include "kube/process.h"
#include "util/json_reader.h"
#include "util/secrets.h"

namespace kfpbench::kube {
namespace {

using nlohmann::json;

struct Call {
  bool ok = false;
  std::string out;
  std::string error;  // one line, for the results
};

Call Kubectl(const PodReaderOptions& options, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {options.kubectl};
  if (!options.context.empty()) argv.push_back("--context=" + options.context);
  argv.insert(argv.end(), args.begin(), args.end());
  Call call;
  auto r = RunCapture(argv, options.command_timeout);
  if (!r.ok()) {
    call.error = "kubectl " + args[0] + " " + args[1] + ": " + r.error().message;
  } else if (r->exit_code != 0) {
    std::string err = Tail(r->err, 3);
    while (!err.empty() && (err.back() == '\n' || err.back() == '\r')) err.pop_back();
    for (auto& c : err) {
      if (c == '\n') c = ' ';
    }
    call.error = "kubectl " + args[0] + " " + args[1] + " failed (exit " +
                 std::to_string(r->exit_code) + "): " + err;
  } else {
    call.ok = true;
    call.out = std::move(r->out);
  }
  call.error = Redact(call.error);
  return call;
}

// `kubectl get pods ... -o json`: the pods printed, or nullopt after a
// failed call (its error recorded).
std::optional<json> GetPods(const PodReaderOptions& options, const std::vector<std::string>& args,
                            PodReadout& readout) {
  ++readout.kubectl_calls;
  Call call = Kubectl(options, args);
  if (!call.ok) {
    readout.errors.push_back(call.error);
    return std::nullopt;
  }
  // Several names or a selector print a List; one name prints the Pod
  // itself; none found (with --ignore-not-found) prints nothing.
  if (call.out.find_first_not_of(" \t\r\n") == std::string::npos) return json::array();
  json doc = ParseJson(call.out);
  if (doc.is_discarded() || !doc.is_object()) {
    readout.errors.push_back("kubectl get pods printed no JSON object");
    return std::nullopt;
  }
  json items =
      doc.value("kind", "") == "Pod" ? json::array({doc}) : doc.value("items", json::array());
  json out = json::array();
  for (auto& pod : items) {
    if (pod.is_object() && pod.contains("metadata") && pod["metadata"].is_object()) {
      out.push_back(std::move(pod));
    }
  }
  return out;
}

// "<workflow>-<digits>": the form of an Argo node ID, which some KFP versions
// report as a task's pod_name; the pod itself is "<workflow>-<template>-<digits>".
std::optional<std::string> WorkflowOfNodeId(const std::string& id) {
  auto dash = id.rfind('-');
  if (dash == std::string::npos || dash == 0 || dash + 1 == id.size()) return std::nullopt;
  for (size_t i = dash + 1; i < id.size(); ++i) {
    if (id[i] < '0' || id[i] > '9') return std::nullopt;
  }
  return id.substr(0, dash);
}

}  // namespace

PodReadout ReadPods(const std::vector<std::string>& names, const PodReaderOptions& options) {
  PodReadout readout;
  std::vector<std::string> unique;
  std::set<std::string> seen;
  for (const auto& n : names) {
    if (!n.empty() && seen.insert(n).second) unique.push_back(n);
  }
  if (unique.empty()) return readout;
  const size_t batch = std::max<size_t>(1, options.batch);
  for (size_t from = 0; from < unique.size(); from += batch) {
    std::vector<std::string> part(unique.begin() + from,
                                  unique.begin() + std::min(unique.size(), from + batch));
    std::vector<std::string> args = {"get", "pods"};
    args.insert(args.end(), part.begin(), part.end());
    for (const char* a : {"-n", options.namespace_.c_str(), "--ignore-not-found", "-o", "json"}) {
      args.emplace_back(a);
    }
    auto items = GetPods(options, args, readout);
    if (!items) {
      readout.unread.insert(part.begin(), part.end());
      continue;
    }
    for (auto& pod : *items) {
      std::string name = pod["metadata"].value("name", "");
      if (seen.count(name)) readout.pods[name] = std::move(pod);
    }
    for (const auto& n : part) {
      if (!readout.pods.count(n)) readout.missing.insert(n);
    }
  }

  // Names not found that look like Argo node IDs: the pods of their
  // workflows, matched by their node-id annotation.
  std::map<std::string, std::string> actual;  // pod name -> the name asked for
  std::set<std::string> workflows;
  for (const auto& m : readout.missing) {
    if (auto wf = WorkflowOfNodeId(m)) workflows.insert(*wf);
  }
  std::vector<std::string> wf_list(workflows.begin(), workflows.end());
  for (size_t from = 0; from < wf_list.size(); from += batch) {
    std::string selector = "workflows.argoproj.io/workflow in (";
    for (size_t i = from; i < std::min(wf_list.size(), from + batch); ++i) {
      if (i > from) selector += ",";
      selector += wf_list[i];
    }
    selector += ")";
    auto items = GetPods(
        options, {"get", "pods", "-n", options.namespace_, "-l", selector, "-o", "json"}, readout);
    if (!items) continue;  // those pods stay missing; the error is recorded
    for (auto& pod : *items) {
      const json& annotations = pod["metadata"].value("annotations", json::object());
      std::string id =
          annotations.is_object() ? annotations.value("workflows.argoproj.io/node-id", "") : "";
      if (id.empty() || !readout.missing.count(id)) continue;
      actual[pod["metadata"].value("name", "")] = id;
      readout.missing.erase(id);
      readout.pods[id] = std::move(pod);
    }
  }

  if (readout.pods.empty()) return readout;  // no pod, no events worth a call
  ++readout.kubectl_calls;
  Call events = Kubectl(options, {"get", "events", "-n", options.namespace_, "--field-selector",
                                  "involvedObject.kind=Pod", "-o", "json"});
  if (events.ok) {
    auto doc = ParseJson(events.out);
    if (doc.is_discarded() || !doc.is_object()) {
      readout.errors.push_back("kubectl get events printed no JSON object");
    } else {
      readout.events_read = true;
      for (auto& [pod, list] : EventsByPod(doc)) {
        auto asked = actual.find(pod);
        std::string key = asked == actual.end() ? pod : asked->second;
        if (readout.pods.count(key)) readout.events[key] = std::move(list);
      }
    }
  } else {
    readout.errors.push_back(events.error);
  }
  return readout;
}

}  // namespace kfpbench::kube
