// Small pieces every API handler uses: KFP-shaped errors, JSON bodies, and
// reading list parameters from the query.
#pragma once

#include <string>
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

#include "http/message.h"
#include "ir/pipeline_spec.h"
#include "kfp/model.h"
#include "store/list_query.h"
#include "store/store.h"
#include "util/result.h"

namespace kfpbench::server {

// KFP's limit on pipeline files, uploaded or read from a package_url.
constexpr size_t kMaxUploadBytes = 32 * 1024 * 1024;
// JSON request bodies larger than this are refused with 413 before parsing.
constexpr size_t kMaxJsonBodyBytes = 32 * 1024 * 1024;

// An error of KFP's API server (a util.UserError) as grpc-gateway v2 writes
// it: {"code": <grpc>, "message": ..., "details": [{"@type":
// "type.googleapis.com/google.rpc.Status", "code": <grpc>, "message": ...}]},
// with the HTTP status in `error.code` (500 when unset). KFP's top-level
// message is its internal error chain ("Failed to create list options:
// Invalid input error: ..."); here both carry the message for the client.
http::Response ErrorResponse(const Error& error);
http::Response ErrorResponse(int http_status, std::string message);
// One whose gRPC code is not the one grpc-gateway's status implies first
// (409 is AlreadyExists, but KFP's NewBadRequestError is Aborted, also 409).
http::Response ErrorResponse(int http_status, kfp::GrpcCode code, std::string message);
// A util.UserError whose internal chain (`message`) and message for the
// client (`external`, in details) differ, as KFP's authorization errors do.
http::Response UserErrorResponse(int http_status, std::string message, std::string external);
// An error grpc-gateway itself answers before KFP's code runs (a body or a
// query parameter that does not parse into the request message): no details.
http::Response GatewayErrorResponse(const Error& error);
// What the HTTP server answers itself (http::ServerOptions::error_response:
// too large, malformed, too many connections, a handler that failed), in the
// shape grpc-gateway answers such errors with: {"code":<grpc>,"message":...,
// "details":[]}, keys in that order.
http::Response TransportErrorResponse(int http_status, std::string_view message);
http::Response JsonResponse(const nlohmann::json& body);

// The errors of KFP's plain HTTP handlers (uploads, artifact reads:
// writeErrorToResponse): an apiv1beta1.Error, {"error_message": ...,
// "error_details": ...}. KFP's error_details is the error printed with "%+v"
// (its message and a Go stack trace); here it is the reason.
http::Response PlainHttpError(int status, const std::string& message, const std::string& details);

// The request body as a JSON object, or a 400 naming what is wrong.
Result<nlohmann::json> ParseJsonBody(const http::Request& request);

// The request body read strictly as a resource, or grpc-gateway's 400.
template <typename T>
std::variant<T, http::Response> ReadBody(const http::Request& r,
                                         Result<T> (*from_json)(const nlohmann::json&, bool)) {
  auto body = ParseJsonBody(r);
  if (!body.ok()) return GatewayErrorResponse(body.error());
  auto value = from_json(*body, true);
  if (!value.ok()) return GatewayErrorResponse(value.error());
  return std::move(*value);
}

store::ListRequest ListRequestFrom(const http::Request& request);

// A list answer: `key` holds the items (omitted when none, as proto-JSON
// omits empty repeated fields), then total_size and next_page_token.
template <typename T, typename ToJsonFn>
nlohmann::json ListBody(const char* key, const store::ListResult<T>& list, ToJsonFn to_json) {
  nlohmann::json items = nlohmann::json::array();
  for (const auto& item : list.items) items.push_back(to_json(item));
  nlohmann::json body = nlohmann::json::object();
  if (!items.empty()) body[key] = std::move(items);
  if (list.total_size) body["total_size"] = list.total_size;
  if (!list.next_page_token.empty()) body["next_page_token"] = list.next_page_token;
  return body;
}

// The answers of most handlers: a resource as KFP's server writes it, an
// empty object, or a list of resources under `key`; or the error.
template <typename T>
http::Response ResourceResponse(const Result<T>& resource) {
  if (!resource.ok()) return ErrorResponse(resource.error());
  return JsonResponse(kfp::ToResponseJson(*resource));
}
http::Response EmptyResponse(const Status& status);
template <typename T>
http::Response ListResponse(const char* key, const Result<store::ListResult<T>>& list) {
  if (!list.ok()) return ErrorResponse(list.error());
  return JsonResponse(
      ListBody(key, *list, [](const T& item) { return kfp::ToResponseJson(item); }));
}

// A spec that fails to parse is the client's mistake: 400 naming `what`.
Result<ir::PipelineSpec> ParseSpec(std::string_view text, const std::string& what);

// The pipeline file behind a package_url. Only local files (a path or a
// file:// URL) are read: the embedded backend makes no network fetches.
// The text of a local package_url (a path or file:// URL) under `root`. With
// an empty root local files are refused: KFP fetches packages over http(s),
// and a server reading any file a client names (as root: /etc/shadow) would
// let every client probe its files. Symlinks and ".." are resolved first.
Result<std::string> ReadPackageUrl(const std::string& url, const std::filesystem::path& root);

// A boolean query parameter ("true"/"false"/"1"/"0"); absent is `fallback`.
Result<bool> QueryBool(const http::Request& request, const char* name, bool fallback);

}  // namespace kfpbench::server
