// Small pieces every API handler uses: KFP-shaped errors, JSON bodies, and
// reading list parameters from the query.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "http/message.h"
#include "ir/pipeline_spec.h"
#include "store/list_query.h"
#include "store/store.h"
#include "util/result.h"

namespace kfpbench::server {

// KFP's limit on pipeline files, uploaded or read from a package_url.
constexpr size_t kMaxUploadBytes = 32 * 1024 * 1024;
// JSON request bodies larger than this are refused with 413 before parsing.
constexpr size_t kMaxJsonBodyBytes = 32 * 1024 * 1024;

// {"code": <grpc>, "message": ..., "details": []} with the HTTP status in
// `error.code` (500 when unset).
http::Response ErrorResponse(const Error& error);
http::Response ErrorResponse(int http_status, std::string message);
http::Response JsonResponse(const nlohmann::json& body);

// The request body as a JSON object, or a 400 naming what is wrong.
Result<nlohmann::json> ParseJsonBody(const http::Request& request);

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
