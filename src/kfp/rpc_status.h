// google.rpc.Status, the body of every KFP error response, and the gRPC
// codes KFP answers with: the error shape the embedded server writes and the
// client reads from any KFP server.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "util/result.h"

namespace kfpbench::kfp {

// google.rpc.Status, the body of every KFP error response.
struct RpcStatus {
  int code = 0;  // gRPC code
  std::string message;
  nlohmann::json details = nlohmann::json::array();
};

nlohmann::json ToJson(const RpcStatus& s);
Result<RpcStatus> RpcStatusFromJson(const nlohmann::json& j);

// gRPC codes KFP answers with, and the HTTP status grpc-gateway maps each to.
enum class GrpcCode {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
  kUnauthenticated = 16,
};
int HttpStatusFor(GrpcCode code);
GrpcCode GrpcCodeForHttpStatus(int http_status);

// KFP's UserError.GRPCStatus (backend/src/common/util/error.go): the status
// message is the internal error text, and `details` holds one
// google.rpc.Status with the code and the message meant for the client.
RpcStatus UserErrorStatus(GrpcCode code, std::string message, std::string external_message);

// The text of an error body for a person: the top-level message, or the
// first detail's when the top level has none.
std::string ErrorMessage(const RpcStatus& status);

}  // namespace kfpbench::kfp
