#include "results/pod_lifecycle.h"

#include <optional>

#include "results/results_json.h"

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

json Time(const std::optional<WallTime>& t) { return t ? json(FormatRfc3339(*t)) : json(nullptr); }

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
  for (const auto& c : p.containers) {
    containers.push_back({{"name", c.name},
                          {"init", c.init},
                          {"image", c.image},
                          {"pull_ms", c.pull ? json(ToMillis(*c.pull)) : json(nullptr)},
                          {"image_present", c.image_present},
                          {"pull_failed", c.pull_failed},
                          {"started_at", Time(c.started)},
                          {"finished_at", Time(c.finished)},
                          {"exit_code", c.exit_code ? json(*c.exit_code) : json(nullptr)},
                          {"restarts", c.restarts},
                          {"readiness_probe", c.has_readiness_probe}});
  }
  return {{"run_id", r.run_id},
          {"step", r.step},
          {"pod", p.name},
          {"uid", p.uid},
          {"node", p.node},
          {"phase", p.phase},
          {"created_at", FormatRfc3339(p.created)},
          {"scheduled_at", Time(p.scheduled)},
          {"initialized_at", Time(p.initialized)},
          {"containers_ready_at", Time(p.containers_ready)},
          {"ready_at", Time(p.ready)},
          {"ready_inferred", p.ready_inferred},
          {"failed_scheduling", p.failed_scheduling},
          {"events_read", p.events_read},
          {"latency_ms", Latencies(p)},
          {"containers", std::move(containers)}};
}

// A strict reader over our own format: each field has its written type.
class Reader {
 public:
  Reader(const json& j, std::string path) : j_(j), path_(std::move(path)) {}
  const std::string& path() const { return path_; }
  bool Has(const char* key) const { return j_.is_object() && j_.contains(key); }
  const json& Get(const char* key) const { return j_.at(key); }

  template <typename T>
  Status Read(const char* key, T& out) const {
    if (!Has(key)) return Ok();
    const json& v = j_.at(key);
    bool ok = false;
    if constexpr (std::is_same_v<T, bool>) {
      ok = v.is_boolean();
    } else if constexpr (std::is_integral_v<T>) {
      ok = v.is_number_integer();
    } else {
      ok = v.is_string();
    }
    if (!ok) return Error{path_ + "." + key + ": wrong type"};
    out = v.get<T>();
    return Ok();
  }
  Status ReadTime(const char* key, std::optional<WallTime>& out) const {
    if (!Has(key) || j_.at(key).is_null()) return Ok();
    if (!j_.at(key).is_string()) return Error{path_ + "." + key + ": expected a timestamp"};
    auto t = ParseRfc3339(j_.at(key).get<std::string>());
    if (!t.ok()) return Error{path_ + "." + key + ": " + t.error().message};
    out = *t;
    return Ok();
  }

 private:
  const json& j_;
  std::string path_;
};

#define KFPBENCH_TRY(expr)            \
  if (Status s_ = (expr); !s_.ok()) { \
    return s_.error();                \
  }

Result<PodRecord> PodFromJson(const json& j, const std::string& path) {
  if (!j.is_object()) return Error{path + ": expected an object"};
  Reader r(j, path);
  PodRecord rec;
  auto& p = rec.pod;
  KFPBENCH_TRY(r.Read("run_id", rec.run_id));
  KFPBENCH_TRY(r.Read("step", rec.step));
  KFPBENCH_TRY(r.Read("pod", p.name));
  KFPBENCH_TRY(r.Read("uid", p.uid));
  KFPBENCH_TRY(r.Read("node", p.node));
  KFPBENCH_TRY(r.Read("phase", p.phase));
  std::optional<WallTime> created;
  KFPBENCH_TRY(r.ReadTime("created_at", created));
  if (!created) return Error{path + ".created_at: missing"};
  p.created = *created;
  KFPBENCH_TRY(r.ReadTime("scheduled_at", p.scheduled));
  KFPBENCH_TRY(r.ReadTime("initialized_at", p.initialized));
  KFPBENCH_TRY(r.ReadTime("containers_ready_at", p.containers_ready));
  KFPBENCH_TRY(r.ReadTime("ready_at", p.ready));
  KFPBENCH_TRY(r.Read("ready_inferred", p.ready_inferred));
  KFPBENCH_TRY(r.Read("failed_scheduling", p.failed_scheduling));
  KFPBENCH_TRY(r.Read("events_read", p.events_read));
  if (r.Has("containers")) {
    const json& cs = r.Get("containers");
    if (!cs.is_array()) return Error{path + ".containers: expected an array"};
    for (size_t i = 0; i < cs.size(); ++i) {
      Reader c(cs[i], path + ".containers[" + std::to_string(i) + "]");
      if (!cs[i].is_object()) return Error{c.path() + ": expected an object"};
      kube::ContainerTimeline t;
      KFPBENCH_TRY(c.Read("name", t.name));
      KFPBENCH_TRY(c.Read("init", t.init));
      KFPBENCH_TRY(c.Read("image", t.image));
      if (c.Has("pull_ms") && !c.Get("pull_ms").is_null()) {
        int64_t ms = 0;
        KFPBENCH_TRY(c.Read("pull_ms", ms));
        t.pull = std::chrono::milliseconds(ms);
      }
      KFPBENCH_TRY(c.Read("image_present", t.image_present));
      KFPBENCH_TRY(c.Read("pull_failed", t.pull_failed));
      KFPBENCH_TRY(c.ReadTime("started_at", t.started));
      KFPBENCH_TRY(c.ReadTime("finished_at", t.finished));
      if (c.Has("exit_code") && !c.Get("exit_code").is_null()) {
        int code = 0;
        KFPBENCH_TRY(c.Read("exit_code", code));
        t.exit_code = code;
      }
      KFPBENCH_TRY(c.Read("restarts", t.restarts));
      KFPBENCH_TRY(c.Read("readiness_probe", t.has_readiness_probe));
      p.containers.push_back(std::move(t));
    }
  }
  return rec;
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
  if (p.ready_inferred) ++step.ready_inferred;
  if (!p.events_read) ++pods_without_events;
  pods.push_back(std::move(record));
}

void PodLifecycle::Merge(const PodLifecycle& other) {
  if (!other.collected) return;
  if (!collected) {
    collected = true;
    context = other.context;
    namespace_ = other.namespace_;
  }
  pods_requested += other.pods_requested;
  pods_without_events += other.pods_without_events;
  kubectl_calls += other.kubectl_calls;
  errors.insert(errors.end(), other.errors.begin(), other.errors.end());
  for (const auto& [name, s] : other.steps) {
    StepPodLatency& mine = steps[name];
    mine.pods += s.pods;
    mine.image_pulls += s.image_pulls;
    mine.images_present += s.images_present;
    mine.pull_failures += s.pull_failures;
    mine.failed_scheduling += s.failed_scheduling;
    mine.ready_inferred += s.ready_inferred;
    for (const auto& [metric, h] : s.ms) mine.ms[metric].Merge(h);
  }
  pods.insert(pods.end(), other.pods.begin(), other.pods.end());
  missing.insert(missing.end(), other.missing.begin(), other.missing.end());
}

json PodLifecycleToJson(const PodLifecycle& s) {
  json steps = json::object();
  for (const auto& [name, step] : s.steps) {
    json ms = json::object();
    for (const char* metric : kPodLatencies) {
      auto it = step.ms.find(metric);
      ms[metric] = Summary(it == step.ms.end() ? metrics::Histogram() : it->second);
    }
    steps[name] = {{"pods", step.pods},
                   {"image_pulls", step.image_pulls},
                   {"images_present", step.images_present},
                   {"pull_failures", step.pull_failures},
                   {"failed_scheduling", step.failed_scheduling},
                   {"ready_inferred", step.ready_inferred},
                   {"latency_ms", std::move(ms)}};
  }
  json pods = json::array();
  for (const auto& p : s.pods) pods.push_back(PodJson(p));
  json missing = json::array();
  int not_found = 0, unread = 0;
  for (const auto& m : s.missing) {
    missing.push_back({{"run_id", m.run_id}, {"step", m.step}, {"pod", m.pod}, {"why", m.why}});
    (m.why == "not found" ? not_found : unread)++;
  }
  return {{"context", s.context},
          {"namespace", s.namespace_},
          {"pods_requested", s.pods_requested},
          {"pods_read", s.pods.size()},
          {"pods_missing", not_found},
          {"pods_unread", unread},
          {"pods_without_events", s.pods_without_events},
          {"kubectl_calls", s.kubectl_calls},
          {"errors", s.errors},
          {"steps", std::move(steps)},
          {"pods", std::move(pods)},
          {"missing_pods", std::move(missing)}};
}

Result<PodLifecycle> PodLifecycleFromJson(const json& j) {
  const std::string path = "pod_lifecycle";
  if (!j.is_object()) return Error{path + ": expected an object"};
  Reader r(j, path);
  PodLifecycle s;
  s.collected = true;
  KFPBENCH_TRY(r.Read("context", s.context));
  KFPBENCH_TRY(r.Read("namespace", s.namespace_));
  KFPBENCH_TRY(r.Read("pods_requested", s.pods_requested));
  KFPBENCH_TRY(r.Read("kubectl_calls", s.kubectl_calls));
  if (r.Has("errors")) {
    const json& e = r.Get("errors");
    if (!e.is_array()) return Error{path + ".errors: expected an array"};
    for (const auto& line : e) {
      if (!line.is_string()) return Error{path + ".errors: expected strings"};
      s.errors.push_back(line.get<std::string>());
    }
  }
  // The step histograms are read as written (exact); pods are read for the
  // report and do not add to them again.
  if (r.Has("steps")) {
    const json& steps = r.Get("steps");
    if (!steps.is_object()) return Error{path + ".steps: expected an object"};
    for (const auto& [name, sj] : steps.items()) {
      std::string at = path + ".steps." + name;
      if (!sj.is_object()) return Error{at + ": expected an object"};
      Reader sr(sj, at);
      StepPodLatency step;
      KFPBENCH_TRY(sr.Read("pods", step.pods));
      KFPBENCH_TRY(sr.Read("image_pulls", step.image_pulls));
      KFPBENCH_TRY(sr.Read("images_present", step.images_present));
      KFPBENCH_TRY(sr.Read("pull_failures", step.pull_failures));
      KFPBENCH_TRY(sr.Read("failed_scheduling", step.failed_scheduling));
      KFPBENCH_TRY(sr.Read("ready_inferred", step.ready_inferred));
      if (sr.Has("latency_ms")) {
        const json& ms = sr.Get("latency_ms");
        if (!ms.is_object()) return Error{at + ".latency_ms: expected an object"};
        for (const auto& [metric, summary] : ms.items()) {
          std::string mat = at + ".latency_ms." + metric;
          if (!summary.is_object() || !summary.contains("histogram")) {
            return Error{mat + ": expected a summary with a histogram"};
          }
          auto h = metrics::Histogram::FromJson(summary["histogram"]);
          if (!h.ok()) return Error{mat + ".histogram: " + h.error().message};
          if (h->count()) step.ms[metric] = std::move(*h);
        }
      }
      s.steps[name] = std::move(step);
    }
  }
  if (r.Has("pods")) {
    const json& pods = r.Get("pods");
    if (!pods.is_array()) return Error{path + ".pods: expected an array"};
    for (size_t i = 0; i < pods.size(); ++i) {
      auto p = PodFromJson(pods[i], path + ".pods[" + std::to_string(i) + "]");
      if (!p.ok()) return p.error();
      if (!p->pod.events_read) ++s.pods_without_events;
      s.pods.push_back(std::move(*p));
    }
  }
  if (r.Has("missing_pods")) {
    const json& m = r.Get("missing_pods");
    if (!m.is_array()) return Error{path + ".missing_pods: expected an array"};
    for (size_t i = 0; i < m.size(); ++i) {
      Reader mr(m[i], path + ".missing_pods[" + std::to_string(i) + "]");
      if (!m[i].is_object()) return Error{mr.path() + ": expected an object"};
      MissingPod mp;
      KFPBENCH_TRY(mr.Read("run_id", mp.run_id));
      KFPBENCH_TRY(mr.Read("step", mp.step));
      KFPBENCH_TRY(mr.Read("pod", mp.pod));
      KFPBENCH_TRY(mr.Read("why", mp.why));
      s.missing.push_back(std::move(mp));
    }
  }
  return s;
}

#undef KFPBENCH_TRY

}  // namespace kfpbench::results
