// kfp::Client's accounting of each call to its observer: a call whose answer
// cannot be used (not JSON, a required field missing) is an error even though
// its status said 200, so no fault of the target hides as a success.
#include "kfp/client.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
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

// A v2beta1 kfp::Client reporting to `observer`, on a local server answering
// with `handler`.
class ClientOn {
 public:
  ClientOn(std::function<http::Response(const http::Request&)> handler, CallObserver* observer)
      : server_(Serving(std::move(handler))),
        started_(server_.Start()),
        http_(Options(server_.port())),
        client(http_, ClientConfig{}, observer) {}
  bool started() const { return started_.ok(); }
  void Stop() { server_.Stop(); }

 private:
  static http::ServerOptions Serving(std::function<http::Response(const http::Request&)> h) {
    http::ServerOptions so;
    so.handler = std::move(h);
    return so;
  }
  static http::ClientOptions Options(uint16_t port) {
    http::ClientOptions co;
    co.base.scheme = "http";
    co.base.host = "127.0.0.1";
    co.base.port = port;
    co.base.base_path = "/apis/v2beta1";
    return co;
  }
  http::Server server_;
  Status started_;
  http::Client http_;

 public:
  Client client;
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
  Counting observer;
  ClientOn target(so.handler, &observer);
  ASSERT_TRUE(target.started());
  Client& client = target.client;

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
  target.Stop();
}

// A proxy's error page may be in any encoding: its excerpt in the error is
// made UTF-8 (U+FFFD for each stray byte), or the results file that records
// it could not be written (found by hand: `run` aborted, results lost).
TEST(ClientAccounting, AnErrorPageThatIsNotUtf8IsQuotedAsUtf8) {
  Counting observer;
  ClientOn target(
      [](const http::Request&) { return http::Response::Json(502, "\xff\xfe bad gateway"); },
      &observer);
  ASSERT_TRUE(target.started());
  EXPECT_FALSE(target.client.GetRun("r").ok());
  ASSERT_EQ(observer.errors.size(), 1u);
  EXPECT_EQ(observer.errors[0], "GetRun 502: HTTP 502: \xEF\xBF\xBD\xEF\xBF\xBD bad gateway");
  target.Stop();
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
  Counting observer;
  ClientOn target(so.handler, &observer);
  ASSERT_TRUE(target.started());
  Client& client = target.client;

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
  target.Stop();
}

// A target's 429 with Retry-After: a GET waits what was asked and goes again,
// each answer counted as the call it was; a POST is never resent.
TEST(ClientBackPressure, GetsWaitRetryAfterAndPostsAreNotResent) {
  std::atomic<int> gets{0}, posts{0};
  http::ServerOptions so;
  so.handler = [&](const http::Request& r) {
    if (r.method == http::Method::kPost) {
      ++posts;
      auto busy = http::Response::Json(429, R"({"code":8,"message":"slow down"})");
      busy.headers.Set("Retry-After", "1");
      return busy;
    }
    if (gets++ == 0) {
      auto busy = http::Response::Json(503, R"({"code":14,"message":"busy"})");
      busy.headers.Set("Retry-After", "1");
      return busy;
    }
    return http::Response::Json(200, R"({"run_id":"ok","display_name":"ok","state":"RUNNING"})");
  };
  Counting observer;
  ClientOn target(so.handler, &observer);
  ASSERT_TRUE(target.started());
  Client& client = target.client;

  auto started = std::chrono::steady_clock::now();
  EXPECT_TRUE(client.GetRun("ok").ok());
  EXPECT_GE(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(990));
  EXPECT_EQ(observer.statuses["GetRun 503"], 1);
  EXPECT_EQ(observer.statuses["GetRun 200"], 1);
  RunCreate create;
  create.display_name = "r";
  create.pipeline_id = "p";
  EXPECT_FALSE(client.CreateRun(create).ok());
  EXPECT_EQ(posts.load(), 1) << "a POST is never sent twice";
  BackPressureCounts counts = client.StartingBefore(WallTime::max()).back_pressure();
  EXPECT_EQ(counts.waits, 1u);
  EXPECT_EQ(counts.waited, std::chrono::seconds(1));
  EXPECT_EQ(counts.not_resent, 1u);
  EXPECT_EQ(counts.by_operation["GetRun"], 1u);
  EXPECT_EQ(counts.by_operation["CreateRun"], 1u);
  target.Stop();
}

TEST(ClientBackPressure, RetryAfterIsReadInSecondsOnly) {
  EXPECT_EQ(ParseRetryAfter(" 2 "), std::chrono::seconds(2));
  EXPECT_EQ(ParseRetryAfter("0"), std::chrono::seconds(0));
  EXPECT_EQ(ParseRetryAfter(""), std::nullopt);
  EXPECT_EQ(ParseRetryAfter("-1"), std::nullopt);
  EXPECT_EQ(ParseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT"), std::nullopt);
}

// KFP before 2.14 refuses DeletePipeline?cascade=true while the pipeline has
// versions (KFP 2.0.5's answer, from the Kubernetes tier): the client deletes
// the versions, then the pipeline. Any other refusal is the caller's error.
TEST(ClientDeletePipeline, DeletesTheVersionsFirstWhereKfpHasNoCascade) {
  std::mutex mu;
  std::set<std::string> versions;
  for (int i = 0; i < 130; ++i) versions.insert(fmt::format("v{}", i));
  std::vector<std::string> deletes;
  auto handler = [&](const http::Request& r) {
    std::lock_guard lock(mu);
    // What follows ".../pipelines/": "p", "p/versions" or "p/versions/<id>".
    const size_t at = r.path.rfind("/pipelines/");
    const std::string rest = at == std::string::npos ? "" : r.path.substr(at + 11);
    if (r.method == http::Method::kGet && rest == "p/versions") {
      nlohmann::json items = nlohmann::json::array();
      for (const auto& v : versions) {
        if (items.size() == 100) break;
        items.push_back({{"pipeline_id", "p"}, {"pipeline_version_id", v}});
      }
      nlohmann::json page = {{"pipeline_versions", items}, {"total_size", versions.size()}};
      if (versions.size() > 100) page["next_page_token"] = "more";
      if (items.empty()) page = nlohmann::json::object();
      return http::Response::Json(200, page.dump());
    }
    if (r.method != http::Method::kDelete) return http::Response::Json(404, "{}");
    deletes.push_back(rest + (r.HasQuery("cascade") ? "?cascade=" + r.Query("cascade") : ""));
    if (rest.starts_with("p/versions/")) {
      versions.erase(rest.substr(11));
      return http::Response::Json(200, "{}");
    }
    auto refused = [](const std::string& why) {
      nlohmann::json body = {{"error", why}, {"code", 3}, {"message", why}};
      return http::Response::Json(400, body.dump());
    };
    if (rest == "p" && !versions.empty()) {
      return refused("Failed to delete pipeline p: it has existing pipeline versions (e.g. v0)");
    }
    if (rest == "p") return http::Response::Json(200, "{}");
    return refused("no such thing");
  };
  Counting observer;
  ClientOn target(handler, &observer);
  ASSERT_TRUE(target.started());
  Status s = target.client.DeletePipeline("p", /*cascade=*/true);
  ASSERT_TRUE(s.ok()) << s.error().message;
  {
    std::lock_guard lock(mu);
    EXPECT_TRUE(versions.empty());
    ASSERT_EQ(deletes.size(), 132u);  // cascade refused, 130 versions, the pipeline
    EXPECT_EQ(deletes.front(), "p?cascade=true");
    EXPECT_EQ(deletes[1], "p/versions/v0");
    EXPECT_EQ(deletes.back(), "p");
    deletes.clear();
  }
  EXPECT_EQ(observer.statuses["DeletePipeline 400"], 1);
  EXPECT_EQ(observer.statuses["DeletePipeline 200"], 131);

  Status other = target.client.DeletePipeline("q", /*cascade=*/true);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().code, 400);
  std::lock_guard lock(mu);
  EXPECT_EQ(deletes.size(), 1u);  // no versions deleted for another refusal
}

}  // namespace
}  // namespace kfpbench::kfp
