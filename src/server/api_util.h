// Small pieces every API handler uses: KFP-shaped errors, JSON bodies, and
// reading list parameters from the query.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "http/message.h"
#include "store/list_query.h"
#include "util/result.h"

namespace kfpbench::server {

// {"code": <grpc>, "message": ..., "details": []} with the HTTP status in
// `error.code` (500 when unset).
http::Response ErrorResponse(const Error& error);
http::Response ErrorResponse(int http_status, std::string message);
http::Response JsonResponse(const nlohmann::json& body);

// The request body as a JSON object, or a 400 naming what is wrong.
Result<nlohmann::json> ParseJsonBody(const http::Request& request);

store::ListRequest ListRequestFrom(const http::Request& request);

// A boolean query parameter ("true"/"false"/"1"/"0"); absent is `fallback`.
Result<bool> QueryBool(const http::Request& request, const char* name, bool fallback);

}  // namespace kfpbench::server
