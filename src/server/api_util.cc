#include "server/api_util.h"

#include "kfp/model.h"

namespace kfpbench::server {

http::Response ErrorResponse(const Error& error) {
  int status = error.code >= 400 && error.code < 600 ? error.code : 500;
  kfp::RpcStatus body;
  body.code = static_cast<int>(kfp::GrpcCodeForHttpStatus(status));
  body.message = error.message;
  return http::Response::Json(status, kfp::ToJson(body).dump());
}

http::Response ErrorResponse(int http_status, std::string message) {
  return ErrorResponse(Error{std::move(message), http_status});
}

http::Response JsonResponse(const nlohmann::json& body) {
  return http::Response::Json(200, body.dump());
}

Result<nlohmann::json> ParseJsonBody(const http::Request& request) {
  if (request.body.empty())
    return Error{"the request body is empty; a JSON object is expected", 400};
  auto j = nlohmann::json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Error{"the request body is not valid JSON", 400};
  if (!j.is_object()) return Error{"the request body must be a JSON object", 400};
  return j;
}

store::ListRequest ListRequestFrom(const http::Request& request) {
  return {request.Query("page_size"), request.Query("page_token"), request.Query("sort_by"),
          request.Query("filter")};
}

Result<bool> QueryBool(const http::Request& request, const char* name, bool fallback) {
  if (!request.HasQuery(name)) return fallback;
  std::string v = request.Query(name);
  if (v == "true" || v == "1") return true;
  if (v == "false" || v == "0" || v.empty()) return false;
  return Error{std::string("invalid ") + name + " '" + v + "': expected true or false", 400};
}

}  // namespace kfpbench::server
