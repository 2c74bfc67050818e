#include "kfp/client.h"

#include <chrono>
#include <map>
#include <thread>

#include <fmt/format.h>

#include "http/multipart.h"
#include "http/url.h"
#include "kfp/v1_model.h"
#include "util/json_reader.h"
#include "util/secrets.h"
#include "util/strings.h"

namespace kfpbench::kfp {
namespace {

using nlohmann::json;
template <typename T, typename Parse>
Result<Page<T>> ReadPage(const json& j, const char* key, Parse parse) {
  Page<T> page;
  if (auto it = j.find(key); it != j.end() && it->is_array()) {
    for (const auto& item : *it) {
      auto v = parse(item);
      if (!v.ok()) return Error{fmt::format("bad {} item: {}", key, v.error().message)};
      page.items.push_back(std::move(*v));
    }
  }
  page.total_size = j.value("total_size", 0);
  page.next_page_token = j.value("next_page_token", "");
  return page;
}

// v1beta1's lean path: the full page, reduced to what the lean path keeps.
template <typename T, typename Id>
Result<IdPage> IdsOf(const Result<Page<T>>& page, Id id) {
  if (!page.ok()) return page.error();
  IdPage out{{}, page->total_size, page->next_page_token};
  for (const auto& item : page->items) out.ids.push_back(item.*id);
  return out;
}

}  // namespace

Result<ApiVersion> ParseApiVersion(std::string_view text) {
  if (text == "v2beta1") return ApiVersion::kV2beta1;
  if (text == "v1beta1") return ApiVersion::kV1beta1;
  return Error{fmt::format("unknown KFP API version '{}' (v2beta1 or v1beta1)", text)};
}

std::string_view ApiVersionName(ApiVersion v) {
  return v == ApiVersion::kV1beta1 ? "v1beta1" : "v2beta1";
}

std::string Client::Path(std::string_view suffix) const {
  return fmt::format("/apis/{}{}", ApiVersionName(config_.api), suffix);
}

std::string Client::V1ListQuery(const ListOptions& o,
                                std::multimap<std::string, std::string> q) const {
  const bool owner_given = !q.empty();
  if (o.page_size > 0) q.emplace("page_size", std::to_string(o.page_size));
  if (!o.page_token.empty()) q.emplace("page_token", o.page_token);
  if (!o.sort_by.empty()) q.emplace("sort_by", o.sort_by);
  if (!o.filter.empty()) q.emplace("filter", v1::FilterFromV2(o.filter));
  if (!o.experiment_id.empty()) {
    q.emplace("resource_reference_key.type", "EXPERIMENT");
    q.emplace("resource_reference_key.id", o.experiment_id);
  } else if (!config_.namespace_.empty() && !owner_given) {
    q.emplace("resource_reference_key.type", "NAMESPACE");
    q.emplace("resource_reference_key.id", config_.namespace_);
  }
  return q.empty() ? "" : "?" + http::BuildQuery(q);
}

Client::Client(http::Client& http, ClientConfig config, CallObserver* observer)
    : http_(http), config_(std::move(config)), observer_(observer) {}

std::string Client::base_url() const { return http_.base().ToString(); }

Client Client::StartingBefore(WallTime end) const {
  Client bounded = *this;
  bounded.start_before_ = end;
  return bounded;
}

Client Client::ReportingTo(CallObserver* observer) const {
  Client copy = *this;
  copy.observer_ = observer;
  return copy;
}

std::optional<Duration> ParseRetryAfter(std::string_view value) {
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  if (value.empty() || value.size() > 9) return std::nullopt;
  int64_t seconds = 0;
  for (char c : value) {
    if (c < '0' || c > '9') return std::nullopt;
    seconds = seconds * 10 + (c - '0');
  }
  return std::chrono::seconds(seconds);
}

BackPressureCounts Client::back_pressure() const {
  std::lock_guard lock(back_pressure_->mu);
  return back_pressure_->counts;
}

Error Client::Failed(std::string_view operation, const std::string& reason, int code,
                     std::string_view where) const {
  std::string why = Redact(reason);
  if (observer_) observer_->OnError(operation, why, code);
  return Error{fmt::format("{}{}{}: {}", operation, where.empty() ? "" : " ", where, why), code};
}

Result<std::string> Client::CallForBody(std::string_view operation, http::Method method,
                                        const std::string& target, std::string body,
                                        std::string_view content_type) {
  if (start_before_ && WallClock::now() >= *start_before_) {
    return Error{fmt::format("{}: not sent: the scenario had ended", operation), kNotSent};
  }
  auto started = std::chrono::steady_clock::now();
  auto response = http_.Send(method, target, std::move(body), content_type);
  auto latency = std::chrono::steady_clock::now() - started;
  int status = response.ok() ? response->status : 0;
  if (observer_) observer_->OnCall(operation, latency, status, WallClock::now());
  for (int resends = 0; status == 429 || status == 503; ++resends) {
    auto wait = ParseRetryAfter(response->headers.Get("Retry-After"));
    if (!wait) break;
    const bool idempotent = method == http::Method::kGet;
    const bool in_time = !start_before_ || WallClock::now() + *wait < *start_before_;
    {
      std::lock_guard lock(back_pressure_->mu);
      BackPressureCounts& c = back_pressure_->counts;
      ++c.by_operation[std::string(operation)];
      if (!idempotent) ++c.not_resent;
      if (!idempotent || resends >= kMaxRetryAfterResends || *wait > kMaxRetryAfterWait ||
          !in_time) {
        break;
      }
      ++c.waits;
      c.waited += *wait;
    }
    std::this_thread::sleep_for(*wait);
    started = std::chrono::steady_clock::now();
    // Only GETs are resent, and kfpbench's GETs carry no body.
    response = http_.Send(method, target, "", content_type);
    latency = std::chrono::steady_clock::now() - started;
    status = response.ok() ? response->status : 0;
    if (observer_) observer_->OnCall(operation, latency, status, WallClock::now());
  }
  if (!response.ok()) return Failed(operation, response.error().message, 0);
  if (status < 200 || status >= 300) {
    std::string message;
    // KFP's error body: google.rpc.Status, the client's message in details.
    auto parsed = ParseJson(response->body);
    if (auto status = RpcStatusFromJson(parsed); parsed.is_object() && status.ok()) {
      message = ErrorMessage(*status);
    }
    // An upload's error: {"error_message", "error_details"} (KFP's
    // pipeline_upload_server.go).
    if (message.empty() && parsed.is_object() && parsed.contains("error_message") &&
        parsed["error_message"].is_string()) {
      message = parsed["error_message"].get<std::string>();
      if (auto d = parsed.find("error_details"); d != parsed.end() && d->is_string() &&
                                                 !d->get_ref<const std::string&>().empty() &&
                                                 *d != parsed["error_message"]) {
        message += ": " + d->get<std::string>();
      }
    }
    // Not JSON: an error page of a proxy, maybe not even UTF-8.
    if (message.empty()) message = ToValidUtf8(response->body.substr(0, 200));
    return Failed(operation, fmt::format("HTTP {}: {}", status, message), status,
                  Redact(base_url() + target));
  }
  return std::move(response->body);
}

Result<json> Client::Call(std::string_view operation, http::Method method,
                          const std::string& target, std::string body,
                          std::string_view content_type) {
  auto answer = CallForBody(operation, method, target, std::move(body), content_type);
  if (!answer.ok()) return answer.error();
  if (answer->empty()) return json();
  json parsed = ParseJson(*answer);
  if (parsed.is_discarded()) {
    if (JsonNestsDeeperThan(*answer, kMaxJsonDepth)) {
      return Failed(
          operation,
          fmt::format("the server answered with JSON nested deeper than {} levels", kMaxJsonDepth),
          200);
    }
    return Failed(operation, "the server answered with a body that is not JSON", 200);
  }
  return parsed;
}

Result<IdPage> Client::ListIds(std::string_view operation, const std::string& target,
                               std::string_view list_key, std::string_view id_key) {
  auto answer = CallForBody(operation, http::Method::kGet, target);
  if (!answer.ok()) return answer.error();
  auto page = ReadIdPage(*answer, list_key, id_key);
  if (!page.ok()) return Failed(operation, page.error().message, 200);
  return page;
}

std::string Client::ListQuery(const ListOptions& o) const {
  std::multimap<std::string, std::string> q;
  if (o.page_size > 0) q.emplace("page_size", std::to_string(o.page_size));
  if (!o.page_token.empty()) q.emplace("page_token", o.page_token);
  if (!o.sort_by.empty()) q.emplace("sort_by", o.sort_by);
  if (!o.filter.empty()) q.emplace("filter", o.filter);
  if (!o.experiment_id.empty()) q.emplace("experiment_id", o.experiment_id);
  if (!config_.namespace_.empty()) q.emplace("namespace", config_.namespace_);
  return q.empty() ? "" : "?" + http::BuildQuery(q);
}

Result<Healthz> Client::GetHealthz() {
  auto j = Call("GetHealthz", http::Method::kGet, Path("/healthz"));
  if (!j.ok()) return j.error();
  return Answer("GetHealthz", HealthzFromJson(*j));
}

Result<Pipeline> Client::UploadPipeline(std::string_view name, std::string_view file_name,
                                        std::string content) {
  auto form = http::BuildMultipart(
      {{"uploadfile", std::string(file_name), "application/octet-stream", std::move(content)}});
  std::multimap<std::string, std::string> q{{"name", std::string(name)}};
  if (!v1()) q.emplace("display_name", std::string(name));
  if (!v1() && !config_.namespace_.empty()) q.emplace("namespace", config_.namespace_);
  auto j =
      Call("UploadPipeline", http::Method::kPost, Path("/pipelines/upload?") + http::BuildQuery(q),
           std::move(form.body), form.content_type);
  if (!j.ok()) return j.error();
  return Answer("UploadPipeline", v1() ? v1::PipelineFromJson(*j) : PipelineFromJson(*j, false));
}

Result<PipelineVersion> Client::UploadPipelineVersion(const std::string& pipeline_id,
                                                      std::string_view name,
                                                      std::string_view file_name,
                                                      std::string content) {
  auto form = http::BuildMultipart(
      {{"uploadfile", std::string(file_name), "application/octet-stream", std::move(content)}});
  std::multimap<std::string, std::string> q{{"name", std::string(name)},
                                            {"pipelineid", pipeline_id}};
  if (!v1()) q.emplace("display_name", std::string(name));
  auto j = Call("UploadPipelineVersion", http::Method::kPost,
                Path("/pipelines/upload_version?") + http::BuildQuery(q), std::move(form.body),
                form.content_type);
  if (!j.ok()) return j.error();
  return Answer("UploadPipelineVersion",
                v1() ? v1::PipelineVersionFromJson(*j) : PipelineVersionFromJson(*j, false));
}

Result<Page<Pipeline>> Client::ListPipelines(const ListOptions& options) {
  if (v1()) {
    auto j = Call("ListPipelines", http::Method::kGet, Path("/pipelines") + V1ListQuery(options));
    if (!j.ok()) return j.error();
    return Answer("ListPipelines", ReadPage<Pipeline>(*j, "pipelines", v1::PipelineFromJson));
  }
  auto j = Call("ListPipelines", http::Method::kGet, Path("/pipelines") + ListQuery(options));
  if (!j.ok()) return j.error();
  return Answer("ListPipelines", ReadPage<Pipeline>(*j, "pipelines", [](const json& i) {
                  return PipelineFromJson(i, false);
                }));
}

Result<Pipeline> Client::GetPipeline(const std::string& pipeline_id) {
  auto j = Call("GetPipeline", http::Method::kGet,
                Path("/pipelines/") + http::PercentEncode(pipeline_id));
  if (!j.ok()) return j.error();
  return Answer("GetPipeline", v1() ? v1::PipelineFromJson(*j) : PipelineFromJson(*j, false));
}

Status Client::DeletePipeline(const std::string& pipeline_id, bool cascade) {
  const std::string path = Path("/pipelines/") + http::PercentEncode(pipeline_id);
  auto j = Call("DeletePipeline", http::Method::kDelete,
                path + (cascade && !v1() ? "?cascade=true" : ""));
  if (j.ok()) return Ok();
  // KFP before 2.14 has no `cascade`, and v1beta1's DeletePipelineV1 never
  // cascades: KFP refuses a pipeline that still has versions (400 "... as it
  // has existing pipeline versions (e.g. ...)"), and an upload makes one.
  // Then its versions go first, each reported as part of this DeletePipeline,
  // and the pipeline after them.
  if (!cascade || j.error().code != 400 ||
      j.error().message.find("existing pipeline versions") == std::string::npos) {
    return j.error();
  }
  // v1beta1 names a version by its id alone.
  const std::string versions_path = v1() ? Path("/pipeline_versions/") : path + "/versions/";
  // Listed again from the start after each page deleted (a page token would
  // skip what moved up); bounded, as a target could keep adding versions.
  for (int pages = 0;; ++pages) {
    ListOptions first;
    first.page_size = 100;
    auto page = ListPipelineVersions(pipeline_id, first);
    if (!page.ok()) return page.error();
    if (page->items.empty()) break;
    if (pages == 100) return Error{"DeletePipeline " + pipeline_id + ": its versions keep coming"};
    for (const auto& v : page->items) {
      auto d = Call("DeletePipeline", http::Method::kDelete,
                    versions_path + http::PercentEncode(v.pipeline_version_id));
      if (!d.ok() && !d.error().NotFound()) return d.error();
    }
  }
  auto again = Call("DeletePipeline", http::Method::kDelete, path);
  if (!again.ok()) return again.error();
  return Ok();
}

Result<Page<PipelineVersion>> Client::ListPipelineVersions(const std::string& pipeline_id,
                                                           const ListOptions& options) {
  if (v1()) {
    // v1 names the pipeline as resource_key, not in the path.
    ListOptions o = options;
    o.experiment_id.clear();
    std::string query =
        V1ListQuery(o, {{"resource_key.type", "PIPELINE"}, {"resource_key.id", pipeline_id}});
    auto j = Call("ListPipelineVersions", http::Method::kGet, Path("/pipeline_versions") + query);
    if (!j.ok()) return j.error();
    return Answer("ListPipelineVersions",
                  ReadPage<PipelineVersion>(*j, "versions", v1::PipelineVersionFromJson));
  }
  auto j = Call(
      "ListPipelineVersions", http::Method::kGet,
      Path("/pipelines/") + http::PercentEncode(pipeline_id) + "/versions" + ListQuery(options));
  if (!j.ok()) return j.error();
  return Answer("ListPipelineVersions",
                ReadPage<PipelineVersion>(*j, "pipeline_versions", [](const json& i) {
                  return PipelineVersionFromJson(i, false);
                }));
}

Result<PipelineVersion> Client::GetPipelineVersion(const std::string& pipeline_id,
                                                   const std::string& pipeline_version_id) {
  if (v1()) {
    auto j = Call("GetPipelineVersion", http::Method::kGet,
                  Path("/pipeline_versions/") + http::PercentEncode(pipeline_version_id));
    if (!j.ok()) return j.error();
    return Answer("GetPipelineVersion", v1::PipelineVersionFromJson(*j));
  }
  auto j = Call("GetPipelineVersion", http::Method::kGet,
                Path("/pipelines/") + http::PercentEncode(pipeline_id) + "/versions/" +
                    http::PercentEncode(pipeline_version_id));
  if (!j.ok()) return j.error();
  return Answer("GetPipelineVersion", PipelineVersionFromJson(*j, false));
}

Result<Experiment> Client::CreateExperiment(std::string_view display_name,
                                            std::string_view description) {
  if (v1()) {
    auto j = Call("CreateExperiment", http::Method::kPost, Path("/experiments"),
                  v1::ExperimentBody(display_name, description, config_.namespace_).dump(),
                  "application/json");
    if (!j.ok()) return j.error();
    return Answer("CreateExperiment", v1::ExperimentFromJson(*j));
  }
  Experiment e;
  e.display_name = display_name;
  e.description = description;
  e.namespace_ = config_.namespace_;
  auto j = Call("CreateExperiment", http::Method::kPost, Path("/experiments"), ToJson(e).dump(),
                "application/json");
  if (!j.ok()) return j.error();
  return Answer("CreateExperiment", ExperimentFromJson(*j, false));
}

Result<Page<Experiment>> Client::ListExperiments(const ListOptions& options) {
  if (v1()) {
    ListOptions o = options;
    o.experiment_id.clear();
    auto j = Call("ListExperiments", http::Method::kGet, Path("/experiments") + V1ListQuery(o));
    if (!j.ok()) return j.error();
    return Answer("ListExperiments",
                  ReadPage<Experiment>(*j, "experiments", v1::ExperimentFromJson));
  }
  auto j = Call("ListExperiments", http::Method::kGet, Path("/experiments") + ListQuery(options));
  if (!j.ok()) return j.error();
  return Answer("ListExperiments", ReadPage<Experiment>(*j, "experiments", [](const json& i) {
                  return ExperimentFromJson(i, false);
                }));
}

Status Client::DeleteExperiment(const std::string& experiment_id) {
  auto j = Call("DeleteExperiment", http::Method::kDelete,
                Path("/experiments/") + http::PercentEncode(experiment_id));
  if (!j.ok()) return j.error();
  return Ok();
}

Result<Run> Client::CreateRun(const RunCreate& request) {
  if (v1()) {
    auto j = Call("CreateRun", http::Method::kPost, Path("/runs"), v1::RunBody(request).dump(),
                  "application/json");
    if (!j.ok()) return j.error();
    return Answer("CreateRun", v1::RunDetailFromJson(*j));
  }
  Run run;
  run.display_name = request.display_name;
  run.description = request.description;
  run.experiment_id = request.experiment_id;
  run.pipeline_id = request.pipeline_id;
  run.pipeline_version_reference_id = request.pipeline_version_id;
  run.pipeline_spec = request.pipeline_spec;
  run.runtime_config.parameters = request.parameters;
  auto j =
      Call("CreateRun", http::Method::kPost, Path("/runs"), ToJson(run).dump(), "application/json");
  if (!j.ok()) return j.error();
  return Answer("CreateRun", RunFromJson(*j, false));
}

Result<Run> Client::GetRun(const std::string& run_id) {
  auto j = Call("GetRun", http::Method::kGet, Path("/runs/") + http::PercentEncode(run_id));
  if (!j.ok()) return j.error();
  return Answer("GetRun", v1() ? v1::RunDetailFromJson(*j) : RunFromJson(*j, false));
}

Result<Page<Run>> Client::ListRuns(const ListOptions& options) {
  if (v1()) {
    auto j = Call("ListRuns", http::Method::kGet, Path("/runs") + V1ListQuery(options));
    if (!j.ok()) return j.error();
    return Answer("ListRuns", ReadPage<Run>(*j, "runs", [](const json& i) {
                    return v1::RunFromJson(i, nullptr);
                  }));
  }
  auto j = Call("ListRuns", http::Method::kGet, Path("/runs") + ListQuery(options));
  if (!j.ok()) return j.error();
  return Answer("ListRuns",
                ReadPage<Run>(*j, "runs", [](const json& i) { return RunFromJson(i, false); }));
}

Status Client::DeleteRun(const std::string& run_id) {
  auto j = Call("DeleteRun", http::Method::kDelete, Path("/runs/") + http::PercentEncode(run_id));
  if (!j.ok()) return j.error();
  return Ok();
}

Result<IdPage> Client::ListPipelineIds(const ListOptions& options) {
  if (v1()) return IdsOf(ListPipelines(options), &Pipeline::pipeline_id);
  return ListIds("ListPipelines", Path("/pipelines") + ListQuery(options), "pipelines",
                 "pipeline_id");
}

Result<IdPage> Client::ListPipelineVersionIds(const std::string& pipeline_id,
                                              const ListOptions& options) {
  if (v1()) {
    return IdsOf(ListPipelineVersions(pipeline_id, options), &PipelineVersion::pipeline_version_id);
  }
  return ListIds(
      "ListPipelineVersions",
      Path("/pipelines/") + http::PercentEncode(pipeline_id) + "/versions" + ListQuery(options),
      "pipeline_versions", "pipeline_version_id");
}

Result<IdPage> Client::ListExperimentIds(const ListOptions& options) {
  if (v1()) return IdsOf(ListExperiments(options), &Experiment::experiment_id);
  return ListIds("ListExperiments", Path("/experiments") + ListQuery(options), "experiments",
                 "experiment_id");
}

Result<IdPage> Client::ListRunIds(const ListOptions& options) {
  if (v1()) return IdsOf(ListRuns(options), &Run::run_id);
  return ListIds("ListRuns", Path("/runs") + ListQuery(options), "runs", "run_id");
}

Result<RuntimeState> Client::GetRunState(const std::string& run_id) {
  if (v1()) {
    auto run = GetRun(run_id);
    if (!run.ok()) return run.error();
    return run->state;
  }
  auto answer =
      CallForBody("GetRun", http::Method::kGet, Path("/runs/") + http::PercentEncode(run_id));
  if (!answer.ok()) return answer.error();
  auto state = ReadRunState(*answer);
  if (!state.ok()) return Failed("GetRun", state.error().message, 200);
  return state;
}

Result<RecurringRun> Client::CreateRecurringRun(const RecurringRun& request) {
  if (v1()) {
    return Error{
        "recurring runs (SCHEDULED_RUNS) need the v2beta1 API; v1beta1 jobs are not "
        "supported (drop --api v1beta1)"};
  }
  RecurringRun body = request;
  if (body.namespace_.empty()) body.namespace_ = config_.namespace_;
  auto j = Call("CreateRecurringRun", http::Method::kPost, Path("/recurringruns"),
                ToJson(body).dump(), "application/json");
  if (!j.ok()) return j.error();
  return Answer("CreateRecurringRun", RecurringRunFromJson(*j, false));
}

Result<Page<RecurringRun>> Client::ListRecurringRuns(const ListOptions& options) {
  if (v1()) return Error{"recurring runs need the v2beta1 API"};
  auto j =
      Call("ListRecurringRuns", http::Method::kGet, Path("/recurringruns") + ListQuery(options));
  if (!j.ok()) return j.error();
  return Answer("ListRecurringRuns", ReadPage<RecurringRun>(*j, "recurringRuns", [](const json& i) {
                  return RecurringRunFromJson(i, false);
                }));
}

Status Client::DeleteRecurringRun(const std::string& recurring_run_id) {
  if (v1()) return Error{"recurring runs need the v2beta1 API"};
  auto j = Call("DeleteRecurringRun", http::Method::kDelete,
                Path("/recurringruns/") + http::PercentEncode(recurring_run_id));
  if (!j.ok()) return j.error();
  return Ok();
}

}  // namespace kfpbench::kfp
