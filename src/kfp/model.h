// The KFP v2beta1 API resources (backend/api/v2beta1/*.proto) and their JSON
// form: proto field names, empty fields omitted, enums as names, int64 as
// strings, times as RFC 3339. The embedded backend writes these; the client
// reads them from any KFP server.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kfp/rpc_status.h"
#include "kfp/runtime_state.h"
#include "util/result.h"
#include "util/time.h"

namespace kfpbench::kfp {

// A pipeline's or version's user-defined labels. Absent (nullopt) and empty
// differ in a PATCH: absent keeps the tags, empty clears them.
using Tags = std::map<std::string, std::string>;

struct Pipeline {
  std::string pipeline_id;
  std::string name;
  std::string display_name;
  std::string description;
  std::string namespace_;
  WallTime created_at{};
  std::optional<Tags> tags;
};

struct PipelineVersion {
  std::string pipeline_id;
  std::string pipeline_version_id;
  std::string name;
  std::string display_name;
  std::string description;
  WallTime created_at{};
  std::string package_url;  // v2beta1Url.pipeline_url
  std::string code_source_url;
  nlohmann::json pipeline_spec;  // null when absent
  std::optional<Tags> tags;
};

struct Experiment {
  std::string experiment_id;
  std::string display_name;
  std::string description;
  std::string namespace_;
  WallTime created_at{};
  std::string storage_state;  // "AVAILABLE", "ARCHIVED"
  WallTime last_run_created_at{};
};

struct RuntimeStatus {
  WallTime update_time{};
  RuntimeState state = RuntimeState::kUnspecified;
  std::optional<RpcStatus> error;
};

struct ChildTask {
  std::string task_id;
  std::string pod_name;
};

struct PipelineTaskDetail {
  std::string run_id;
  std::string task_id;
  std::string display_name;
  WallTime create_time{}, start_time{}, end_time{};
  RuntimeState state = RuntimeState::kUnspecified;
  int64_t execution_id = 0;
  std::optional<RpcStatus> error;
  nlohmann::json inputs;   // null when absent
  nlohmann::json outputs;  // null when absent
  std::string parent_task_id;
  std::vector<RuntimeStatus> state_history;
  std::string pod_name;
  std::vector<ChildTask> child_tasks;
  std::string cache_fingerprint;  // set when caching was enabled for the task
};

// One page of a list answer: the items, the total under the filter, and the
// token of the next page (empty on the last).
template <typename T>
struct Page {
  std::vector<T> items;
  int total_size = 0;
  std::string next_page_token;
};

struct RuntimeConfig {
  nlohmann::json parameters;  // object or null
  std::string pipeline_root;
};

// What a run and a recurring run share (KFP's proto repeats these fields in
// both): the pipeline, by reference or inline, and its runtime inputs.
struct PipelineSource {
  std::string pipeline_version_id;  // deprecated in KFP, still accepted
  nlohmann::json pipeline_spec;     // inline spec, null when absent
  std::string pipeline_id;          // pipeline_version_reference
  std::string pipeline_version_reference_id;
  RuntimeConfig runtime_config;
  std::string service_account;
};

struct Run : PipelineSource {
  std::string experiment_id;
  std::string run_id;
  std::string display_name;
  std::string storage_state;  // "AVAILABLE", "ARCHIVED"
  std::string description;
  WallTime created_at{}, scheduled_at{}, finished_at{};
  RuntimeState state = RuntimeState::kUnspecified;
  std::optional<RpcStatus> error;
  std::vector<PipelineTaskDetail> task_details;  // run_details.task_details
  std::string recurring_run_id;
  std::vector<RuntimeStatus> state_history;
};

// A schedule that creates runs (v2beta1 RecurringRun). Exactly one of the
// two triggers is set.
struct CronSchedule {
  WallTime start_time{}, end_time{};
  std::string cron;  // 6 fields, seconds first, or a descriptor such as "@every 5m"
};

struct PeriodicSchedule {
  WallTime start_time{}, end_time{};
  int64_t interval_second = 0;
};

struct RecurringRun : PipelineSource {
  std::string recurring_run_id;
  std::string display_name;
  std::string description;
  int64_t max_concurrency = 0;
  std::optional<CronSchedule> cron_schedule;          // trigger.cron_schedule
  std::optional<PeriodicSchedule> periodic_schedule;  // trigger.periodic_schedule
  std::string mode;                                   // input: "ENABLE", "DISABLE" or empty
  std::string status;                                 // output: "ENABLED", "DISABLED"
  WallTime created_at{}, updated_at{};
  std::optional<RpcStatus> error;
  bool no_catchup = false;
  std::string namespace_;
  std::string experiment_id;
};

struct Healthz {
  bool multi_user = false;
  std::string pipeline_store;
};

nlohmann::json ToJson(const Pipeline& p);
nlohmann::json ToJson(const PipelineVersion& v);
nlohmann::json ToJson(const Experiment& e);
nlohmann::json ToJson(const PipelineTaskDetail& t);
nlohmann::json ToJson(const Run& r);
nlohmann::json ToJson(const RecurringRun& r);
nlohmann::json ToJson(const Healthz& h);

// The resources as KFP's server writes them: its converters (api_converter.go)
// set every timestamp of a resource, so an unset one is written as
// "1970-01-01T00:00:00Z" where ToJson, the form of a request, leaves it out.
nlohmann::json ToResponseJson(const Pipeline& p);
nlohmann::json ToResponseJson(const PipelineVersion& v);
nlohmann::json ToResponseJson(const Experiment& e);
nlohmann::json ToResponseJson(const Run& r);
nlohmann::json ToResponseJson(const RecurringRun& r);

// `strict`: reject unknown fields (the server reading a request). The client
// reading a response is lenient, since newer servers add fields.
Result<Pipeline> PipelineFromJson(const nlohmann::json& j, bool strict);
Result<PipelineVersion> PipelineVersionFromJson(const nlohmann::json& j, bool strict);
Result<Experiment> ExperimentFromJson(const nlohmann::json& j, bool strict);
Result<Run> RunFromJson(const nlohmann::json& j, bool strict);
Result<RecurringRun> RecurringRunFromJson(const nlohmann::json& j, bool strict);
Result<Healthz> HealthzFromJson(const nlohmann::json& j);

// KFP's model.ValidateTags: at most 20 tags, keys not empty and without '.',
// keys and values at most 63 characters. A 400 with KFP's message.
Status ValidateTags(const Tags& tags);

}  // namespace kfpbench::kfp
