#include "kfp/rpc_status.h"

#include <iterator>
#include <utility>

#include "util/json_reader.h"

namespace kfpbench::kfp {

using nlohmann::json;

json ToJson(const RpcStatus& s) {
  return {{"code", s.code}, {"message", s.message}, {"details", s.details}};
}

Result<RpcStatus> RpcStatusFromJson(const json& j) {
  JsonReader r(j, "error", false);
  RpcStatus s;
  int64_t code = 0;
  r.Int64("code", code);
  s.code = static_cast<int>(code);
  r.String("message", s.message);
  r.Any("details", s.details);
  if (s.details.is_null()) s.details = json::array();
  if (Status status = r.Finish(); !status.ok()) return status.error();
  return s;
}

RpcStatus UserErrorStatus(GrpcCode code, std::string message, std::string external_message) {
  RpcStatus s;
  s.code = static_cast<int>(code);
  s.message = std::move(message);
  s.details = json::array({{{"@type", "type.googleapis.com/google.rpc.Status"},
                            {"code", s.code},
                            {"message", std::move(external_message)}}});
  return s;
}

std::string ErrorMessage(const RpcStatus& status) {
  if (!status.message.empty()) return status.message;
  if (status.details.is_array()) {
    for (const auto& d : status.details) {
      if (d.is_object() && d.contains("message") && d["message"].is_string()) {
        return d["message"].get<std::string>();
      }
    }
  }
  return "";
}

int HttpStatusFor(GrpcCode code) {
  // grpc-gateway's HTTPStatusFromCode, by code number.
  constexpr int kStatusOf[] = {200, 499, 500, 400, 504, 404, 409, 403, 429,
                               400, 409, 400, 501, 500, 503, 500, 401};
  auto i = static_cast<size_t>(code);
  return i < std::size(kStatusOf) ? kStatusOf[i] : 500;
}

GrpcCode GrpcCodeForHttpStatus(int status) {
  constexpr std::pair<int, GrpcCode> kCodeOf[] = {
      {200, GrpcCode::kOk},
      {400, GrpcCode::kInvalidArgument},
      {401, GrpcCode::kUnauthenticated},
      {403, GrpcCode::kPermissionDenied},
      {404, GrpcCode::kNotFound},
      {409, GrpcCode::kAlreadyExists},
      {413, GrpcCode::kResourceExhausted},
      {429, GrpcCode::kResourceExhausted},
      {499, GrpcCode::kCancelled},
      {501, GrpcCode::kUnimplemented},
      {503, GrpcCode::kUnavailable},
      {504, GrpcCode::kDeadlineExceeded},
  };
  for (const auto& [http_status, code] : kCodeOf) {
    if (http_status == status) return code;
  }
  return status < 400 ? GrpcCode::kOk : GrpcCode::kUnknown;
}

}  // namespace kfpbench::kfp
