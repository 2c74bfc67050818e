#include "kfp/client.h"

#include <chrono>
#include <map>

#include <fmt/format.h>

#include "http/multipart.h"
#include "http/url.h"
#include "util/secrets.h"

namespace kfpbench::kfp {
namespace {

using nlohmann::json;
constexpr std::string_view kApi = "/apis/v2beta1";

std::string Path(std::string_view suffix) { return std::string(kApi) + std::string(suffix); }

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

}  // namespace

Client::Client(http::Client& http, ClientConfig config, CallObserver* observer)
    : http_(http), config_(std::move(config)), observer_(observer) {}

std::string Client::base_url() const { return http_.base().ToString(); }

Result<json> Client::Call(std::string_view operation, http::Method method,
                          const std::string& target, std::string body,
                          std::string_view content_type) {
  auto started = std::chrono::steady_clock::now();
  auto response = http_.Send(method, target, std::move(body), content_type);
  auto latency = std::chrono::steady_clock::now() - started;
  int status = response.ok() ? response->status : 0;
  if (observer_) observer_->OnCall(operation, latency, status, WallClock::now());
  if (!response.ok()) {
    return Error{Redact(fmt::format("{}: {}", operation, response.error().message)), 0};
  }
  json parsed;
  if (!response->body.empty()) {
    parsed = json::parse(response->body, nullptr, /*allow_exceptions=*/false);
  }
  if (status < 200 || status >= 300) {
    std::string message;
    if (parsed.is_object()) message = parsed.value("message", "");
    if (message.empty()) message = response->body.substr(0, 200);
    return Error{
        Redact(fmt::format("{} {}{}: HTTP {}: {}", operation, base_url(), target, status, message)),
        status};
  }
  if (parsed.is_discarded()) {
    return Error{fmt::format("{}: the server answered HTTP {} with a body that is not JSON",
                             operation, status),
                 status};
  }
  return parsed;
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
  return HealthzFromJson(*j);
}

Result<Pipeline> Client::UploadPipeline(std::string_view name, std::string_view file_name,
                                        std::string content) {
  auto form = http::BuildMultipart(
      {{"uploadfile", std::string(file_name), "application/octet-stream", std::move(content)}});
  std::multimap<std::string, std::string> q{{"name", std::string(name)},
                                            {"display_name", std::string(name)}};
  if (!config_.namespace_.empty()) q.emplace("namespace", config_.namespace_);
  auto j =
      Call("UploadPipeline", http::Method::kPost, Path("/pipelines/upload?") + http::BuildQuery(q),
           std::move(form.body), form.content_type);
  if (!j.ok()) return j.error();
  return PipelineFromJson(*j, false);
}

Result<PipelineVersion> Client::UploadPipelineVersion(const std::string& pipeline_id,
                                                      std::string_view name,
                                                      std::string_view file_name,
                                                      std::string content) {
  auto form = http::BuildMultipart(
      {{"uploadfile", std::string(file_name), "application/octet-stream", std::move(content)}});
  std::multimap<std::string, std::string> q{{"name", std::string(name)},
                                            {"display_name", std::string(name)},
                                            {"pipelineid", pipeline_id}};
  auto j = Call("UploadPipelineVersion", http::Method::kPost,
                Path("/pipelines/upload_version?") + http::BuildQuery(q), std::move(form.body),
                form.content_type);
  if (!j.ok()) return j.error();
  return PipelineVersionFromJson(*j, false);
}

Result<Page<Pipeline>> Client::ListPipelines(const ListOptions& options) {
  auto j = Call("ListPipelines", http::Method::kGet, Path("/pipelines") + ListQuery(options));
  if (!j.ok()) return j.error();
  return ReadPage<Pipeline>(*j, "pipelines",
                            [](const json& i) { return PipelineFromJson(i, false); });
}

Result<Pipeline> Client::GetPipeline(const std::string& pipeline_id) {
  auto j = Call("GetPipeline", http::Method::kGet,
                Path("/pipelines/") + http::PercentEncode(pipeline_id));
  if (!j.ok()) return j.error();
  return PipelineFromJson(*j, false);
}

Status Client::DeletePipeline(const std::string& pipeline_id, bool cascade) {
  auto j = Call(
      "DeletePipeline", http::Method::kDelete,
      Path("/pipelines/") + http::PercentEncode(pipeline_id) + (cascade ? "?cascade=true" : ""));
  if (!j.ok()) return j.error();
  return Ok();
}

Result<Page<PipelineVersion>> Client::ListPipelineVersions(const std::string& pipeline_id,
                                                           const ListOptions& options) {
  auto j = Call(
      "ListPipelineVersions", http::Method::kGet,
      Path("/pipelines/") + http::PercentEncode(pipeline_id) + "/versions" + ListQuery(options));
  if (!j.ok()) return j.error();
  return ReadPage<PipelineVersion>(*j, "pipeline_versions",
                                   [](const json& i) { return PipelineVersionFromJson(i, false); });
}

Result<Experiment> Client::CreateExperiment(std::string_view display_name,
                                            std::string_view description) {
  Experiment e;
  e.display_name = display_name;
  e.description = description;
  e.namespace_ = config_.namespace_;
  auto j = Call("CreateExperiment", http::Method::kPost, Path("/experiments"), ToJson(e).dump(),
                "application/json");
  if (!j.ok()) return j.error();
  return ExperimentFromJson(*j, false);
}

Result<Page<Experiment>> Client::ListExperiments(const ListOptions& options) {
  auto j = Call("ListExperiments", http::Method::kGet, Path("/experiments") + ListQuery(options));
  if (!j.ok()) return j.error();
  return ReadPage<Experiment>(*j, "experiments",
                              [](const json& i) { return ExperimentFromJson(i, false); });
}

Status Client::DeleteExperiment(const std::string& experiment_id) {
  auto j = Call("DeleteExperiment", http::Method::kDelete,
                Path("/experiments/") + http::PercentEncode(experiment_id));
  if (!j.ok()) return j.error();
  return Ok();
}

Result<Run> Client::CreateRun(const RunCreate& request) {
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
  return RunFromJson(*j, false);
}

Result<Run> Client::GetRun(const std::string& run_id) {
  auto j = Call("GetRun", http::Method::kGet, Path("/runs/") + http::PercentEncode(run_id));
  if (!j.ok()) return j.error();
  return RunFromJson(*j, false);
}

Result<Page<Run>> Client::ListRuns(const ListOptions& options) {
  auto j = Call("ListRuns", http::Method::kGet, Path("/runs") + ListQuery(options));
  if (!j.ok()) return j.error();
  return ReadPage<Run>(*j, "runs", [](const json& i) { return RunFromJson(i, false); });
}

Status Client::DeleteRun(const std::string& run_id) {
  auto j = Call("DeleteRun", http::Method::kDelete, Path("/runs/") + http::PercentEncode(run_id));
  if (!j.ok()) return j.error();
  return Ok();
}

Result<RecurringRun> Client::CreateRecurringRun(const RecurringRun& request) {
  RecurringRun body = request;
  if (body.namespace_.empty()) body.namespace_ = config_.namespace_;
  auto j = Call("CreateRecurringRun", http::Method::kPost, Path("/recurringruns"),
                ToJson(body).dump(), "application/json");
  if (!j.ok()) return j.error();
  return RecurringRunFromJson(*j, false);
}

Status Client::DeleteRecurringRun(const std::string& recurring_run_id) {
  auto j = Call("DeleteRecurringRun", http::Method::kDelete,
                Path("/recurringruns/") + http::PercentEncode(recurring_run_id));
  if (!j.ok()) return j.error();
  return Ok();
}

}  // namespace kfpbench::kfp
