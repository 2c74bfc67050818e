// Pipelines and pipeline versions (v2beta1 PipelineService).
#include <fmt/format.h>

#include "http/multipart.h"
#include "kfp/json_reader.h"
#include "server/api_util.h"
#include "server/handlers.h"
#include "util/ids.h"
#include "util/strings.h"

namespace kfpbench::server {
namespace {

using nlohmann::json;

// The "uploadfile" part of a multipart upload, checked before anything is
// written: protobuf strings (and so KFP's stored names and specs) are UTF-8,
// and a stray byte found later would fail a write halfway.
Result<const http::FormPart*> UploadFile(const http::Request& r,
                                         const std::vector<http::FormPart>& parts) {
  const http::FormPart* file = nullptr;
  for (const auto& part : parts) {
    if (part.name == "uploadfile") file = &part;
  }
  if (!file) return Error{"invalid upload: no multipart field named 'uploadfile'", 400};
  if (file->data.size() > kMaxUploadBytes) {
    return Error{fmt::format("the pipeline file is {} bytes; at most {} are accepted",
                             file->data.size(), kMaxUploadBytes),
                 413};
  }
  for (const char* key :
       {"name", "display_name", "description", "namespace", "code_source_url", "pipelineid"}) {
    if (!IsValidUtf8(r.Query(key))) {
      return Error{fmt::format("invalid upload: the query parameter {} is not valid UTF-8", key),
                   400};
    }
  }
  if (!IsValidUtf8(file->filename))
    return Error{"invalid upload: file name is not valid UTF-8", 400};
  if (!IsValidUtf8(file->data)) {
    return Error{"invalid upload: the pipeline file is not valid UTF-8", 400};
  }
  return file;
}

// The version's spec: inline pipeline_spec, else the file at package_url.
Status FillVersionSpec(kfp::PipelineVersion& v, const std::filesystem::path& package_root) {
  if (!v.pipeline_spec.is_null()) {
    auto spec = ir::ParsePipelineSpecJson(v.pipeline_spec);
    if (!spec.ok()) return Error{"invalid pipeline_spec: " + spec.error().message, 400};
    return Ok();
  }
  if (v.package_url.empty()) {
    return Error{"pipeline_version.package_url.pipeline_url is required", 400};
  }
  auto text = ReadPackageUrl(v.package_url, package_root);
  if (!text.ok()) return text.error();
  auto spec = ParseSpec(*text, v.package_url);
  if (!spec.ok()) return spec.error();
  v.pipeline_spec = spec->json;
  return Ok();
}

}  // namespace

Result<std::pair<kfp::Pipeline, kfp::PipelineVersion>> Handlers::UploadFromRequest(
    const http::Request& r) {
  auto parts = http::ParseMultipart(r.headers.Get("Content-Type"), r.body);
  if (!parts.ok()) return Error{"invalid upload: " + parts.error().message, 400};
  auto file = UploadFile(r, *parts);
  if (!file.ok()) return file.error();
  const std::string& filename = (*file)->filename;
  auto spec = ParseSpec((*file)->data, filename.empty() ? "uploadfile" : filename);
  if (!spec.ok()) return spec.error();

  kfp::Pipeline p;
  p.pipeline_id = NewUuid();
  p.name = r.Query("name");
  if (p.name.empty()) p.name = filename.empty() ? spec->name : filename;
  p.display_name = r.Query("display_name");
  if (p.display_name.empty()) p.display_name = p.name;
  p.description = r.Query("description");
  p.namespace_ = r.Query("namespace");
  p.created_at = WallClock::now();

  kfp::PipelineVersion v;
  v.pipeline_id = p.pipeline_id;
  v.pipeline_version_id = NewUuid();
  v.name = p.name;
  v.display_name = p.display_name;
  v.description = p.description;
  v.created_at = p.created_at;
  v.code_source_url = r.Query("code_source_url");
  v.pipeline_spec = spec->json;
  if (Status s = store_.InsertPipelineAndVersion(p, v); !s.ok()) return s.error();
  return std::make_pair(std::move(p), std::move(v));
}

http::Response Handlers::UploadPipeline(const http::Request& r, const Params&) {
  auto uploaded = UploadFromRequest(r);
  if (!uploaded.ok()) return ErrorResponse(uploaded.error());
  return JsonResponse(kfp::ToJson(uploaded->first));
}

http::Response Handlers::UploadPipelineVersion(const http::Request& r, const Params&) {
  std::string pipeline_id = r.Query("pipelineid");
  if (pipeline_id.empty()) return ErrorResponse(400, "the query parameter pipelineid is required");
  auto pipeline = store_.GetPipeline(pipeline_id);
  if (!pipeline.ok()) return ErrorResponse(pipeline.error());
  auto parts = http::ParseMultipart(r.headers.Get("Content-Type"), r.body);
  if (!parts.ok()) return ErrorResponse(400, "invalid upload: " + parts.error().message);
  auto file = UploadFile(r, *parts);
  if (!file.ok()) return ErrorResponse(file.error());
  const std::string& filename = (*file)->filename;
  auto spec = ParseSpec((*file)->data, filename.empty() ? "uploadfile" : filename);
  if (!spec.ok()) return ErrorResponse(spec.error());

  kfp::PipelineVersion v;
  v.pipeline_id = pipeline_id;
  v.pipeline_version_id = NewUuid();
  v.name = r.Query("name");
  if (v.name.empty()) v.name = filename.empty() ? v.pipeline_version_id : filename;
  v.display_name = r.Query("display_name");
  if (v.display_name.empty()) v.display_name = v.name;
  v.description = r.Query("description");
  v.code_source_url = r.Query("code_source_url");
  v.created_at = WallClock::now();
  v.pipeline_spec = spec->json;
  if (Status s = store_.InsertPipelineVersion(v); !s.ok()) return ErrorResponse(s.error());
  return JsonResponse(kfp::ToJson(v));
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

http::Response Handlers::CreatePipelineAndVersion(const http::Request& r, const Params&) {
  auto body = ParseJsonBody(r);
  if (!body.ok()) return ErrorResponse(body.error());
  json pipeline_json, version_json;
  kfp::JsonReader reader(*body, "", true);
  reader.Object("pipeline", pipeline_json);
  reader.Object("pipeline_version", version_json);
  if (Status s = reader.Finish(); !s.ok()) return ErrorResponse(s.error());
  if (pipeline_json.is_null()) return ErrorResponse(400, "pipeline is required");
  if (version_json.is_null()) return ErrorResponse(400, "pipeline_version is required");
  auto p = kfp::PipelineFromJson(pipeline_json, true);
  if (!p.ok()) return ErrorResponse(Error{"pipeline." + p.error().message, 400});
  auto v = kfp::PipelineVersionFromJson(version_json, true);
  if (!v.ok()) return ErrorResponse(Error{"pipeline_version." + v.error().message, 400});
  if (p->name.empty() && p->display_name.empty()) {
    return ErrorResponse(400, "pipeline name is required");
  }
  if (p->name.empty()) p->name = p->display_name;
  if (p->display_name.empty()) p->display_name = p->name;
  if (Status s = FillVersionSpec(*v, package_root_); !s.ok()) return ErrorResponse(s.error());
  p->pipeline_id = NewUuid();
  p->created_at = WallClock::now();
  v->pipeline_id = p->pipeline_id;
  v->pipeline_version_id = NewUuid();
  if (v->name.empty()) v->name = p->name;
  if (v->display_name.empty()) v->display_name = v->name;
  v->created_at = p->created_at;
  if (Status s = store_.InsertPipelineAndVersion(*p, *v); !s.ok()) return ErrorResponse(s.error());
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

http::Response Handlers::GetPipelineByName(const http::Request& r, const Params& p) {
  auto pipeline = store_.GetPipelineByName(r.Query("namespace"), p.at("name"));
  if (!pipeline.ok()) return ErrorResponse(pipeline.error());
  return JsonResponse(kfp::ToJson(*pipeline));
}

http::Response Handlers::UpdatePipeline(const http::Request& r, const Params& p) {
  const std::string& id = p.at("pipeline_id");
  auto body = ParseJsonBody(r);
  if (!body.ok()) return ErrorResponse(body.error());
  auto update = kfp::PipelineFromJson(*body, true);
  if (!update.ok()) return ErrorResponse(update.error());
  if (!update->pipeline_id.empty() && update->pipeline_id != id) {
    return ErrorResponse(400, fmt::format("pipeline_id '{}' in the body does not match '{}' in "
                                          "the path",
                                          update->pipeline_id, id));
  }
  auto current = store_.GetPipeline(id);
  if (!current.ok()) return ErrorResponse(current.error());
  // Only the mutable fields change; name, namespace and created_at stay.
  if (!update->display_name.empty()) current->display_name = update->display_name;
  if (!update->description.empty()) current->description = update->description;
  if (Status s = store_.UpdatePipeline(*current); !s.ok()) return ErrorResponse(s.error());
  return JsonResponse(kfp::ToJson(*current));
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

http::Response Handlers::CreatePipelineVersion(const http::Request& r, const Params& p) {
  const std::string& pipeline_id = p.at("pipeline_id");
  auto body = ParseJsonBody(r);
  if (!body.ok()) return ErrorResponse(body.error());
  auto v = kfp::PipelineVersionFromJson(*body, true);
  if (!v.ok()) return ErrorResponse(v.error());
  if (!v->pipeline_id.empty() && v->pipeline_id != pipeline_id) {
    return ErrorResponse(400, fmt::format("pipeline_id '{}' in the body does not match '{}' in "
                                          "the path",
                                          v->pipeline_id, pipeline_id));
  }
  if (auto pipeline = store_.GetPipeline(pipeline_id); !pipeline.ok()) {
    return ErrorResponse(pipeline.error());
  }
  if (v->name.empty() && v->display_name.empty()) {
    return ErrorResponse(400, "pipeline version name is required");
  }
  if (v->name.empty()) v->name = v->display_name;
  if (v->display_name.empty()) v->display_name = v->name;
  if (Status s = FillVersionSpec(*v, package_root_); !s.ok()) return ErrorResponse(s.error());
  v->pipeline_id = pipeline_id;
  v->pipeline_version_id = NewUuid();
  v->created_at = WallClock::now();
  if (Status s = store_.InsertPipelineVersion(*v); !s.ok()) return ErrorResponse(s.error());
  return JsonResponse(kfp::ToJson(*v));
}

http::Response Handlers::GetPipelineVersion(const http::Request&, const Params& p) {
  auto v = store_.GetPipelineVersion(p.at("pipeline_id"), p.at("pipeline_version_id"));
  if (!v.ok()) return ErrorResponse(v.error());
  return JsonResponse(kfp::ToJson(*v));
}

http::Response Handlers::UpdatePipelineVersion(const http::Request& r, const Params& p) {
  auto body = ParseJsonBody(r);
  if (!body.ok()) return ErrorResponse(body.error());
  auto update = kfp::PipelineVersionFromJson(*body, true);
  if (!update.ok()) return ErrorResponse(update.error());
  auto current = store_.GetPipelineVersion(p.at("pipeline_id"), p.at("pipeline_version_id"));
  if (!current.ok()) return ErrorResponse(current.error());
  if (!update->display_name.empty()) current->display_name = update->display_name;
  if (!update->description.empty()) current->description = update->description;
  if (Status s = store_.UpdatePipelineVersion(*current); !s.ok()) return ErrorResponse(s.error());
  return JsonResponse(kfp::ToJson(*current));
}

http::Response Handlers::DeletePipelineVersion(const http::Request&, const Params& p) {
  const std::string& version_id = p.at("pipeline_version_id");
  if (Status s = store_.DeletePipelineVersion(p.at("pipeline_id"), version_id); !s.ok()) {
    return ErrorResponse(s.error());
  }
  std::lock_guard lock(cache_mu_);
  spec_cache_.erase(version_id);
  return JsonResponse(json::object());
}

}  // namespace kfpbench::server
