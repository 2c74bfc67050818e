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
}

}  // namespace
}  // namespace kfpbench::kfp
