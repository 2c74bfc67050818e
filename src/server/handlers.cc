#include "server/handlers.h"

#include <fmt/format.h>

#include "http/multipart.h"
#include "kfp/json_reader.h"
#include "server/api_util.h"
#include "util/ids.h"

namespace kfpbench::server {
namespace {

using http::Method;
using nlohmann::json;

constexpr size_t kMaxUploadBytes = 32 * 1024 * 1024;  // KFP's limit
constexpr const char* kDefaultExperiment = "Default";

template <typename T, typename ToJsonFn>
json ListBody(const char* key, const store::ListResult<T>& list, ToJsonFn to_json) {
  json items = json::array();
  for (const auto& item : list.items) items.push_back(to_json(item));
  json body = json::object();
  if (!items.empty()) body[key] = std::move(items);
  if (list.total_size) body["total_size"] = list.total_size;
  if (!list.next_page_token.empty()) body["next_page_token"] = list.next_page_token;
  return body;
}

// A spec that fails to parse is the client's mistake: 400 with the reason.
Result<ir::PipelineSpec> ParseSpec(std::string_view text, const std::string& what) {
  auto spec = ir::ParsePipelineSpec(text);
  if (!spec.ok())
    return Error{fmt::format("invalid pipeline spec in {}: {}", what, spec.error().message), 400};
  return spec;
}

}  // namespace

Handlers::Handlers(store::Store& store, engine::Engine& engine) : store_(store), engine_(engine) {}

Status Handlers::Init() {
  json filter = {
      {"predicates",
       {{{"key", "display_name"}, {"operation", "EQUALS"}, {"string_value", kDefaultExperiment}}}}};
  auto existing = store_.ListExperiments({"1", "", "", filter.dump()}, "");
  if (!existing.ok()) return existing.error();
  if (!existing->items.empty()) {
    default_experiment_id_ = existing->items.front().experiment_id;
    return Ok();
  }
  kfp::Experiment e;
  e.experiment_id = NewUuid();
  e.display_name = kDefaultExperiment;
  e.description = "All runs created without specifying an experiment will be grouped here.";
  e.created_at = WallClock::now();
  e.storage_state = "AVAILABLE";
  default_experiment_id_ = e.experiment_id;
  return store_.InsertExperiment(e);
}

void Handlers::Register(http::Router& router) {
  auto bind = [this](auto method) {
    return
        [this, method](const http::Request& r, const Params& p) { return (this->*method)(r, p); };
  };
  const std::string api = "/apis/v2beta1";
  router.Add(Method::kGet, api + "/healthz", bind(&Handlers::Healthz), "GetHealthz");
  router.Add(Method::kPost, api + "/pipelines/upload", bind(&Handlers::UploadPipeline),
             "UploadPipeline");
  router.Add(Method::kPost, api + "/pipelines", bind(&Handlers::CreatePipeline), "CreatePipeline");
  router.Add(Method::kGet, api + "/pipelines", bind(&Handlers::ListPipelines), "ListPipelines");
  router.Add(Method::kGet, api + "/pipelines/{pipeline_id}", bind(&Handlers::GetPipeline),
             "GetPipeline");
  router.Add(Method::kDelete, api + "/pipelines/{pipeline_id}", bind(&Handlers::DeletePipeline),
             "DeletePipeline");
  router.Add(Method::kGet, api + "/pipelines/{pipeline_id}/versions",
             bind(&Handlers::ListPipelineVersions), "ListPipelineVersions");
  router.Add(Method::kGet, api + "/pipelines/{pipeline_id}/versions/{pipeline_version_id}",
             bind(&Handlers::GetPipelineVersion), "GetPipelineVersion");
  router.Add(Method::kPost, api + "/experiments", bind(&Handlers::CreateExperiment),
             "CreateExperiment");
  router.Add(Method::kGet, api + "/experiments", bind(&Handlers::ListExperiments),
             "ListExperiments");
  router.Add(Method::kGet, api + "/experiments/{experiment_id}", bind(&Handlers::GetExperiment),
             "GetExperiment");
  router.Add(Method::kDelete, api + "/experiments/{experiment_id}",
             bind(&Handlers::DeleteExperiment), "DeleteExperiment");
  router.Add(Method::kPost, api + "/runs", bind(&Handlers::CreateRun), "CreateRun");
  router.Add(Method::kGet, api + "/runs", bind(&Handlers::ListRuns), "ListRuns");
  router.Add(Method::kGet, api + "/runs/{run_id}", bind(&Handlers::GetRun), "GetRun");
  router.Add(Method::kDelete, api + "/runs/{run_id}", bind(&Handlers::DeleteRun), "DeleteRun");
}

http::Response Handlers::Healthz(const http::Request&, const Params&) {
  return JsonResponse(kfp::ToJson(kfp::Healthz{false, "database"}));
}

http::Response Handlers::UploadPipeline(const http::Request& r, const Params&) {
  auto parts = http::ParseMultipart(r.headers.Get("Content-Type"), r.body);
  if (!parts.ok()) return ErrorResponse(400, "invalid upload: " + parts.error().message);
  const http::FormPart* file = nullptr;
  for (const auto& part : *parts) {
    if (part.name == "uploadfile") file = &part;
  }
  if (!file) return ErrorResponse(400, "invalid upload: no multipart field named 'uploadfile'");
  if (file->data.size() > kMaxUploadBytes) {
    return ErrorResponse(413, fmt::format("the pipeline file is {} bytes; at most {} are accepted",
                                          file->data.size(), kMaxUploadBytes));
  }
  auto spec = ParseSpec(file->data, file->filename.empty() ? "uploadfile" : file->filename);
  if (!spec.ok()) return ErrorResponse(spec.error());

  kfp::Pipeline p;
  p.pipeline_id = NewUuid();
  p.name = r.Query("name");
  if (p.name.empty()) p.name = file->filename.empty() ? spec->name : file->filename;
  p.display_name = r.Query("display_name");
  if (p.display_name.empty()) p.display_name = p.name;
  p.description = r.Query("description");
  p.namespace_ = r.Query("namespace");
  p.created_at = WallClock::now();
  if (Status s = store_.InsertPipeline(p); !s.ok()) return ErrorResponse(s.error());

  kfp::PipelineVersion v;
  v.pipeline_id = p.pipeline_id;
  v.pipeline_version_id = NewUuid();
  v.name = p.name;
  v.display_name = p.display_name;
  v.description = p.description;
  v.created_at = p.created_at;
  v.code_source_url = r.Query("code_source_url");
  v.pipeline_spec = spec->json;
  if (Status s = store_.InsertPipelineVersion(v); !s.ok()) {
    (void)store_.DeletePipeline(p.pipeline_id, true);
    return ErrorResponse(s.error());
  }
  return JsonResponse(kfp::ToJson(p));
}

http::Response Handlers::CreatePipeline(const http::Request& r, const Params&) {
  auto body = ParseJsonBody(r);
  if (!body.ok()) return ErrorResponse(body.error());
  auto p = kfp::PipelineFromJson(*body, true);
  if (!p.ok()) return ErrorResponse(p.error());
  if (p->name.empty() && p->display_name.empty()) {
    return ErrorResponse(400, "pipeline name is required");
  }
  if (p->name.empty()) p->name = p->display_name;
  if (p->display_name.empty()) p->display_name = p->name;
  p->pipeline_id = NewUuid();
  p->created_at = WallClock::now();
  if (Status s = store_.InsertPipeline(*p); !s.ok()) return ErrorResponse(s.error());
  return JsonResponse(kfp::ToJson(*p));
}

http::Response Handlers::ListPipelines(const http::Request& r, const Params&) {
  auto list = store_.ListPipelines(ListRequestFrom(r), r.Query("namespace"));
  if (!list.ok()) return ErrorResponse(list.error());
  return JsonResponse(ListBody("pipelines", *list, [](const auto& p) { return kfp::ToJson(p); }));
}

http::Response Handlers::GetPipeline(const http::Request&, const Params& p) {
  auto pipeline = store_.GetPipeline(p.at("pipeline_id"));
  if (!pipeline.ok()) return ErrorResponse(pipeline.error());
  return JsonResponse(kfp::ToJson(*pipeline));
}

http::Response Handlers::DeletePipeline(const http::Request& r, const Params& p) {
  auto cascade = QueryBool(r, "cascade", false);
  if (!cascade.ok()) return ErrorResponse(cascade.error());
  if (Status s = store_.DeletePipeline(p.at("pipeline_id"), *cascade); !s.ok()) {
    return ErrorResponse(s.error());
  }
  return JsonResponse(json::object());
}

http::Response Handlers::ListPipelineVersions(const http::Request& r, const Params& p) {
  const std::string& id = p.at("pipeline_id");
  if (auto pipeline = store_.GetPipeline(id); !pipeline.ok()) {
    return ErrorResponse(pipeline.error());
  }
  auto list = store_.ListPipelineVersions(id, ListRequestFrom(r));
  if (!list.ok()) return ErrorResponse(list.error());
  return JsonResponse(
      ListBody("pipeline_versions", *list, [](const auto& v) { return kfp::ToJson(v); }));
}

http::Response Handlers::GetPipelineVersion(const http::Request&, const Params& p) {
  auto v = store_.GetPipelineVersion(p.at("pipeline_id"), p.at("pipeline_version_id"));
  if (!v.ok()) return ErrorResponse(v.error());
  return JsonResponse(kfp::ToJson(*v));
}

http::Response Handlers::CreateExperiment(const http::Request& r, const Params&) {
  auto body = ParseJsonBody(r);
  if (!body.ok()) return ErrorResponse(body.error());
  auto e = kfp::ExperimentFromJson(*body, true);
  if (!e.ok()) return ErrorResponse(e.error());
  if (e->display_name.empty()) return ErrorResponse(400, "experiment display_name is required");
  e->experiment_id = NewUuid();
  e->created_at = WallClock::now();
  e->storage_state = "AVAILABLE";
  e->last_run_created_at = {};
  if (Status s = store_.InsertExperiment(*e); !s.ok()) return ErrorResponse(s.error());
  return JsonResponse(kfp::ToJson(*e));
}

http::Response Handlers::ListExperiments(const http::Request& r, const Params&) {
  auto list = store_.ListExperiments(ListRequestFrom(r), r.Query("namespace"));
  if (!list.ok()) return ErrorResponse(list.error());
  return JsonResponse(ListBody("experiments", *list, [](const auto& e) { return kfp::ToJson(e); }));
}

http::Response Handlers::GetExperiment(const http::Request&, const Params& p) {
  auto e = store_.GetExperiment(p.at("experiment_id"));
  if (!e.ok()) return ErrorResponse(e.error());
  return JsonResponse(kfp::ToJson(*e));
}

http::Response Handlers::DeleteExperiment(const http::Request&, const Params& p) {
  if (Status s = store_.DeleteExperiment(p.at("experiment_id")); !s.ok()) {
    return ErrorResponse(s.error());
  }
  return JsonResponse(json::object());
}

Result<std::shared_ptr<const ir::PipelineSpec>> Handlers::SpecForVersion(
    const kfp::PipelineVersion& version) {
  {
    std::lock_guard lock(cache_mu_);
    auto it = spec_cache_.find(version.pipeline_version_id);
    if (it != spec_cache_.end()) return it->second;
  }
  auto spec = ir::ParsePipelineSpecJson(version.pipeline_spec);
  if (!spec.ok()) {
    return Error{fmt::format("pipeline version {} has an invalid spec: {}",
                             version.pipeline_version_id, spec.error().message),
                 400};
  }
  auto shared = std::make_shared<const ir::PipelineSpec>(std::move(*spec));
  std::lock_guard lock(cache_mu_);
  spec_cache_.emplace(version.pipeline_version_id, shared);
  return shared;
}

http::Response Handlers::CreateRun(const http::Request& r, const Params&) {
  auto body = ParseJsonBody(r);
  if (!body.ok()) return ErrorResponse(body.error());
  auto parsed = kfp::RunFromJson(*body, true);
  if (!parsed.ok()) return ErrorResponse(parsed.error());
  kfp::Run run = std::move(*parsed);
  if (run.display_name.empty()) return ErrorResponse(400, "run display_name is required");

  std::shared_ptr<const ir::PipelineSpec> spec;
  if (!run.pipeline_spec.is_null()) {
    auto s = ir::ParsePipelineSpecJson(run.pipeline_spec);
    if (!s.ok()) return ErrorResponse(400, "invalid pipeline_spec: " + s.error().message);
    spec = std::make_shared<const ir::PipelineSpec>(std::move(*s));
    run.pipeline_id.clear();
    run.pipeline_version_reference_id.clear();
  } else {
    if (run.pipeline_version_reference_id.empty()) {
      run.pipeline_version_reference_id = run.pipeline_version_id;  // deprecated field
    }
    if (run.pipeline_id.empty()) {
      return ErrorResponse(
          400, "either pipeline_spec or pipeline_version_reference.pipeline_id must be set");
    }
    auto version =
        run.pipeline_version_reference_id.empty()
            ? store_.LatestPipelineVersion(run.pipeline_id)
            : store_.GetPipelineVersion(run.pipeline_id, run.pipeline_version_reference_id);
    if (!version.ok()) return ErrorResponse(version.error());
    run.pipeline_version_reference_id = version->pipeline_version_id;
    auto s = SpecForVersion(*version);
    if (!s.ok()) return ErrorResponse(s.error());
    spec = std::move(*s);
  }
  run.pipeline_version_id.clear();

  if (run.experiment_id.empty()) {
    run.experiment_id = default_experiment_id_;
  } else if (auto e = store_.GetExperiment(run.experiment_id); !e.ok()) {
    return ErrorResponse(e.error());
  }

  WallTime now = WallClock::now();
  run.run_id = NewUuid();
  run.created_at = now;
  run.scheduled_at = now;
  run.finished_at = {};
  run.storage_state = "AVAILABLE";
  run.state = RuntimeState::kPending;
  run.error.reset();
  run.task_details.clear();
  run.state_history = {{now, RuntimeState::kPending, std::nullopt}};
  if (run.runtime_config.parameters.is_null()) run.runtime_config.parameters = json::object();
  if (Status s = store_.InsertRun(run); !s.ok()) return ErrorResponse(s.error());

  engine::RunRequest request{run.run_id, spec, run.runtime_config.parameters,
                             run.runtime_config.pipeline_root};
  if (Status s = engine_.Submit(std::move(request)); !s.ok()) {
    (void)store_.DeleteRun(run.run_id);
    Error e = s.error();
    if (e.code == 0) e.code = 400;
    return ErrorResponse(e);
  }
  return JsonResponse(kfp::ToJson(run));
}

http::Response Handlers::ListRuns(const http::Request& r, const Params&) {
  auto list = store_.ListRuns(ListRequestFrom(r), r.Query("experiment_id"), r.Query("namespace"));
  if (!list.ok()) return ErrorResponse(list.error());
  return JsonResponse(ListBody("runs", *list, [](const auto& run) { return kfp::ToJson(run); }));
}

http::Response Handlers::GetRun(const http::Request&, const Params& p) {
  auto run = store_.GetRun(p.at("run_id"));
  if (!run.ok()) return ErrorResponse(run.error());
  return JsonResponse(kfp::ToJson(*run));
}

http::Response Handlers::DeleteRun(const http::Request&, const Params& p) {
  const std::string& id = p.at("run_id");
  auto run = store_.GetRun(id);
  if (!run.ok()) return ErrorResponse(run.error());
  // A run still executing is stopped first, as KFP deletes its workflow.
  if (!IsTerminal(run->state)) engine_.Terminate(id);
  if (Status s = store_.DeleteRun(id); !s.ok()) return ErrorResponse(s.error());
  return JsonResponse(json::object());
}

}  // namespace kfpbench::server
