#include "kfp/rpc_status.h"

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
  switch (code) {
    case GrpcCode::kOk:
      return 200;
    case GrpcCode::kCancelled:
      return 499;
    case GrpcCode::kInvalidArgument:
      return 400;
    case GrpcCode::kDeadlineExceeded:
      return 504;
    case GrpcCode::kNotFound:
      return 404;
    case GrpcCode::kAlreadyExists:
      return 409;
    case GrpcCode::kPermissionDenied:
      return 403;
    case GrpcCode::kResourceExhausted:
      return 429;
    case GrpcCode::kFailedPrecondition:
      return 400;
    case GrpcCode::kAborted:
      return 409;
    case GrpcCode::kOutOfRange:
      return 400;
    case GrpcCode::kUnimplemented:
      return 501;
    case GrpcCode::kUnavailable:
      return 503;
    case GrpcCode::kUnauthenticated:
      return 401;
    case GrpcCode::kUnknown:
    case GrpcCode::kInternal:
    case GrpcCode::kDataLoss:
      return 500;
  }
  return 500;
}

GrpcCode GrpcCodeForHttpStatus(int status) {
  switch (status) {
    case 200:
      return GrpcCode::kOk;
    case 400:
      return GrpcCode::kInvalidArgument;
    case 401:
      return GrpcCode::kUnauthenticated;
    case 403:
      return GrpcCode::kPermissionDenied;
    case 404:
      return GrpcCode::kNotFound;
    case 409:
      return GrpcCode::kAlreadyExists;
    case 413:
    case 429:
      return GrpcCode::kResourceExhausted;
    case 499:
      return GrpcCode::kCancelled;
    case 501:
      return GrpcCode::kUnimplemented;
    case 503:
      return GrpcCode::kUnavailable;
    case 504:
      return GrpcCode::kDeadlineExceeded;
    default:
      return status < 400 ? GrpcCode::kOk : GrpcCode::kUnknown;
  }
}

}  // namespace kfpbench::kfp
