#include "report/notify.h"

#include <mutex>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "http/test_support.h"
#include "report/repetitions.h"
#include "results/test_support.h"
#include "util/secrets.h"

namespace kfpbench::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using Receiver = http::testing::RecordingServer;

TEST(Notify, FailedThresholdsArePostedWithWhatFailedByHowMuch) {
  auto results = results::testing::SyntheticResults(3);
  RegisterSecret("s3cr3t-token");
  results.target.url = "http://admin:s3cr3t-token@kfp.example.com:8888";
  auto verdicts = EvaluateThresholds(
      results, {{"GetRun", {"p95 < 1ms", "error_rate < 50%"}}, {"run_duration", "p99 < 1h"}});
  ASSERT_TRUE(verdicts.ok());
  auto body = ThresholdNotification(results, *verdicts, "results/x/results.json");
  ASSERT_TRUE(body.has_value());
  EXPECT_EQ((*body)["event"], "thresholds_failed");
  ASSERT_EQ((*body)["failures"].size(), 1u);
  EXPECT_EQ((*body)["failures"][0]["metric"], "GetRun");
  EXPECT_EQ((*body)["failures"][0]["threshold"], "p95 < 1ms");
  EXPECT_THAT((*body)["failures"][0]["margin"].get<std::string>(), HasSubstr("over the limit"));
  EXPECT_EQ((*body)["target"], "http://kfp.example.com:8888");
  std::string text = (*body)["text"];
  EXPECT_THAT(text, HasSubstr("1 of 3 threshold(s) failed")) << text;
  EXPECT_THAT(text, HasSubstr("GetRun `p95 < 1ms`")) << text;
  EXPECT_THAT(text, HasSubstr("results/x/results.json")) << text;
  EXPECT_THAT(body->dump(), Not(HasSubstr("s3cr3t"))) << body->dump();

  Receiver receiver;
  ASSERT_TRUE(PostNotification(receiver.url("/hooks/T1/B2/abc"), *body).ok());
  auto got = receiver.requests();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].method, http::Method::kPost);
  EXPECT_EQ(got[0].path, "/hooks/T1/B2/abc");
  EXPECT_EQ(got[0].headers.Get("Content-Type"), "application/json");
  EXPECT_EQ(nlohmann::json::parse(got[0].body), *body);
}

TEST(Notify, NothingToSayWhenEverythingPassed) {
  auto results = results::testing::SyntheticResults(3);
  auto verdicts = EvaluateThresholds(results, {{"GetRun", "p95 < 1h"}});
  ASSERT_TRUE(verdicts.ok());
  EXPECT_FALSE(ThresholdNotification(results, *verdicts, "r.json").has_value());
  // Compare without a regression.
  std::vector<results::BenchmarkResults> a, b;
  for (uint32_t i = 0; i < 4; ++i) {
    a.push_back(results::testing::SyntheticResults(10 + i, 10, 6));
    b.push_back(results::testing::SyntheticResults(20 + i, 10, 6));
  }
  auto c = Compare(a, b, {});
  ASSERT_TRUE(c.ok());
  ASSERT_FALSE(c->regressed);
  EXPECT_FALSE(RegressionNotification(*c, {}, b[0], "base", "cand").has_value());
}

TEST(Notify, RegressionsNameMetricChangeAndP) {
  std::vector<results::BenchmarkResults> a, b;
  for (uint32_t i = 0; i < 6; ++i) {
    a.push_back(results::testing::SyntheticResults(10 + i, 10, 6));
    b.push_back(results::testing::SyntheticResults(20 + i, 10, 6, 1.5));
  }
  CompareOptions o;
  auto c = Compare(a, b, o);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(c->regressed);
  auto body = RegressionNotification(*c, o, b[0], "base/", "cand/");
  ASSERT_TRUE(body.has_value());
  EXPECT_EQ((*body)["event"], "regression");
  EXPECT_EQ((*body)["baseline"], "base/");
  bool get_p95 = false;
  for (const auto& f : (*body)["failures"]) {
    EXPECT_GT(f["change"].get<double>(), o.min_effect);
    EXPECT_LT(f["p_value"].get<double>(), o.alpha);
    get_p95 |= f["metric"] == "GetRun" && f["stat"] == "p95";
  }
  EXPECT_TRUE(get_p95);
  std::string text = (*body)["text"];
  EXPECT_THAT(text, HasSubstr("GetRun p95")) << text;
}

TEST(Notify, DeliveryFailuresAreErrorsThatHideTheWebhookPath) {
  Receiver refusing(500);
  Status s = PostNotification(refusing.url("/hooks/secret-path"), {{"text", "x"}});
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr("HTTP 500")) << s.error().message;
  EXPECT_THAT(s.error().message, Not(HasSubstr("secret-path"))) << s.error().message;

  // Nothing listens on port 1.
  Status refused = PostNotification("http://127.0.0.1:1/hooks/secret-path", {{"text", "x"}},
                                    std::chrono::seconds(5));
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error().message, HasSubstr("--notify: cannot post to http://127.0.0.1:1"))
      << refused.error().message;
  EXPECT_THAT(refused.error().message, Not(HasSubstr("secret-path"))) << refused.error().message;

  Status bad = CheckNotifyUrl("ftp://example.com/hooks/secret-path");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, Not(HasSubstr("secret-path"))) << bad.error().message;
  EXPECT_TRUE(CheckNotifyUrl("https://hooks.slack.com/services/T/B/X").ok());
}

}  // namespace
}  // namespace kfpbench::report
