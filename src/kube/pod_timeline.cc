#include "kube/pod_timeline.h"

#include <algorithm>

namespace kfpbench::kube {
namespace {

using nlohmann::json;

const json& Field(const json& j, const char* key) {
  static const json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

std::string Text(const json& j, const char* key) {
  const json& v = Field(j, key);
  return v.is_string() ? v.get<std::string>() : std::string();
}

// Absent or null is nullopt; a present timestamp that does not parse is an error.
Result<std::optional<WallTime>> Time(const json& j, const char* key, const std::string& where) {
  const json& v = Field(j, key);
  if (v.is_null()) return std::optional<WallTime>();
  if (!v.is_string()) return Error{where + "." + key + ": expected an RFC 3339 timestamp"};
  auto t = ParseRfc3339(v.get<std::string>());
  if (!t.ok()) return Error{where + "." + key + ": " + t.error().message};
  return std::optional<WallTime>(*t);
}

// An event's moment: eventTime (microseconds, newer reporters) when set, else
// the second-resolution timestamps the kubelet's recorder fills.
std::optional<WallTime> EventTime(const json& event, bool last) {
  for (const char* key : {"eventTime", last ? "lastTimestamp" : "firstTimestamp",
                          last ? "firstTimestamp" : "lastTimestamp"}) {
    auto t = Time(event, key, "event");
    if (t.ok() && *t) return *t;
  }
  return std::nullopt;
}

// "spec.containers{main}" -> {"main", false}; "spec.initContainers{init}" -> {"init", true}.
std::optional<std::pair<std::string, bool>> ContainerOf(const json& event) {
  std::string path = Text(Field(event, "involvedObject"), "fieldPath");
  auto open = path.find('{');
  auto close = path.rfind('}');
  if (open == std::string::npos || close == std::string::npos || close < open) return std::nullopt;
  return std::pair{path.substr(open + 1, close - open - 1),
                   path.starts_with("spec.initContainers")};
}

bool Contains(const std::string& text, const char* what) {
  return text.find(what) != std::string::npos;
}

}  // namespace

std::optional<WallTime> PodTimeline::ContainersStarted() const {
  std::optional<WallTime> last;
  bool any = false;
  for (const auto& c : containers) {
    if (c.init) continue;
    any = true;
    if (!c.started) return std::nullopt;
    last = last ? std::max(*last, *c.started) : *c.started;
  }
  return any ? last : std::nullopt;
}

const ContainerTimeline* PodTimeline::Main() const {
  const ContainerTimeline* first = nullptr;
  for (const auto& c : containers) {
    if (c.init) continue;
    if (c.name == "main") return &c;
    if (!first) first = &c;
  }
  return first;
}

std::optional<Duration> PullDurationFromMessage(const std::string& message) {
  auto at = message.find("Successfully pulled image");
  if (at == std::string::npos) return std::nullopt;
  // The image name is quoted and may itself contain " in "; look after it.
  auto quote = message.find('"', at);
  if (quote != std::string::npos) quote = message.find('"', quote + 1);
  auto in = message.find(" in ", quote == std::string::npos ? at : quote);
  if (in == std::string::npos) return std::nullopt;
  size_t start = in + 4;
  size_t end = message.find_first_of(" (", start);
  std::string text = message.substr(start, end == std::string::npos ? end : end - start);
  // Go writes microseconds as "µs"; ParseDuration reads "us".
  std::string ascii;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 2, "\xc2\xb5") == 0) {
      ascii.push_back('u');
      ++i;
    } else {
      ascii.push_back(text[i]);
    }
  }
  text = std::move(ascii);
  if (!text.empty() && text.back() == '.') text.pop_back();
  auto d = ParseDuration(text);
  if (!d.ok()) return std::nullopt;
  return *d;
}

namespace {

ContainerTimeline* FindContainer(PodTimeline& p, const std::string& name, bool init) {
  for (auto& c : p.containers) {
    if (c.name == name && c.init == init) return &c;
  }
  return nullptr;
}

// The times of the pod's conditions that hold (status "True").
Status ReadConditions(const json& status, const std::string& where, PodTimeline& p) {
  const json& conditions = Field(status, "conditions");
  if (!conditions.is_array()) return Ok();
  for (const auto& c : conditions) {
    if (Text(c, "type") == "PodScheduled" && Text(c, "status") == "False" &&
        Text(c, "reason") == "Unschedulable") {
      p.unschedulable = Text(c, "message").empty() ? "Unschedulable" : Text(c, "message");
    }
    if (Text(c, "status") != "True") continue;
    auto t = Time(c, "lastTransitionTime", where + " condition " + Text(c, "type"));
    if (!t.ok()) return t.error();
    std::string type = Text(c, "type");
    if (type == "PodScheduled") p.scheduled = *t;
    if (type == "Initialized") p.initialized = *t;
    if (type == "ContainersReady") p.containers_ready = *t;
    if (type == "Ready") p.ready = *t;
  }
  return Ok();
}

// The spec's containers, init containers first; true when any has a readiness probe.
bool ReadContainers(const json& spec, PodTimeline& p) {
  bool probes = false;
  for (auto [list, init] : {std::pair{"initContainers", true}, std::pair{"containers", false}}) {
    const json& cs = Field(spec, list);
    if (!cs.is_array()) continue;
    for (const auto& c : cs) {
      ContainerTimeline t;
      t.name = Text(c, "name");
      t.init = init;
      t.image = Text(c, "image");
      t.has_readiness_probe = !init && Field(c, "readinessProbe").is_object();
      probes = probes || t.has_readiness_probe;
      p.containers.push_back(std::move(t));
    }
  }
  return probes;
}

// Restarts, start and finish times and exit codes from the container statuses.
Status ReadContainerStatuses(const json& status, const std::string& where, PodTimeline& p) {
  for (auto [list, init] :
       {std::pair{"initContainerStatuses", true}, std::pair{"containerStatuses", false}}) {
    const json& ss = Field(status, list);
    if (!ss.is_array()) continue;
    for (const auto& s : ss) {
      ContainerTimeline* c = FindContainer(p, Text(s, "name"), init);
      if (!c) continue;
      if (const json& n = Field(s, "restartCount"); n.is_number_integer())
        c->restarts = n.get<int>();
      const json& state = Field(s, "state");
      std::string at = where + " " + list + " " + c->name;
      if (const json& running = Field(state, "running"); running.is_object()) {
        auto t = Time(running, "startedAt", at + " state.running");
        if (!t.ok()) return t.error();
        c->started = *t;
      }
      if (const json& done = Field(state, "terminated"); done.is_object()) {
        auto started = Time(done, "startedAt", at + " state.terminated");
        if (!started.ok()) return started.error();
        auto finished = Time(done, "finishedAt", at + " state.terminated");
        if (!finished.ok()) return finished.error();
        c->started = *started;
        c->finished = *finished;
        if (const json& code = Field(done, "exitCode"); code.is_number_integer()) {
          c->exit_code = code.get<int>();
        }
      }
    }
  }
  return Ok();
}

// Scheduling failures and image pulls from the pod's events.
void ReadEvents(const std::vector<json>& events, PodTimeline& p) {
  std::map<std::string, WallTime> pulling;  // container key -> first Pulling
  std::vector<std::pair<std::string, WallTime>> pulled;
  for (const auto& e : events) {
    std::string uid = Text(Field(e, "involvedObject"), "uid");
    // A pod of the same name from before (a retried step) is another pod.
    if (!p.uid.empty() && !uid.empty() && uid != p.uid) continue;
    p.events_read = true;
    std::string reason = Text(e, "reason");
    std::string message = Text(e, "message");
    if (reason == "FailedScheduling") {
      // The scheduler reports through events.k8s.io: repeats are counted in
      // series.count, not in the core/v1 count.
      const json& series = Field(Field(e, "series"), "count");
      const json& count = series.is_number_integer() ? series : Field(e, "count");
      p.failed_scheduling += count.is_number_integer() ? std::max(1, count.get<int>()) : 1;
      continue;
    }
    auto which = ContainerOf(e);
    if (!which) continue;
    ContainerTimeline* c = FindContainer(p, which->first, which->second);
    if (!c) continue;
    std::string key = c->init ? "i:" : "c:";
    key += c->name;
    if (reason == "Pulling") {
      if (auto t = EventTime(e, false)) {
        auto it = pulling.find(key);
        if (it == pulling.end() || *t < it->second) pulling[key] = *t;
      }
    } else if (reason == "Pulled") {
      if (Contains(message, "already present on machine")) {
        c->image_present = true;
      } else if (auto d = PullDurationFromMessage(message)) {
        c->pull = *d;
      } else if (auto t = EventTime(e, true)) {
        pulled.emplace_back(key, *t);
      }
    } else if ((reason == "Failed" && Contains(message, "pull")) || reason == "ErrImagePull" ||
               (reason == "BackOff" && Contains(message, "pulling image"))) {
      c->pull_failed = true;
    }
  }
  // Pulled without a duration in its message (kubelets before 1.26): the
  // events' own timestamps, to the second.
  for (const auto& [key, at] : pulled) {
    auto it = pulling.find(key);
    if (it == pulling.end()) continue;
    bool init = key.starts_with("i:");
    ContainerTimeline* c = FindContainer(p, key.substr(2), init);
    if (c && !c->pull) c->pull = std::max(Duration::zero(), at - it->second);
  }
}

}  // namespace

Result<PodTimeline> ReadPodTimeline(const json& pod, const std::vector<json>& events) {
  PodTimeline p;
  const json& meta = Field(pod, "metadata");
  p.name = Text(meta, "name");
  if (p.name.empty()) return Error{"pod without metadata.name"};
  std::string where = "pod ";
  where += p.name;
  p.uid = Text(meta, "uid");
  auto created = Time(meta, "creationTimestamp", where + " metadata");
  if (!created.ok()) return created.error();
  if (!*created) return Error{where + ": no metadata.creationTimestamp"};
  p.created = **created;
  const json& spec = Field(pod, "spec");
  const json& status = Field(pod, "status");
  p.node = Text(spec, "nodeName");
  p.phase = Text(status, "phase");
  if (auto st = ReadConditions(status, where, p); !st.ok()) return st.error();
  bool probes = ReadContainers(spec, p);
  if (auto st = ReadContainerStatuses(status, where, p); !st.ok()) return st.error();

  // A finished pod's readiness is gone from its conditions; see the header.
  bool gates = Field(spec, "readinessGates").is_array() && !Field(spec, "readinessGates").empty();
  if ((p.phase == "Succeeded" || p.phase == "Failed") && !probes && !gates) {
    if (auto started = p.ContainersStarted()) {
      if (!p.containers_ready) p.containers_ready = started;
      if (!p.ready) p.ready = started;
      p.ready_inferred = true;
    }
  }
  ReadEvents(events, p);
  return p;
}

std::map<std::string, std::vector<json>> EventsByPod(const json& event_list) {
  std::map<std::string, std::vector<json>> out;
  const json& items = Field(event_list, "items");
  if (!items.is_array()) return out;
  for (const auto& e : items) {
    const json& obj = Field(e, "involvedObject");
    if (Text(obj, "kind") != "Pod") continue;
    std::string name = Text(obj, "name");
    if (!name.empty()) out[name].push_back(e);
  }
  return out;
}

}  // namespace kfpbench::kube
