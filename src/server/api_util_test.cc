#include "server/api_util.h"

#include <gtest/gtest.h>

namespace kfpbench::server {
namespace {

// The bytes the HTTP server's own answers had when it wrote them itself: the
// keys in grpc-gateway's order, and each status's gRPC code.
TEST(TransportErrorResponse, IsGrpcGatewaysShapeWithNoDetails) {
  struct Case {
    int status;
    const char* message;
    const char* body;
  };
  for (const Case& c : {
           Case{400, "malformed HTTP request: bad method",
                R"({"code":3,"message":"malformed HTTP request: bad method","details":[]})"},
           Case{413, "request body is larger than 1024 bytes",
                R"({"code":8,"message":"request body is larger than 1024 bytes","details":[]})"},
           Case{431, "request headers are too large",
                R"({"code":8,"message":"request headers are too large","details":[]})"},
           Case{500, "internal error", R"({"code":13,"message":"internal error","details":[]})"},
           Case{503, "too many connections",
                R"({"code":14,"message":"too many connections","details":[]})"},
       }) {
    http::Response r = TransportErrorResponse(c.status, c.message);
    EXPECT_EQ(r.status, c.status);
    EXPECT_EQ(r.headers.Get("Content-Type"), "application/json");
    EXPECT_EQ(r.body, c.body);
  }
}

TEST(TransportErrorResponse, EscapesTheMessageAndNeverThrowsOnBadUtf8) {
  EXPECT_EQ(
      TransportErrorResponse(400, "bad path: malformed percent escape in \"/a\\b\"\n").body,
      R"({"code":3,"message":"bad path: malformed percent escape in \"/a\\b\"\n","details":[]})");
  EXPECT_EQ(TransportErrorResponse(400, "\x01").body,
            R"({"code":3,"message":"\u0001","details":[]})");
  EXPECT_EQ(TransportErrorResponse(400, "bad \xff").body,
            "{\"code\":3,\"message\":\"bad \xEF\xBF\xBD\",\"details\":[]}");
}

}  // namespace
}  // namespace kfpbench::server
