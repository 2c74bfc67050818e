// A client for the KFP REST API, v2beta1 or (for older servers) v1beta1. The
// benchmark harness talks to the embedded backend and to real deployments only
// through this class, which hides the API version: every method takes and
// returns the v2beta1 model, and every call is reported to a CallObserver under
// its operation name (the same names for both versions, so results compare).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "http/client.h"
#include "kfp/lean_reader.h"
#include "kfp/model.h"
#include "util/result.h"
#include "util/time.h"

namespace kfpbench::kfp {

class CallObserver {
 public:
  virtual ~CallObserver() = default;
  // `http_status` is 0 when no response arrived.
  virtual void OnCall(std::string_view operation, Duration latency, int http_status,
                      WallTime completed_at) = 0;
  // After OnCall, when the call failed: why (redacted), as the caller sees it,
  // and the status OnCall got (2xx when the answer itself was unusable).
  virtual void OnError(std::string_view /*operation*/, const std::string& /*message*/,
                       int /*http_status*/) {}
};

// Every operation name the client reports to its CallObserver: the names
// users write in thresholds and RANDOM_GETS mixes are checked against them.
inline constexpr std::string_view kOperations[] = {"GetHealthz",
                                                   "UploadPipeline",
                                                   "UploadPipelineVersion",
                                                   "ListPipelines",
                                                   "GetPipeline",
                                                   "DeletePipeline",
                                                   "ListPipelineVersions",
                                                   "GetPipelineVersion",
                                                   "CreateExperiment",
                                                   "ListExperiments",
                                                   "DeleteExperiment",
                                                   "CreateRun",
                                                   "GetRun",
                                                   "ListRuns",
                                                   "DeleteRun",
                                                   "CreateRecurringRun",
                                                   "ListRecurringRuns",
                                                   "DeleteRecurringRun"};

struct ListOptions {
  int page_size = 0;  // 0: the server's default
  std::string page_token;
  std::string sort_by;  // "created_at desc"
  std::string filter;   // KFP filter JSON in v2beta1's words; a v1beta1 client says it in v1beta1's
  std::string experiment_id;
};

struct RunCreate {
  std::string display_name;
  std::string description;
  std::string experiment_id;
  std::string pipeline_id;
  std::string pipeline_version_id;
  nlohmann::json pipeline_spec;  // inline spec instead of a version reference
  nlohmann::json parameters = nlohmann::json::object();
};

// A target's back-pressure: 429 or 503 answers that carried Retry-After
// (delta-seconds). A GET waits what the target asked (at most
// kMaxRetryAfterWait, kMaxRetryAfterResends times) and is sent again; any
// other call is never resent, its caller gets the error. Each answer is
// reported to the observer as the call it was.
struct BackPressureCounts {
  uint64_t waits = 0;  // GETs that waited Retry-After and were resent
  Duration waited{};
  uint64_t not_resent = 0;  // non-idempotent calls answered with Retry-After
  std::map<std::string, uint64_t> by_operation;
};
inline constexpr Duration kMaxRetryAfterWait = std::chrono::seconds(60);
inline constexpr int kMaxRetryAfterResends = 3;
// Retry-After's delta-seconds; nullopt when absent or an HTTP date (not waited on).
std::optional<Duration> ParseRetryAfter(std::string_view value);

enum class ApiVersion { kV2beta1, kV1beta1 };
// "v2beta1" or "v1beta1".
Result<ApiVersion> ParseApiVersion(std::string_view text);
std::string_view ApiVersionName(ApiVersion v);

struct ClientConfig {
  std::string namespace_;  // multi-user deployments; empty for single-user
  ApiVersion api = ApiVersion::kV2beta1;
};

class Client {
 public:
  // `observer` may be null. Both must outlive the client.
  Client(http::Client& http, ClientConfig config, CallObserver* observer);

  Result<Healthz> GetHealthz();

  Result<Pipeline> UploadPipeline(std::string_view name, std::string_view file_name,
                                  std::string content);
  Result<PipelineVersion> UploadPipelineVersion(const std::string& pipeline_id,
                                                std::string_view name, std::string_view file_name,
                                                std::string content);
  Result<Page<Pipeline>> ListPipelines(const ListOptions& options);
  Result<Pipeline> GetPipeline(const std::string& pipeline_id);
  Status DeletePipeline(const std::string& pipeline_id, bool cascade);
  Result<Page<PipelineVersion>> ListPipelineVersions(const std::string& pipeline_id,
                                                     const ListOptions& options);
  // v1beta1 names the version alone (pipeline_id unused) and sends no spec.
  Result<PipelineVersion> GetPipelineVersion(const std::string& pipeline_id,
                                             const std::string& pipeline_version_id);

  Result<Experiment> CreateExperiment(std::string_view display_name, std::string_view description);
  Result<Page<Experiment>> ListExperiments(const ListOptions& options);
  Status DeleteExperiment(const std::string& experiment_id);

  Result<Run> CreateRun(const RunCreate& request);
  Result<Run> GetRun(const std::string& run_id);
  Result<Page<Run>> ListRuns(const ListOptions& options);
  Status DeleteRun(const std::string& run_id);

  // The lean read path of load generation: the same calls, reported under the
  // same names, but only the items' ids and the paging (or the run's state)
  // are read from the answer (kfp/lean_reader.h), without building the model.
  // Under v1beta1 they read the full answer and keep the same parts.
  Result<IdPage> ListPipelineIds(const ListOptions& options);
  Result<IdPage> ListPipelineVersionIds(const std::string& pipeline_id, const ListOptions& options);
  Result<IdPage> ListExperimentIds(const ListOptions& options);
  Result<IdPage> ListRunIds(const ListOptions& options);
  Result<RuntimeState> GetRunState(const std::string& run_id);

  // v2beta1 only (v1beta1's jobs are not mapped): an Error under v1beta1.
  Result<RecurringRun> CreateRecurringRun(const RecurringRun& request);
  Result<Page<RecurringRun>> ListRecurringRuns(const ListOptions& options);
  Status DeleteRecurringRun(const std::string& recurring_run_id);

  std::string base_url() const;
  // Since the client was made, shared by its copies.
  BackPressureCounts back_pressure() const;
  ApiVersion api() const { return config_.api; }
  const ClientConfig& config() const { return config_; }

  // A copy that starts no call at or after `end`: such a call fails at once,
  // unsent and unreported to the observer. A scenario's load goes through
  // one, so that no call of it starts after the scenario's end however slow
  // the target (a read chain is several calls); what follows runs to their
  // end uses the unbounded client.
  Client StartingBefore(WallTime end) const;
  // The Error code of a call StartingBefore did not send (no HTTP status is
  // negative): nothing was asked of the target, so nothing is to be counted.
  static constexpr int kNotSent = -1;
  // A copy that reports its calls to `observer` instead (may be null): the
  // run follower's calls are recorded apart from the workload's.
  Client ReportingTo(CallObserver* observer) const;

 private:
  // Sends one call, reports it, and turns transport failures and non-2xx
  // answers into Errors that carry the HTTP status and the server's message.
  Result<nlohmann::json> Call(std::string_view operation, http::Method method,
                              const std::string& target, std::string body = "",
                              std::string_view content_type = "");
  // The same, handing back a 2xx answer's body unparsed.
  Result<std::string> CallForBody(std::string_view operation, http::Method method,
                                  const std::string& target, std::string body = "",
                                  std::string_view content_type = "");
  // A failed call's Error, "<operation>[ <where>]: <reason>" (redacted), with
  // the reason reported to the observer.
  Error Failed(std::string_view operation, const std::string& reason, int code,
               std::string_view where = "") const;
  // A 2xx answer read into its type: when it cannot be (a field missing, a
  // body cut short), the call failed and the observer counts it so.
  template <typename T>
  Result<T> Answer(std::string_view operation, Result<T> read) const {
    if (!read.ok()) return Failed(operation, read.error().message, 200);
    return read;
  }
  // A v2beta1 list call read through ReadIdPage.
  Result<IdPage> ListIds(std::string_view operation, const std::string& target,
                         std::string_view list_key, std::string_view id_key);
  std::string ListQuery(const ListOptions& options) const;
  // v1beta1: the list query with the experiment, or else the namespace, as
  // the resource_reference_key; `owner` (e.g. resource_key) replaces the namespace.
  std::string V1ListQuery(const ListOptions& options,
                          std::multimap<std::string, std::string> owner = {}) const;
  std::string Path(std::string_view suffix) const;
  bool v1() const { return config_.api == ApiVersion::kV1beta1; }

  http::Client& http_;
  ClientConfig config_;
  CallObserver* observer_;
  std::optional<WallTime> start_before_;
  struct SharedCounts {
    std::mutex mu;
    BackPressureCounts counts;
  };
  std::shared_ptr<SharedCounts> back_pressure_ = std::make_shared<SharedCounts>();
};

}  // namespace kfpbench::kfp
