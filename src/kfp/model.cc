#include "kfp/model.h"

#include <fmt/format.h>

#include "util/json_reader.h"

namespace kfpbench::kfp {
namespace {

using nlohmann::json;

bool IsSet(WallTime t) { return t.time_since_epoch().count() != 0; }

// Proto-JSON omits default values; these add a field only when it is set.
void Put(json& j, const char* key, const std::string& v) {
  if (!v.empty()) j[key] = v;
}
void Put(json& j, const char* key, WallTime t) {
  if (IsSet(t)) j[key] = FormatRfc3339(t);
}
// A timestamp KFP's converters always set (api_converter.go: timestamppb.New
// of a stored second count), so its server writes an unset one as the epoch.
// `response`: written as KFP's server writes it; a request leaves it out.
void PutTime(json& j, const char* key, WallTime t, bool response) {
  if (response || IsSet(t)) j[key] = FormatRfc3339(t);
}
void Put(json& j, const char* key, RuntimeState s) {
  if (s != RuntimeState::kUnspecified) j[key] = std::string(RuntimeStateName(s));
}
void PutJson(json& j, const char* key, const json& v) {
  if (!v.is_null()) j[key] = v;
}
void Put(json& j, const char* key, const std::optional<RpcStatus>& e) {
  if (e) j[key] = ToJson(*e);
}
// A proto3 map: omitted when empty.
void PutTags(json& j, const std::optional<Tags>& tags) {
  if (tags && !tags->empty()) j["tags"] = *tags;
}

json HistoryToJson(const std::vector<RuntimeStatus>& history) {
  json out = json::array();
  for (const auto& h : history) {
    json e;
    Put(e, "update_time", h.update_time);
    Put(e, "state", h.state);
    Put(e, "error", h.error);
    out.push_back(std::move(e));
  }
  return out;
}

// The enums of KFP's v2beta1 protos, by number (nullptr: a number not used).
constexpr std::initializer_list<const char*> kRuntimeStates = {"RUNTIME_STATE_UNSPECIFIED",
                                                               "PENDING",
                                                               "RUNNING",
                                                               "SUCCEEDED",
                                                               "SKIPPED",
                                                               "FAILED",
                                                               "CANCELING",
                                                               "CANCELED",
                                                               "PAUSED"};
constexpr std::initializer_list<const char*> kStorageStates = {"STORAGE_STATE_UNSPECIFIED",
                                                               "AVAILABLE", "ARCHIVED"};
constexpr std::initializer_list<const char*> kModes = {"MODE_UNSPECIFIED", "ENABLE", "DISABLE"};
// RecurringRun.Status: DISABLED is 3, not 2.
constexpr std::initializer_list<const char*> kRecurringStatuses = {"STATUS_UNSPECIFIED", "ENABLED",
                                                                   nullptr, "DISABLED"};

// An enum's zero value reads as absent, as protojson leaves the field unset.
void ReadEnum(JsonReader& r, const char* name, std::string& out,
              std::initializer_list<const char*> names) {
  std::string text;
  r.Enum(name, text, names);
  if (!text.empty() && text != *names.begin()) out = text;
}

void ReadState(JsonReader& r, const char* name, RuntimeState& out, std::string& error) {
  std::string text;
  ReadEnum(r, name, text, kRuntimeStates);
  if (text.empty()) return;
  auto s = ParseRuntimeState(text);
  if (!s) {
    error = std::string(name) + ": unknown state '" + text + "'";
    return;
  }
  out = *s;
}

void ReadError(JsonReader& r, const char* name, std::optional<RpcStatus>& out) {
  json e;
  r.Object(name, e);
  if (e.is_null()) return;
  auto s = RpcStatusFromJson(e);
  if (s.ok()) out = *s;
}

void ReadHistory(JsonReader& r, std::vector<RuntimeStatus>& out, std::string& error) {
  r.Array("state_history", [&](JsonReader& h) {
    RuntimeStatus s;
    h.Time("update_time", s.update_time);
    ReadState(h, "state", s.state, error);
    ReadError(h, "error", s.error);
    out.push_back(std::move(s));
  });
}

void PutPipelineSource(json& j, const PipelineSource& r) {
  Put(j, "pipeline_version_id", r.pipeline_version_id);
  PutJson(j, "pipeline_spec", r.pipeline_spec);
  if (!r.pipeline_id.empty() || !r.pipeline_version_reference_id.empty()) {
    json ref = json::object();
    Put(ref, "pipeline_id", r.pipeline_id);
    Put(ref, "pipeline_version_id", r.pipeline_version_reference_id);
    j["pipeline_version_reference"] = std::move(ref);
  }
  json rc = json::object();
  PutJson(rc, "parameters", r.runtime_config.parameters);
  Put(rc, "pipeline_root", r.runtime_config.pipeline_root);
  if (!rc.empty()) j["runtime_config"] = std::move(rc);
}

void ReadPipelineSource(JsonReader& r, PipelineSource& out) {
  r.String("pipeline_version_id", out.pipeline_version_id);
  r.Object("pipeline_spec", out.pipeline_spec);
  r.Message("pipeline_version_reference", [&](JsonReader& ref) {
    ref.String("pipeline_id", out.pipeline_id);
    ref.String("pipeline_version_id", out.pipeline_version_reference_id);
  });
  r.Message("runtime_config", [&](JsonReader& rc) {
    rc.Object("parameters", out.runtime_config.parameters);
    rc.String("pipeline_root", out.runtime_config.pipeline_root);
  });
}

template <typename T>
Result<T> Finish(JsonReader& r, T value, const std::string& extra_error = "") {
  Status s = r.Finish();
  if (!s.ok()) return s.error();
  if (!extra_error.empty()) return Error{extra_error, kHttpBadRequest};
  return value;
}

}  // namespace

json ToJson(const RpcStatus& s) {
  return {{"code", s.code}, {"message", s.message}, {"details", s.details}};
}

namespace {

json PipelineJson(const Pipeline& p, bool response) {
  json j = json::object();
  Put(j, "pipeline_id", p.pipeline_id);
  Put(j, "name", p.name);
  Put(j, "display_name", p.display_name);
  Put(j, "description", p.description);
  PutTime(j, "created_at", p.created_at, response);
  Put(j, "namespace", p.namespace_);
  PutTags(j, p.tags);
  return j;
}

json VersionJson(const PipelineVersion& v, bool response) {
  json j = json::object();
  Put(j, "pipeline_id", v.pipeline_id);
  Put(j, "pipeline_version_id", v.pipeline_version_id);
  Put(j, "name", v.name);
  Put(j, "display_name", v.display_name);
  Put(j, "description", v.description);
  PutTime(j, "created_at", v.created_at, response);
  if (!v.package_url.empty()) j["package_url"] = {{"pipeline_url", v.package_url}};
  Put(j, "code_source_url", v.code_source_url);
  PutJson(j, "pipeline_spec", v.pipeline_spec);
  PutTags(j, v.tags);
  return j;
}

json ExperimentJson(const Experiment& e, bool response) {
  json j = json::object();
  Put(j, "experiment_id", e.experiment_id);
  Put(j, "display_name", e.display_name);
  Put(j, "description", e.description);
  PutTime(j, "created_at", e.created_at, response);
  Put(j, "namespace", e.namespace_);
  Put(j, "storage_state", e.storage_state);
  PutTime(j, "last_run_created_at", e.last_run_created_at, response);
  return j;
}

json TaskJson(const PipelineTaskDetail& t, bool response) {
  json j = json::object();
  Put(j, "run_id", t.run_id);
  Put(j, "task_id", t.task_id);
  Put(j, "display_name", t.display_name);
  PutTime(j, "create_time", t.create_time, response);
  PutTime(j, "start_time", t.start_time, response);
  PutTime(j, "end_time", t.end_time, response);
  Put(j, "state", t.state);
  if (t.execution_id != 0) j["execution_id"] = std::to_string(t.execution_id);
  Put(j, "error", t.error);
  PutJson(j, "inputs", t.inputs);
  PutJson(j, "outputs", t.outputs);
  Put(j, "parent_task_id", t.parent_task_id);
  if (!t.state_history.empty()) j["state_history"] = HistoryToJson(t.state_history);
  Put(j, "pod_name", t.pod_name);
  Put(j, "cache_fingerprint", t.cache_fingerprint);
  if (!t.child_tasks.empty()) {
    json children = json::array();
    for (const auto& c : t.child_tasks) {
      json cj = json::object();
      Put(cj, "task_id", c.task_id);
      Put(cj, "pod_name", c.pod_name);
      children.push_back(std::move(cj));
    }
    j["child_tasks"] = std::move(children);
  }
  return j;
}

json RunJson(const Run& r, bool response) {
  json j = json::object();
  Put(j, "experiment_id", r.experiment_id);
  Put(j, "run_id", r.run_id);
  Put(j, "display_name", r.display_name);
  Put(j, "storage_state", r.storage_state);
  Put(j, "description", r.description);
  PutPipelineSource(j, r);
  Put(j, "service_account", r.service_account);
  PutTime(j, "created_at", r.created_at, response);
  PutTime(j, "scheduled_at", r.scheduled_at, response);
  PutTime(j, "finished_at", r.finished_at, response);
  Put(j, "state", r.state);
  Put(j, "error", r.error);
  if (!r.task_details.empty()) {
    json tasks = json::array();
    for (const auto& t : r.task_details) tasks.push_back(TaskJson(t, response));
    j["run_details"] = {{"task_details", std::move(tasks)}};
  }
  Put(j, "recurring_run_id", r.recurring_run_id);
  if (!r.state_history.empty()) j["state_history"] = HistoryToJson(r.state_history);
  return j;
}

json RecurringRunJson(const RecurringRun& r, bool response) {
  json j = json::object();
  Put(j, "recurring_run_id", r.recurring_run_id);
  Put(j, "display_name", r.display_name);
  Put(j, "description", r.description);
  PutPipelineSource(j, r);
  Put(j, "service_account", r.service_account);
  if (r.max_concurrency != 0) j["max_concurrency"] = std::to_string(r.max_concurrency);
  json trigger = json::object();
  if (r.cron_schedule) {
    json c = json::object();
    Put(c, "start_time", r.cron_schedule->start_time);
    Put(c, "end_time", r.cron_schedule->end_time);
    Put(c, "cron", r.cron_schedule->cron);
    trigger["cron_schedule"] = std::move(c);
  }
  if (r.periodic_schedule) {
    json p = json::object();
    Put(p, "start_time", r.periodic_schedule->start_time);
    Put(p, "end_time", r.periodic_schedule->end_time);
    if (r.periodic_schedule->interval_second != 0) {
      p["interval_second"] = std::to_string(r.periodic_schedule->interval_second);
    }
    trigger["periodic_schedule"] = std::move(p);
  }
  if (!trigger.empty()) j["trigger"] = std::move(trigger);
  Put(j, "mode", r.mode);
  PutTime(j, "created_at", r.created_at, response);
  PutTime(j, "updated_at", r.updated_at, response);
  Put(j, "status", r.status);
  Put(j, "error", r.error);
  if (r.no_catchup) j["no_catchup"] = true;
  Put(j, "namespace", r.namespace_);
  Put(j, "experiment_id", r.experiment_id);
  return j;
}

}  // namespace

json ToJson(const Pipeline& p) { return PipelineJson(p, false); }
json ToJson(const PipelineVersion& v) { return VersionJson(v, false); }
json ToJson(const Experiment& e) { return ExperimentJson(e, false); }
json ToJson(const PipelineTaskDetail& t) { return TaskJson(t, false); }
json ToJson(const Run& r) { return RunJson(r, false); }
json ToJson(const RecurringRun& r) { return RecurringRunJson(r, false); }
json ToResponseJson(const Pipeline& p) { return PipelineJson(p, true); }
json ToResponseJson(const PipelineVersion& v) { return VersionJson(v, true); }
json ToResponseJson(const Experiment& e) { return ExperimentJson(e, true); }
json ToResponseJson(const Run& r) { return RunJson(r, true); }
json ToResponseJson(const RecurringRun& r) { return RecurringRunJson(r, true); }

json ToJson(const Healthz& h) {
  json j = json::object();
  if (h.multi_user) j["multi_user"] = true;
  Put(j, "pipeline_store", h.pipeline_store);
  return j;
}

Result<RpcStatus> RpcStatusFromJson(const json& j) {
  JsonReader r(j, "error", false);
  RpcStatus s;
  int64_t code = 0;
  r.Int64("code", code);
  s.code = static_cast<int>(code);
  r.String("message", s.message);
  r.Any("details", s.details);
  if (s.details.is_null()) s.details = json::array();
  return Finish(r, std::move(s));
}

Result<Pipeline> PipelineFromJson(const json& j, bool strict) {
  JsonReader r(j, "", strict);
  Pipeline p;
  r.String("pipeline_id", p.pipeline_id);
  r.String("name", p.name);
  r.String("display_name", p.display_name);
  r.String("description", p.description);
  r.Time("created_at", p.created_at);
  r.String("namespace", p.namespace_);
  r.StringMap("tags", p.tags);
  json ignored;
  r.Any("error", ignored);
  return Finish(r, std::move(p));
}

Result<PipelineVersion> PipelineVersionFromJson(const json& j, bool strict) {
  JsonReader r(j, "", strict);
  PipelineVersion v;
  r.String("pipeline_id", v.pipeline_id);
  r.String("pipeline_version_id", v.pipeline_version_id);
  r.String("name", v.name);
  r.String("display_name", v.display_name);
  r.String("description", v.description);
  r.Time("created_at", v.created_at);
  r.Message("package_url", [&](JsonReader& u) { u.String("pipeline_url", v.package_url); });
  r.String("code_source_url", v.code_source_url);
  r.Object("pipeline_spec", v.pipeline_spec);
  r.StringMap("tags", v.tags);
  json ignored;
  r.Any("error", ignored);
  return Finish(r, std::move(v));
}

Result<Experiment> ExperimentFromJson(const json& j, bool strict) {
  JsonReader r(j, "", strict);
  Experiment e;
  r.String("experiment_id", e.experiment_id);
  r.String("display_name", e.display_name);
  r.String("description", e.description);
  r.Time("created_at", e.created_at);
  r.String("namespace", e.namespace_);
  ReadEnum(r, "storage_state", e.storage_state, kStorageStates);
  r.Time("last_run_created_at", e.last_run_created_at);
  return Finish(r, std::move(e));
}

Result<Run> RunFromJson(const json& j, bool strict) {
  JsonReader r(j, "", strict);
  Run run;
  std::string error;
  r.String("experiment_id", run.experiment_id);
  r.String("run_id", run.run_id);
  r.String("display_name", run.display_name);
  ReadEnum(r, "storage_state", run.storage_state, kStorageStates);
  r.String("description", run.description);
  ReadPipelineSource(r, run);
  r.String("service_account", run.service_account);
  r.Time("created_at", run.created_at);
  r.Time("scheduled_at", run.scheduled_at);
  r.Time("finished_at", run.finished_at);
  ReadState(r, "state", run.state, error);
  ReadError(r, "error", run.error);
  r.Message("run_details", [&](JsonReader& d) {
    int64_t ignored_id = 0;
    d.Int64("pipeline_context_id", ignored_id);
    d.Int64("pipeline_run_context_id", ignored_id);
    d.Array("task_details", [&](JsonReader& t) {
      PipelineTaskDetail task;
      t.String("run_id", task.run_id);
      t.String("task_id", task.task_id);
      t.String("display_name", task.display_name);
      t.Time("create_time", task.create_time);
      t.Time("start_time", task.start_time);
      t.Time("end_time", task.end_time);
      ReadState(t, "state", task.state, error);
      t.Int64("execution_id", task.execution_id);
      ReadError(t, "error", task.error);
      t.Any("inputs", task.inputs);
      t.Any("outputs", task.outputs);
      t.String("parent_task_id", task.parent_task_id);
      ReadHistory(t, task.state_history, error);
      t.String("pod_name", task.pod_name);
      t.String("cache_fingerprint", task.cache_fingerprint);
      json ignored;
      t.Any("executor_detail", ignored);
      t.Array("child_tasks", [&](JsonReader& c) {
        ChildTask child;
        c.String("task_id", child.task_id);
        c.String("pod_name", child.pod_name);
        task.child_tasks.push_back(std::move(child));
      });
      run.task_details.push_back(std::move(task));
    });
  });
  r.String("recurring_run_id", run.recurring_run_id);
  ReadHistory(r, run.state_history, error);
  json ignored;
  r.Any("plugins_input", ignored);
  r.Any("plugins_output", ignored);
  return Finish(r, std::move(run), error);
}

Result<RecurringRun> RecurringRunFromJson(const json& j, bool strict) {
  JsonReader r(j, "", strict);
  RecurringRun rr;
  r.String("recurring_run_id", rr.recurring_run_id);
  r.String("display_name", rr.display_name);
  r.String("description", rr.description);
  ReadPipelineSource(r, rr);
  r.String("service_account", rr.service_account);
  r.Int64("max_concurrency", rr.max_concurrency);
  r.Message("trigger", [&](JsonReader& t) {
    t.Message("cron_schedule", [&](JsonReader& c) {
      CronSchedule cs;
      c.Time("start_time", cs.start_time);
      c.Time("end_time", cs.end_time);
      c.String("cron", cs.cron);
      rr.cron_schedule = std::move(cs);
    });
    t.Message("periodic_schedule", [&](JsonReader& p) {
      PeriodicSchedule ps;
      p.Time("start_time", ps.start_time);
      p.Time("end_time", ps.end_time);
      p.Int64("interval_second", ps.interval_second);
      rr.periodic_schedule = std::move(ps);
    });
  });
  ReadEnum(r, "mode", rr.mode, kModes);
  r.Time("created_at", rr.created_at);
  r.Time("updated_at", rr.updated_at);
  ReadEnum(r, "status", rr.status, kRecurringStatuses);
  ReadError(r, "error", rr.error);
  r.Bool("no_catchup", rr.no_catchup);
  r.String("namespace", rr.namespace_);
  r.String("experiment_id", rr.experiment_id);
  json ignored;
  r.Any("plugins_input", ignored);
  return Finish(r, std::move(rr));
}

Result<Healthz> HealthzFromJson(const json& j) {
  JsonReader r(j, "", false);
  Healthz h;
  r.Bool("multi_user", h.multi_user);
  r.String("pipeline_store", h.pipeline_store);
  return Finish(r, std::move(h));
}

RpcStatus UserErrorStatus(GrpcCode code, std::string message, std::string external_message) {
  RpcStatus s;
  s.code = static_cast<int>(code);
  s.message = std::move(message);
  s.details = json::array({{{"@type", "type.googleapis.com/google.rpc.Status"},
                            {"code", s.code},
                            {"message", std::move(external_message)}}});
  return s;
}

std::string ErrorMessage(const RpcStatus& status) {
  if (!status.message.empty()) return status.message;
  if (status.details.is_array()) {
    for (const auto& d : status.details) {
      if (d.is_object() && d.contains("message") && d["message"].is_string()) {
        return d["message"].get<std::string>();
      }
    }
  }
  return "";
}

Status ValidateTags(const Tags& tags) {
  constexpr size_t kMaxTags = 20, kMaxLength = 63;
  auto bad = [](std::string message) { return Error{std::move(message), kHttpBadRequest}; };
  // Go's utf8.RuneCountInString: code points, not bytes.
  auto runes = [](const std::string& s) {
    size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
  };
  if (tags.size() > kMaxTags) {
    return bad(
        fmt::format("number of tags ({}) exceeds maximum of {} per entity", tags.size(), kMaxTags));
  }
  for (const auto& [key, value] : tags) {
    if (key.empty()) return bad("tag key cannot be empty");
    if (key.find('.') != std::string::npos) {
      return bad(fmt::format("tag key \"{}\" must not contain '.' character", key));
    }
    if (runes(key) > kMaxLength) {
      return bad(
          fmt::format("tag key \"{}\" exceeds maximum length of {} characters", key, kMaxLength));
    }
    if (runes(value) > kMaxLength) {
      return bad(
          fmt::format("tag value \"{}\" for key \"{}\" exceeds maximum length of {} "
                      "characters",
                      value, key, kMaxLength));
    }
  }
  return Ok();
}

int HttpStatusFor(GrpcCode code) {
  switch (code) {
    case GrpcCode::kOk:
      return 200;
    case GrpcCode::kCancelled:
      return 499;
    case GrpcCode::kInvalidArgument:
      return 400;
    case GrpcCode::kDeadlineExceeded:
      return 504;
    case GrpcCode::kNotFound:
      return 404;
    case GrpcCode::kAlreadyExists:
      return 409;
    case GrpcCode::kPermissionDenied:
      return 403;
    case GrpcCode::kResourceExhausted:
      return 429;
    case GrpcCode::kFailedPrecondition:
      return 400;
    case GrpcCode::kAborted:
      return 409;
    case GrpcCode::kOutOfRange:
      return 400;
    case GrpcCode::kUnimplemented:
      return 501;
    case GrpcCode::kUnavailable:
      return 503;
    case GrpcCode::kUnauthenticated:
      return 401;
    case GrpcCode::kUnknown:
    case GrpcCode::kInternal:
    case GrpcCode::kDataLoss:
      return 500;
  }
  return 500;
}

GrpcCode GrpcCodeForHttpStatus(int status) {
  switch (status) {
    case 200:
      return GrpcCode::kOk;
    case 400:
      return GrpcCode::kInvalidArgument;
    case 401:
      return GrpcCode::kUnauthenticated;
    case 403:
      return GrpcCode::kPermissionDenied;
    case 404:
      return GrpcCode::kNotFound;
    case 409:
      return GrpcCode::kAlreadyExists;
    case 413:
    case 429:
      return GrpcCode::kResourceExhausted;
    case 499:
      return GrpcCode::kCancelled;
    case 501:
      return GrpcCode::kUnimplemented;
    case 503:
      return GrpcCode::kUnavailable;
    case 504:
      return GrpcCode::kDeadlineExceeded;
    default:
      return status < 400 ? GrpcCode::kOk : GrpcCode::kUnknown;
  }
}

}  // namespace kfpbench::kfp
