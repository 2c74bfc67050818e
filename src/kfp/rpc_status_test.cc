#include "kfp/rpc_status.h"

#include <gtest/gtest.h>

namespace kfpbench::kfp {
namespace {

using nlohmann::json;

// KFP's UserError.GRPCStatus: one google.rpc.Status in the details.
TEST(RpcStatus, UserErrorStatusCarriesOneDetail) {
  json j = ToJson(UserErrorStatus(GrpcCode::kNotFound, "internal: x", "x"));
  EXPECT_EQ(j["code"], 5);
  EXPECT_EQ(j["message"], "internal: x");
  ASSERT_EQ(j["details"].size(), 1u);
  EXPECT_EQ(j["details"][0]["@type"], "type.googleapis.com/google.rpc.Status");
  EXPECT_EQ(j["details"][0]["message"], "x");
  auto back = RpcStatusFromJson(json{{"code", 5}, {"details", j["details"]}});
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(ErrorMessage(*back), "x");
}

TEST(RpcStatus, GrpcAndHttpCodesMapBothWays) {
  EXPECT_EQ(HttpStatusFor(GrpcCode::kNotFound), 404);
  EXPECT_EQ(HttpStatusFor(GrpcCode::kInvalidArgument), 400);
  EXPECT_EQ(GrpcCodeForHttpStatus(404), GrpcCode::kNotFound);
  EXPECT_EQ(GrpcCodeForHttpStatus(503), GrpcCode::kUnavailable);
  // Every code, as grpc-gateway maps it (OK, CANCELLED, ..., UNAUTHENTICATED).
  const int expected[] = {200, 499, 500, 400, 504, 404, 409, 403, 429,
                          400, 409, 400, 501, 500, 503, 500, 401};
  for (int code = 0; code <= 16; ++code) {
    EXPECT_EQ(HttpStatusFor(static_cast<GrpcCode>(code)), expected[code]) << code;
  }
  EXPECT_EQ(GrpcCodeForHttpStatus(413), GrpcCode::kResourceExhausted);
  EXPECT_EQ(GrpcCodeForHttpStatus(302), GrpcCode::kOk);
  EXPECT_EQ(GrpcCodeForHttpStatus(418), GrpcCode::kUnknown);
}

}  // namespace
}  // namespace kfpbench::kfp
