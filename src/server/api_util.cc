#include "server/api_util.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "kfp/model.h"
#include "util/files.h"
#include "util/json_reader.h"

namespace kfpbench::server {

namespace {

http::Response StatusResponse(int status, const kfp::RpcStatus& body) {
  // The message may quote the client's bytes (a path, a name): never let one
  // that is not UTF-8 throw.
  return http::Response::Json(status, DumpJson(kfp::ToJson(body)));
}

int HttpStatusOf(const Error& error) {
  return error.code >= 400 && error.code < 600 ? error.code : 500;
}

}  // namespace

http::Response ErrorResponse(const Error& error) {
  int status = HttpStatusOf(error);
  auto code = kfp::GrpcCodeForHttpStatus(status);
  return StatusResponse(status, kfp::UserErrorStatus(code, error.message, error.message));
}

http::Response UserErrorResponse(int http_status, std::string message, std::string external) {
  return StatusResponse(http_status, kfp::UserErrorStatus(kfp::GrpcCodeForHttpStatus(http_status),
                                                          std::move(message), std::move(external)));
}

http::Response GatewayErrorResponse(const Error& error) {
  int status = HttpStatusOf(error);
  kfp::RpcStatus body;
  body.code = static_cast<int>(kfp::GrpcCodeForHttpStatus(status));
  body.message = error.message;
  return StatusResponse(status, body);
}

http::Response TransportErrorResponse(int http_status, std::string_view message) {
  kfp::GrpcCode code = kfp::GrpcCodeForHttpStatus(http_status);
  if (http_status == 431) code = kfp::GrpcCode::kResourceExhausted;  // headers too large
  if (http_status == 500) code = kfp::GrpcCode::kInternal;           // the handler failed
  nlohmann::ordered_json body = {{"code", static_cast<int>(code)},
                                 {"message", std::string(message)},
                                 {"details", nlohmann::ordered_json::array()}};
  return http::Response::Json(
      http_status, body.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
}

http::Response EmptyResponse(const Status& status) {
  if (!status.ok()) return ErrorResponse(status.error());
  return JsonResponse(nlohmann::json::object());
}

http::Response ErrorResponse(int http_status, std::string message) {
  return ErrorResponse(Error{std::move(message), http_status});
}

http::Response ErrorResponse(int http_status, kfp::GrpcCode code, std::string message) {
  return StatusResponse(http_status, kfp::UserErrorStatus(code, message, message));
}

http::Response PlainHttpError(int status, const std::string& message, const std::string& details) {
  nlohmann::json body = {{"error_message", message}, {"error_details", details}};
  return http::Response::Json(status, DumpJson(body));
}

http::Response JsonResponse(const nlohmann::json& body) {
  return http::Response::Json(200, body.dump());
}

Result<nlohmann::json> ParseJsonBody(const http::Request& request) {
  if (request.body.size() > kMaxJsonBodyBytes) {
    return Error{fmt::format("the request body is {} bytes; at most {} are accepted",
                             request.body.size(), kMaxJsonBodyBytes),
                 413};
  }
  if (request.body.empty())
    return Error{"the request body is empty; a JSON object is expected", 400};
  // Depth-bounded (util/json_reader.h): a body nested 100,000 deep would
  // overflow the stack wherever it is copied or written.
  if (JsonNestsDeeperThan(request.body, kMaxJsonDepth)) {
    return Error{fmt::format("the request body nests deeper than {} levels", kMaxJsonDepth),
                 kHttpBadRequest};
  }
  auto j = ParseJson(request.body);
  if (j.is_discarded()) return Error{"the request body is not valid JSON", kHttpBadRequest};
  if (!j.is_object()) return Error{"the request body must be a JSON object", kHttpBadRequest};
  return j;
}

store::ListRequest ListRequestFrom(const http::Request& request) {
  // The filter reads as the API the request came through: KFP's
  // parseAPIFilter takes v1beta1's Filter message on v1beta1's routes.
  const bool v1 = request.path.rfind("/apis/v1beta1/", 0) == 0;
  return {request.Query("page_size"), request.Query("page_token"), request.Query("sort_by"),
          request.Query("filter"), v1 ? store::FilterApi::kV1beta1 : store::FilterApi::kV2beta1};
}

Result<ir::PipelineSpec> ParseSpec(std::string_view text, const std::string& what) {
  auto spec = ir::ParsePipelineSpec(text);
  if (!spec.ok()) {
    return Error{fmt::format("invalid pipeline spec in {}: {}", what, spec.error().message),
                 kHttpBadRequest};
  }
  return spec;
}

Result<std::string> ReadPackageUrl(const std::string& url, const std::filesystem::path& root) {
  std::string path = url;
  if (path.rfind("file://", 0) == 0) {
    path = path.substr(7);
  } else if (path.find("://") != std::string::npos) {
    return Error{fmt::format("package_url.pipeline_url '{}': no network fetches; give a local "
                             "file path or a file:// URL",
                             url),
                 400};
  }
  if (path.empty()) return Error{"package_url.pipeline_url is empty", kHttpBadRequest};
  if (root.empty()) {
    return Error{
        "package_url.pipeline_url: this server reads no local files (start it with "
        "--package-root DIR to allow files under DIR), and fetches nothing over the "
        "network; upload the file instead",
        400};
  }
  std::error_code ec;
  // The same answer whether the file exists or not, outside the root.
  if (!ResolveWithin(path, root)) {
    return Error{fmt::format("package_url.pipeline_url: '{}' is outside the package root", path),
                 400};
  }
  if (!std::filesystem::is_regular_file(path, ec)) {
    return Error{fmt::format("package_url.pipeline_url: '{}' is not a readable file", path),
                 kHttpBadRequest};
  }
  auto size = std::filesystem::file_size(path, ec);
  if (ec || size > kMaxUploadBytes) {
    return Error{fmt::format("package_url.pipeline_url '{}' is not a regular file of at most {} "
                             "bytes",
                             path, kMaxUploadBytes),
                 400};
  }
  auto text = ReadFile(path);
  if (!text.ok()) {
    return Error{fmt::format("package_url.pipeline_url: {}", text.error().message),
                 kHttpBadRequest};
  }
  return std::move(*text);
}

Result<bool> QueryBool(const http::Request& request, const char* name, bool fallback) {
  if (!request.HasQuery(name)) return fallback;
  std::string v = request.Query(name);
  if (v == "true" || v == "1") return true;
  if (v == "false" || v == "0" || v.empty()) return false;
  return Error{std::string("invalid ") + name + " '" + v + "': expected true or false",
               kHttpBadRequest};
}

}  // namespace kfpbench::server
