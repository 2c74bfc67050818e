#include "results/pod_lifecycle.h"

#include <optional>

#include "results/results_fields.h"
#include "results/results_json.h"
#include "util/json_reader.h"

namespace kfpbench::results {
namespace {

using nlohmann::json;

std::optional<int64_t> Since(WallTime from, const std::optional<WallTime>& to) {
  if (!to) return std::nullopt;
  return ToMillis(*to - from);
}

// Every latency of a pod but the image pulls (which are per container).
std::map<std::string, int64_t> Latencies(const kube::PodTimeline& p) {
  std::map<std::string, int64_t> out;
  auto put = [&](const char* name, std::optional<int64_t> v) {
    if (v) out[name] = *v;
  };
  put("scheduled", Since(p.created, p.scheduled));
  put("initialized", Since(p.created, p.initialized));
  put("containers_started", Since(p.created, p.ContainersStarted()));
  put("containers_ready", Since(p.created, p.containers_ready));
  put("ready", Since(p.created, p.ready));
  if (const auto* main = p.Main(); main && main->started && main->finished) {
    put("running", ToMillis(*main->finished - *main->started));
  }
  return out;
}

// The summary every histogram in results.json has, plus the histogram itself
// (the pod sections are merged from it).
json Summary(const metrics::Histogram& h) {
  json s = SummaryJson(h);
  s["histogram"] = h.ToJson();
  return s;
}

json PodJson(const PodRecord& r) {
  const auto& p = r.pod;
  json containers = json::array();
  for (const auto& c : p.containers) containers.push_back(kContainerFields.Json(c));
  json out = kPodRecordFields.Json(r);
  kPodFields.Write(out, p);
  out["created_at"] = FormatRfc3339(p.created);
  out["latency_ms"] = Latencies(p);
  out["containers"] = std::move(containers);
  return out;
}

void ReadPod(JsonReader& r, PodRecord& rec) {
  auto& p = rec.pod;
  kPodRecordFields.Read(r, rec);
  r.Require("created_at");
  r.Time("created_at", p.created);
  kPodFields.Read(r, p);
  r.Array("containers", [&](JsonReader& c) {
    kube::ContainerTimeline t;
    kContainerFields.Read(c, t);
    p.containers.push_back(std::move(t));
  });
}

}  // namespace

std::string PodStep(const std::string& task_name, const std::string& pod_name) {
  // KFP v2 on Argo names them <workflow>-system-container-driver-<id> and
  // <workflow>-system-dag-driver-<id>.
  if (pod_name.find("-driver-") != std::string::npos) return task_name + " (driver)";
  return task_name;
}

void PodLifecycle::Add(PodRecord record) {
  StepPodLatency& step = steps[record.step];
  const auto& p = record.pod;
  ++step.pods;
  for (const auto& [name, ms] : Latencies(p)) step.ms[name].Record(ms);
  for (const auto& c : p.containers) {
    if (c.pull) {
      ++step.image_pulls;
      step.ms["image_pull"].Record(ToMillis(*c.pull));
    }
    if (c.image_present) ++step.images_present;
    if (c.pull_failed) ++step.pull_failures;
  }
  step.failed_scheduling += p.failed_scheduling;
  if (!p.unschedulable.empty()) ++step.unschedulable;
  if (p.ready_inferred) ++step.ready_inferred;
  if (!p.events_read) ++pods_without_events;
  pods.push_back(std::move(record));
}

void PodLifecycle::Merge(const PodLifecycle& other) {
  // Sums, appends and first-set values: nothing here refuses.
  (void)kPodLifecycleFields.Merge(*this, other, {.first = false});
}

json PodLifecycleToJson(const PodLifecycle& s) {
  json steps = json::object();
  for (const auto& [name, step] : s.steps) {
    json ms = json::object();
    for (const char* metric : kPodLatencies) {
      auto it = step.ms.find(metric);
      ms[metric] = Summary(it == step.ms.end() ? metrics::Histogram() : it->second);
    }
    steps[name] = kStepFields.Json(step);
    steps[name]["latency_ms"] = std::move(ms);
  }
  json pods = json::array();
  for (const auto& p : s.pods) pods.push_back(PodJson(p));
  json missing = json::array();
  int not_found = 0, unread = 0;
  for (const auto& m : s.missing) {
    missing.push_back(kMissingFields.Json(m));
    (m.why == "not found" ? not_found : unread)++;
  }
  json out = kPodLifecycleFields.Json(s);
  out["pods_read"] = s.pods.size();
  out["pods_missing"] = not_found;
  out["pods_unread"] = unread;
  out["pods_without_events"] = s.pods_without_events;
  out["steps"] = std::move(steps);
  out["pods"] = std::move(pods);
  out["missing_pods"] = std::move(missing);
  return out;
}

Result<PodLifecycle> PodLifecycleFromJson(const json& j) {
  auto r = JsonReader::Plain(j, "pod_lifecycle");
  PodLifecycle s;
  s.collected = true;
  kPodLifecycleFields.Read(r, s);
  // The step histograms are read as written (exact); pods are read for the
  // report and do not add to them again.
  r.Entries("steps", [&](const std::string& name, JsonReader& sr) {
    StepPodLatency step;
    kStepFields.Read(sr, step);
    sr.Entries("latency_ms", [&](const std::string& metric, JsonReader& summary) {
      summary.Require("histogram");
      summary.Custom("histogram", [&](const json& v) {
        auto h = metrics::Histogram::FromJson(v);
        if (!h.ok()) return h.error().message;
        if (h->count()) step.ms[metric] = std::move(*h);
        return std::string();
      });
    });
    s.steps[name] = std::move(step);
  });
  r.Array("pods", [&](JsonReader& pr) {
    PodRecord p;
    ReadPod(pr, p);
    if (!p.pod.events_read) ++s.pods_without_events;
    s.pods.push_back(std::move(p));
  });
  r.Array("missing_pods", [&](JsonReader& mr) {
    MissingPod mp;
    kMissingFields.Read(mr, mp);
    s.missing.push_back(std::move(mp));
  });
  if (Status status = r.Finish(); !status.ok()) return status.error();
  return s;
}

}  // namespace kfpbench::results
