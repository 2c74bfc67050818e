// The clean-up against a target that answers as an attacker would: a page
// token it gave before, pages without end, a pipeline whose display name
// alone carries the benchmark's prefix.
#include "harness/benchmark_cleanup.h"

#include <atomic>
#include <functional>
#include <mutex>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/test_support.h"

namespace kfpbench::harness {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

constexpr const char* kId = "kfpbench-0123abcd";

class HostileCleanupTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(target_.started()); }

  std::function<http::Response(const http::Request&)> answer_;
  CallBudget unlimited_{0};
  std::atomic<int> calls_{0};
  std::mutex mu_;
  std::vector<std::string> deleted_;
  testing::ScriptedTarget target_{[this](const http::Request& r) {
    ++calls_;
    if (r.method == http::Method::kDelete) {
      std::lock_guard lock(mu_);
      deleted_.push_back(r.path);
      return http::Response::Json(200, "{}");
    }
    return answer_(r);
  }};
  kfp::Client& client_ = target_.client();
};

TEST_F(HostileCleanupTest, ARepeatedPageTokenIsAFailureNotAnEndlessList) {
  answer_ = [](const http::Request&) {
    return http::Response::Json(200, R"({"next_page_token":"again"})");
  };
  auto out = CleanUpBenchmark(client_, kId, unlimited_, [] { return false; });
  ASSERT_FALSE(out.failures.empty());
  EXPECT_THAT(out.failures[0], HasSubstr("same next_page_token")) << out.failures[0];
  EXPECT_LT(calls_.load(), 20);
}

// Issue #35: SIGTERM and the first Ctrl-C were ignored while listing.
TEST_F(HostileCleanupTest, AStopIsHonouredWhileATargetKeepsHandingOutPages) {
  std::atomic<int> page{0};
  answer_ = [&](const http::Request&) {
    return http::Response::Json(
        200, json{{"next_page_token", std::string("p") + std::to_string(++page)}}.dump());
  };
  auto out = CleanUpBenchmark(client_, kId, unlimited_, [&] { return calls_.load() >= 25; });
  EXPECT_TRUE(out.stopped);
  EXPECT_LE(calls_.load(), 26);
}

// Issue #35: an endless page token listed as fast as the target answered.
// Every list and delete call waits its turn under --qps: in the 300 ms before
// the stop, 20 calls a second allow 7 at most (a slower machine makes fewer).
TEST_F(HostileCleanupTest, ATargetHandingOutPagesIsListedNoFasterThanTheBudget) {
  std::atomic<int> page{0};
  answer_ = [&](const http::Request&) {
    return http::Response::Json(
        200, json{{"next_page_token", std::string("p") + std::to_string(++page)}}.dump());
  };
  CallBudget budget(20);
  const auto stop_at = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  auto out = CleanUpBenchmark(client_, kId, budget,
                              [&] { return std::chrono::steady_clock::now() >= stop_at; });
  EXPECT_TRUE(out.stopped);
  EXPECT_GE(calls_.load(), 1);
  EXPECT_LE(calls_.load(), 7);
}

// Issue #35: a pipeline was deleted when only its display name matched.
TEST_F(HostileCleanupTest, APipelineIsOursByItsNameNotItsDisplayName) {
  const std::string ours = std::string(kId) + "-p";
  answer_ = [&](const http::Request& r) {
    if (r.path == "/apis/v2beta1/pipelines") {
      json pipelines = json::array(
          {{{"pipeline_id", "theirs"}, {"name", "their-pipeline"}, {"display_name", ours}},
           {{"pipeline_id", "mine"}, {"name", ours}, {"display_name", "anything"}},
           {{"pipeline_id", "old-server"}, {"display_name", ours}}});
      return http::Response::Json(200, json{{"pipelines", pipelines}}.dump());
    }
    return http::Response::Json(200, "{}");
  };
  auto out = CleanUpBenchmark(client_, kId, unlimited_, [] { return false; });
  EXPECT_TRUE(out.failures.empty()) << out.failures[0];
  std::lock_guard lock(mu_);
  EXPECT_EQ(deleted_, (std::vector<std::string>{"/apis/v2beta1/pipelines/mine",
                                                "/apis/v2beta1/pipelines/old-server"}));
}

}  // namespace
}  // namespace kfpbench::harness
