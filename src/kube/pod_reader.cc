#include "kube/pod_reader.h"

#include <algorithm>

#include "kube/pod_timeline.h"
#include "kube/process.h"
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
    ++readout.kubectl_calls;
    Call call = Kubectl(options, args);
    json doc;
    if (call.ok) {
      // Several names print a List; one name prints the Pod itself; none found
      // (with --ignore-not-found) prints nothing.
      doc = call.out.find_first_not_of(" \t\r\n") == std::string::npos
                ? json{{"items", json::array()}}
                : json::parse(call.out, nullptr, false);
      if (doc.is_discarded() || !doc.is_object()) {
        call.ok = false;
        call.error = "kubectl get pods printed no JSON object";
      }
    }
    if (!call.ok) {
      readout.errors.push_back(call.error);
      readout.unread.insert(part.begin(), part.end());
      continue;
    }
    json items =
        doc.value("kind", "") == "Pod" ? json::array({doc}) : doc.value("items", json::array());
    for (auto& pod : items) {
      if (!pod.is_object() || !pod.contains("metadata")) continue;
      std::string name = pod["metadata"].value("name", "");
      if (seen.count(name)) readout.pods[name] = std::move(pod);
    }
    for (const auto& n : part) {
      if (!readout.pods.count(n)) readout.missing.insert(n);
    }
  }
  if (readout.pods.empty()) return readout;  // no pod, no events worth a call
  ++readout.kubectl_calls;
  Call events = Kubectl(options, {"get", "events", "-n", options.namespace_, "--field-selector",
                                  "involvedObject.kind=Pod", "-o", "json"});
  if (events.ok) {
    auto doc = json::parse(events.out, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) {
      readout.errors.push_back("kubectl get events printed no JSON object");
    } else {
      readout.events_read = true;
      for (auto& [pod, list] : EventsByPod(doc)) {
        if (readout.pods.count(pod)) readout.events[pod] = std::move(list);
      }
    }
  } else {
    readout.errors.push_back(events.error);
  }
  return readout;
}

}  // namespace kfpbench::kube
