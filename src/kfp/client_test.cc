// kfp::Client's accounting of each call to its observer: a call whose answer
// cannot be used (not JSON, a required field missing) is an error even though
// its status said 200, so no fault of the target hides as a success.
#include "kfp/client.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "http/server.h"

namespace kfpbench::kfp {
namespace {

struct Counting : CallObserver {
  std::map<std::string, int> statuses;  // "op status"
  std::vector<std::string> errors;      // "op status: message"
  void OnCall(std::string_view op, Duration, int status, WallTime) override {
    statuses[std::string(op) + " " + std::to_string(status)]++;
  }
  void OnError(std::string_view op, const std::string& message, int status) override {
    errors.push_back(std::string(op) + " " + std::to_string(status) + ": " + message);
  }
};

TEST(ClientAccounting, UnusableTwoHundredsAreReportedAsErrorsWithTheirStatus) {
  http::ServerOptions so;
  so.handler = [](const http::Request& r) {
    if (r.path.ends_with("/runs/cut")) return http::Response::Json(200, R"({"run_id":"cut","st)");
    if (r.path.ends_with("/runs/bare")) return http::Response::Json(200, "[]");
    if (r.path.ends_with("/runs/gone")) {
      return http::Response::Json(404, R"({"code":5,"message":"no such run"})");
    }
    return http::Response::Json(200, R"({"run_id":"ok","display_name":"ok","state":"RUNNING"})");
  };
  http::Server server(so);
  ASSERT_TRUE(server.Start().ok());
  http::ClientOptions co;
  co.base.scheme = "http";
  co.base.host = "127.0.0.1";
  co.base.port = server.port();
  co.base.base_path = "/apis/v2beta1";
  http::Client http(co);
  Counting observer;
  Client client(http, ClientConfig{}, &observer);

  EXPECT_TRUE(client.GetRun("ok").ok());
  EXPECT_FALSE(client.GetRun("cut").ok());
  EXPECT_FALSE(client.GetRun("bare").ok());
  EXPECT_FALSE(client.GetRun("gone").ok());
  EXPECT_EQ(observer.statuses["GetRun 200"], 3);
  EXPECT_EQ(observer.statuses["GetRun 404"], 1);
  ASSERT_EQ(observer.errors.size(), 3u);
  EXPECT_EQ(observer.errors[0], "GetRun 200: the server answered with a body that is not JSON");
  EXPECT_EQ(observer.errors[1].rfind("GetRun 200: ", 0), 0u) << observer.errors[1];
  EXPECT_EQ(observer.errors[2], "GetRun 404: HTTP 404: no such run");
  server.Stop();
}

// A scenario's load goes through a client bounded by the scenario's end: a
// call due after it is not sent and not counted, however many calls a read
// chain still has to make (issue 30: a slow target kept one busy 30 s past
// a 5 s runTime).
TEST(ClientDeadline, NoCallStartsAfterTheEndAndNoneIsCounted) {
  std::atomic<int> served{0};
  http::ServerOptions so;
  so.handler = [&](const http::Request&) {
    ++served;
    return http::Response::Json(200, R"({"experiments":[],"total_size":0})");
  };
  http::Server server(so);
  ASSERT_TRUE(server.Start().ok());
  http::ClientOptions co;
  co.base.scheme = "http";
  co.base.host = "127.0.0.1";
  co.base.port = server.port();
  co.base.base_path = "/apis/v2beta1";
  http::Client http(co);
  Counting observer;
  Client client(http, ClientConfig{}, &observer);

  Client open = client.StartingBefore(WallClock::now() + std::chrono::hours(1));
  EXPECT_TRUE(open.ListExperimentIds({}).ok());
  Client ended = client.StartingBefore(WallClock::now() - std::chrono::milliseconds(1));
  auto refused = ended.ListExperimentIds({});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, Client::kNotSent);
  EXPECT_EQ(refused.error().message, "ListExperiments: not sent: the scenario had ended");
  EXPECT_FALSE(ended.CreateExperiment("e", "").ok());
  EXPECT_EQ(served.load(), 1);
  EXPECT_EQ(observer.statuses.size(), 1u);  // only the call that was sent
  EXPECT_TRUE(observer.errors.empty());
  // The unbounded client goes on (what follows runs to their end).
  EXPECT_TRUE(client.ListExperimentIds({}).ok());
  EXPECT_EQ(served.load(), 2);
  server.Stop();
}

}  // namespace
}  // namespace kfpbench::kfp
