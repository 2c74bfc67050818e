// Pipelines and pipeline versions (v2beta1 PipelineService).
#include <variant>

#include <fmt/format.h>

#include "http/multipart.h"
#include "server/api_util.h"
#include "server/handlers.h"
#include "server/pipeline_file.h"
#include "util/ids.h"
#include "util/json_reader.h"
#include "util/strings.h"

namespace kfpbench::server {
namespace {

using nlohmann::json;

// A failed create as uploadPipeline and uploadPipelineVersion sort it: an
// existing name is 409, a bad pipeline 400 with its message, the rest 500.
http::Response CreateFailure(const Error& e, const char* generic) {
  if (e.code == kHttpConflict) return PlainHttpError(kHttpConflict, generic, e.message);
  if (e.code == kHttpBadRequest) return PlainHttpError(kHttpBadRequest, e.message, e.message);
  return PlainHttpError(kHttpInternalError, generic, e.message);
}

// KFP's buildPipelineName: the name, else the display name, else the file's.
std::string UploadName(const http::Request& r, const std::string& file_name) {
  if (std::string name = r.Query("name"); !name.empty()) return name;
  if (std::string name = r.Query("display_name"); !name.empty()) return name;
  return file_name;
}

struct UploadedFile {
  std::string name;  // as the client named it
  std::string text;  // the pipeline, unpacked
};

// The "uploadfile" part read as KFP's ReadPipelineFile reads it, or the
// upload error: `no_file` and `unreadable` are KFP's messages for a missing
// part and a file it cannot read. Protobuf strings (and so KFP's stored
// names and specs) are UTF-8, so other bytes are refused before anything is
// written: a stray byte found later would fail a write halfway.
std::variant<UploadedFile, http::Response> ReadUpload(const http::Request& r, const char* no_file,
                                                      const char* unreadable) {
  auto parts = http::ParseMultipart(r.headers.Get("Content-Type"), r.body);
  if (!parts.ok()) return PlainHttpError(kHttpBadRequest, no_file, parts.error().message);
  const http::FormPart* file = nullptr;
  for (const auto& part : *parts) {
    if (part.name == "uploadfile") file = &part;
  }
  // Go's FormFile takes only a part with a file name.
  if (!file || file->filename.empty()) {
    return PlainHttpError(kHttpBadRequest, no_file,
                          "invalid upload: no multipart file field named 'uploadfile'");
  }
  for (const char* key :
       {"name", "display_name", "description", "namespace", "code_source_url", "pipelineid"}) {
    if (!IsValidUtf8(r.Query(key))) {
      std::string why =
          fmt::format("invalid upload: the query parameter {} is not valid UTF-8", key);
      return PlainHttpError(kHttpBadRequest, why, why);
    }
  }
  if (!IsValidUtf8(file->filename)) {
    return PlainHttpError(kHttpBadRequest, unreadable,
                          "invalid upload: file name is not valid UTF-8");
  }
  auto text = ReadPipelineFile(file->filename, file->data);
  if (!text.ok()) return PlainHttpError(kHttpBadRequest, unreadable, text.error().message);
  if (!IsValidUtf8(*text)) {
    return PlainHttpError(kHttpBadRequest, unreadable,
                          "invalid upload: the pipeline file is not valid UTF-8");
  }
  return UploadedFile{file->filename, std::move(*text)};
}

// Tags a body names, checked as KFP's model.ValidateTags checks them.
Status CheckTags(const std::optional<kfp::Tags>& tags) {
  return tags ? kfp::ValidateTags(*tags) : Ok();
}

// The upload's "tags" query parameter: a JSON object of strings (KFP's
// ParseTagsJSON), or the upload error.
std::variant<std::optional<kfp::Tags>, http::Response> UploadTags(const http::Request& r) {
  std::string text = r.Query("tags");
  if (text.empty()) return std::optional<kfp::Tags>();
  json j = ParseJson(text);
  kfp::Tags tags;
  bool ok = j.is_object();
  if (ok) {
    for (const auto& [k, v] : j.items()) {
      ok = ok && v.is_string();
      if (v.is_string()) tags[k] = v.get<std::string>();
    }
  }
  if (!ok) {
    return PlainHttpError(kHttpBadRequest,
                          "Failed to parse tags query parameter. Expected JSON object with string "
                          "keys and values",
                          "tags: " + text);
  }
  if (Status s = kfp::ValidateTags(tags); !s.ok()) {
    return PlainHttpError(kHttpBadRequest, s.error().message, s.error().message);
  }
  return std::optional<kfp::Tags>(std::move(tags));
}

// The version's spec: inline pipeline_spec, else the file at package_url.
Status FillVersionSpec(kfp::PipelineVersion& v, const std::filesystem::path& package_root) {
  if (!v.pipeline_spec.is_null()) {
    auto spec = ir::ParsePipelineSpecJson(v.pipeline_spec);
    if (!spec.ok()) return Error{"invalid pipeline_spec: " + spec.error().message, kHttpBadRequest};
    return Ok();
  }
  if (v.package_url.empty()) {
    return Error{"pipeline_version.package_url.pipeline_url is required", kHttpBadRequest};
  }
  auto bytes = ReadPackageUrl(v.package_url, package_root);
  if (!bytes.ok()) return bytes.error();
  // KFP reads the package as an upload named by the URL's last segment
  // (pipeline_server.go: path.Base), so a .tar.gz or .zip works here too.
  auto text = ReadPipelineFile(std::filesystem::path(v.package_url).filename().string(), *bytes);
  if (!text.ok()) return text.error();
  auto spec = ParseSpec(*text, v.package_url);
  if (!spec.ok()) return spec.error();
  v.pipeline_spec = spec->json;
  return Ok();
}

// A new pipeline's or version's tags checked, and its name and display
// name each the other when only one is given; `what` names the resource
// when neither is.
template <typename T>
Status CheckNew(T& resource, const char* what) {
  if (Status s = CheckTags(resource.tags); !s.ok()) return s;
  if (resource.name.empty() && resource.display_name.empty()) {
    return Error{fmt::format("{} name is required", what), kHttpBadRequest};
  }
  if (resource.name.empty()) resource.name = resource.display_name;
  if (resource.display_name.empty()) resource.display_name = resource.name;
  return Ok();
}

// A body may name the pipeline of the path, no other.
Status SamePipeline(const std::string& in_body, const std::string& in_path) {
  if (in_body.empty() || in_body == in_path) return Ok();
  return Error{
      fmt::format("pipeline_id '{}' in the body does not match '{}' in the path", in_body, in_path),
      kHttpBadRequest};
}

// An update changes only the mutable fields: the display name and
// description when given, and the tags when present (even none), as KFP's
// updateEntityFields does; name, namespace and created_at stay.
template <typename T>
Status ApplyUpdate(T& current, const T& update) {
  if (!update.display_name.empty()) current.display_name = update.display_name;
  if (!update.description.empty()) current.description = update.description;
  if (update.tags) {
    if (Status s = kfp::ValidateTags(*update.tags); !s.ok()) return s;
    current.tags = update.tags;
  }
  return Ok();
}

// A version from an upload's query parameters (uploadPipeline and
// uploadPipelineVersion read the same ones).
kfp::PipelineVersion UploadedVersion(const http::Request& r, const UploadedFile& file,
                                     const std::string& pipeline_id, json spec) {
  kfp::PipelineVersion v;
  v.pipeline_id = pipeline_id;
  v.pipeline_version_id = NewUuid();
  v.name = UploadName(r, file.name);
  v.display_name = r.Query("display_name");
  if (v.display_name.empty()) v.display_name = v.name;
  v.description = r.Query("description");
  v.code_source_url = r.Query("code_source_url");
  v.created_at = WallClock::now();
  v.pipeline_spec = std::move(spec);
  return v;
}

}  // namespace

std::variant<std::pair<kfp::Pipeline, kfp::PipelineVersion>, http::Response>
Handlers::UploadFromRequest(const http::Request& r) {
  // pipeline_upload_server.go, uploadPipeline.
  constexpr const char* kCreateFailed = "Failed to create a pipeline and a pipeline version";
  auto upload =
      ReadUpload(r, "Failed to read pipeline from file", "Failed to read a pipeline spec file");
  if (auto* refused = std::get_if<http::Response>(&upload)) return std::move(*refused);
  auto& file = std::get<UploadedFile>(upload);
  auto spec = ParseSpec(file.text, file.name);
  if (!spec.ok()) return CreateFailure(spec.error(), kCreateFailed);
  auto tags = UploadTags(r);
  if (auto* refused = std::get_if<http::Response>(&tags)) return std::move(*refused);

  kfp::PipelineVersion v = UploadedVersion(r, file, NewUuid(), spec->json);
  kfp::Pipeline p;
  p.pipeline_id = v.pipeline_id;
  p.name = v.name;
  p.display_name = v.display_name;
  p.description = v.description;
  p.namespace_ = r.Query("namespace");
  p.created_at = v.created_at;
  // KFP's uploadPipeline tags the pipeline, not its first version.
  p.tags = std::get<0>(std::move(tags));
  if (Status s = store_.InsertPipelineAndVersion(p, v); !s.ok()) {
    return CreateFailure(s.error(), kCreateFailed);
  }
  return std::make_pair(std::move(p), std::move(v));
}

http::Response Handlers::UploadPipeline(const http::Request& r, const Params&) {
  auto uploaded = UploadFromRequest(r);
  if (auto* refused = std::get_if<http::Response>(&uploaded)) return std::move(*refused);
  return JsonResponse(kfp::ToResponseJson(std::get<0>(uploaded).first));
}

http::Response Handlers::UploadPipelineVersion(const http::Request& r, const Params&) {
  // pipeline_upload_server.go, uploadPipelineVersion: one message for every
  // refusal but a bad pipeline, a missing pipeline included (400, not 404).
  constexpr const char* kFailed = "Failed to create a pipeline version";
  auto upload = ReadUpload(r, kFailed, kFailed);
  if (auto* refused = std::get_if<http::Response>(&upload)) return std::move(*refused);
  auto& file = std::get<UploadedFile>(upload);
  std::string pipeline_id = r.Query("pipelineid");
  if (pipeline_id.empty()) {
    return PlainHttpError(kHttpBadRequest, kFailed, "the query parameter pipelineid is required");
  }
  if (auto pipeline = store_.GetPipeline(pipeline_id); !pipeline.ok()) {
    return PlainHttpError(kHttpBadRequest, kFailed, pipeline.error().message);
  }
  auto spec = ParseSpec(file.text, file.name);
  if (!spec.ok()) return CreateFailure(spec.error(), kFailed);
  auto tags = UploadTags(r);
  if (auto* refused = std::get_if<http::Response>(&tags)) return std::move(*refused);

  kfp::PipelineVersion v = UploadedVersion(r, file, pipeline_id, spec->json);
  v.tags = std::get<0>(std::move(tags));
  if (Status s = store_.InsertPipelineVersion(v); !s.ok()) return CreateFailure(s.error(), kFailed);
  return JsonResponse(kfp::ToResponseJson(v));
}

http::Response Handlers::CreatePipeline(NewPipeline body) {
  kfp::Pipeline& p = body.pipeline;
  if (Status s = CheckNew(p, "pipeline"); !s.ok()) return ErrorResponse(s.error());
  p.pipeline_id = NewUuid();
  p.created_at = WallClock::now();
  if (Status s = store_.InsertPipeline(p); !s.ok()) return ErrorResponse(s.error());
  return JsonResponse(kfp::ToResponseJson(p));
}

http::Response Handlers::CreatePipelineAndVersion(NewPipelineAndVersion body) {
  kfp::Pipeline& p = body.pipeline;
  kfp::PipelineVersion& v = body.version;
  if (Status s = CheckTags(v.tags); !s.ok()) return ErrorResponse(s.error());
  if (Status s = CheckNew(p, "pipeline"); !s.ok()) return ErrorResponse(s.error());
  if (Status s = FillVersionSpec(v, package_root_); !s.ok()) return ErrorResponse(s.error());
  p.pipeline_id = NewUuid();
  p.created_at = WallClock::now();
  v.pipeline_id = p.pipeline_id;
  v.pipeline_version_id = NewUuid();
  if (v.name.empty()) v.name = p.name;
  if (v.display_name.empty()) v.display_name = v.name;
  v.created_at = p.created_at;
  if (Status s = store_.InsertPipelineAndVersion(p, v); !s.ok()) return ErrorResponse(s.error());
  return JsonResponse(kfp::ToResponseJson(p));
}

http::Response Handlers::ListPipelines(const http::Request& r, const Params&) {
  return ListResponse("pipelines", store_.ListPipelines(ListRequestFrom(r), r.Query("namespace")));
}

http::Response Handlers::GetPipeline(const http::Request&, const Params& p) {
  return ResourceResponse(store_.GetPipeline(p.at("pipeline_id")));
}

http::Response Handlers::GetPipelineByName(const http::Request& r, const Params& p) {
  return ResourceResponse(store_.GetPipelineByName(r.Query("namespace"), p.at("name")));
}

http::Response Handlers::UpdatePipeline(const http::Request& r, const Params& p) {
  const std::string& id = p.at("pipeline_id");
  auto body = ReadBody(r, kfp::PipelineFromJson);
  if (auto* refused = std::get_if<http::Response>(&body)) return std::move(*refused);
  const auto& update = std::get<kfp::Pipeline>(body);
  if (Status s = SamePipeline(update.pipeline_id, id); !s.ok()) return ErrorResponse(s.error());
  auto current = store_.GetPipeline(id);
  if (!current.ok()) return ErrorResponse(current.error());
  if (Status s = ApplyUpdate(*current, update); !s.ok()) return ErrorResponse(s.error());
  if (Status s = store_.UpdatePipeline(*current); !s.ok()) return ErrorResponse(s.error());
  return JsonResponse(kfp::ToResponseJson(*current));
}

http::Response Handlers::DeletePipeline(const http::Request& r, const Params& p) {
  auto cascade = QueryBool(r, "cascade", false);
  if (!cascade.ok()) return ErrorResponse(cascade.error());
  return EmptyResponse(store_.DeletePipeline(p.at("pipeline_id"), *cascade));
}

http::Response Handlers::ListPipelineVersions(const http::Request& r, const Params& p) {
  const std::string& id = p.at("pipeline_id");
  if (auto pipeline = store_.GetPipeline(id); !pipeline.ok()) {
    return ErrorResponse(pipeline.error());
  }
  return ListResponse("pipeline_versions", store_.ListPipelineVersions(id, ListRequestFrom(r)));
}

http::Response Handlers::CreatePipelineVersion(const http::Request& r, const Params& p) {
  const std::string& pipeline_id = p.at("pipeline_id");
  auto body = ReadBody(r, kfp::PipelineVersionFromJson);
  if (auto* refused = std::get_if<http::Response>(&body)) return std::move(*refused);
  auto& v = std::get<kfp::PipelineVersion>(body);
  if (Status s = SamePipeline(v.pipeline_id, pipeline_id); !s.ok()) {
    return ErrorResponse(s.error());
  }
  if (auto pipeline = store_.GetPipeline(pipeline_id); !pipeline.ok()) {
    return ErrorResponse(pipeline.error());
  }
  if (Status s = CheckNew(v, "pipeline version"); !s.ok()) return ErrorResponse(s.error());
  if (Status s = FillVersionSpec(v, package_root_); !s.ok()) return ErrorResponse(s.error());
  v.pipeline_id = pipeline_id;
  v.pipeline_version_id = NewUuid();
  v.created_at = WallClock::now();
  if (Status s = store_.InsertPipelineVersion(v); !s.ok()) return ErrorResponse(s.error());
  return JsonResponse(kfp::ToResponseJson(v));
}

http::Response Handlers::GetPipelineVersion(const http::Request&, const Params& p) {
  return ResourceResponse(
      store_.GetPipelineVersion(p.at("pipeline_id"), p.at("pipeline_version_id")));
}

http::Response Handlers::UpdatePipelineVersion(const http::Request& r, const Params& p) {
  auto body = ReadBody(r, kfp::PipelineVersionFromJson);
  if (auto* refused = std::get_if<http::Response>(&body)) return std::move(*refused);
  auto current = store_.GetPipelineVersion(p.at("pipeline_id"), p.at("pipeline_version_id"));
  if (!current.ok()) return ErrorResponse(current.error());
  const auto& update = std::get<kfp::PipelineVersion>(body);
  if (Status s = ApplyUpdate(*current, update); !s.ok()) return ErrorResponse(s.error());
  if (Status s = store_.UpdatePipelineVersion(*current); !s.ok()) return ErrorResponse(s.error());
  return JsonResponse(kfp::ToResponseJson(*current));
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
