// A Session as every command opens one: the embedded backend started on a
// free port and reached over loopback HTTP, each call measured into the
// recorder, and bad credentials or flags refused before anything is sent.
#include "harness/session.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/test_support.h"
#include "util/secrets.h"

namespace kfpbench::harness {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

class SessionTest : public testing::EmbeddedTargetTest {};

TEST_F(SessionTest, TheEmbeddedBackendIsReachedAndEveryCallMeasured) {
  EXPECT_TRUE(session_->embedded());
  EXPECT_THAT(session_->url(), StartsWith("http://127.0.0.1:"));
  ASSERT_TRUE(session_->CheckReachable().ok());
  results::TargetInfo target = session_->target();
  EXPECT_TRUE(target.embedded);
  EXPECT_EQ(target.url, session_->url());
  EXPECT_EQ(target.api_version, "v2beta1");

  auto experiment = session_->client().CreateExperiment("session-test", "");
  ASSERT_TRUE(experiment.ok()) << experiment.error().message;
  auto missing = session_->client().GetRun("no-such-run");
  EXPECT_FALSE(missing.ok());
  auto calls = session_->recorder().Snapshot();
  ASSERT_TRUE(calls.count("CreateExperiment"));
  EXPECT_EQ(calls["CreateExperiment"].latency_us.count(), 1u);
  EXPECT_EQ(calls["CreateExperiment"].errors, 0u);
  ASSERT_TRUE(calls.count("GetRun"));
  EXPECT_EQ(calls["GetRun"].errors, 1u);
  EXPECT_EQ(calls["GetRun"].by_status[404], 1u);
}

TEST_F(SessionTest, BadCredentialsAndFlagsAreRefusedBeforeAnythingIsSent) {
  TargetOptions none = EmbeddedTarget();
  none.token_file = (dir_ / "absent-token").string();
  auto absent = Session::Open(none);
  ASSERT_FALSE(absent.ok());
  EXPECT_THAT(absent.error().message, StartsWith("--token-file: "));

  TargetOptions two = EmbeddedTarget();
  two.token_file = Write("tokens", "first-secret-token\nsecond-secret-token\n");
  auto several = Session::Open(two);
  ASSERT_FALSE(several.ok());
  EXPECT_THAT(several.error().message, HasSubstr("more than one token"));
  EXPECT_THAT(several.error().message, Not(HasSubstr("secret-token")));  // never quoted

  TargetOptions header = EmbeddedTarget();
  header.headers = {"no-colon-here"};
  auto bad_header = Session::Open(header);
  ASSERT_FALSE(bad_header.ok());
  EXPECT_THAT(bad_header.error().message, StartsWith("--header: expected NAME:VALUE"));

  TargetOptions api = EmbeddedTarget();
  api.api = "v3";
  auto bad_api = Session::Open(api);
  ASSERT_FALSE(bad_api.ok());
  EXPECT_THAT(bad_api.error().message, StartsWith("--api: "));
}

TEST_F(SessionTest, ATokenIsSentAndRedacted) {
  TargetOptions target = EmbeddedTarget();
  target.token_file = Write("token", "  session-test-token-3f9a  \n");
  auto session = Session::Open(target);
  ASSERT_TRUE(session.ok()) << session.error().message;
  // The token, read without its whitespace, is a secret from now on.
  EXPECT_THAT(Redact("sent session-test-token-3f9a"), Not(HasSubstr("session-test-token-3f9a")));
}

TEST(SameHost, OneServerWhateverTheSpelling) {
  EXPECT_TRUE(SameHost("http://127.0.0.1:8888", "http://127.0.0.1:8888/"));
  EXPECT_TRUE(SameHost("http://KFP.example:80/pipeline/", "http://kfp.example:80/pipeline"));
  EXPECT_FALSE(SameHost("http://127.0.0.1:8888", "http://127.0.0.1:8889"));
  EXPECT_FALSE(SameHost("http://127.0.0.1:8888", "https://127.0.0.1:8888"));
  EXPECT_FALSE(SameHost("http://kfp/pipeline", "http://kfp/other"));
}

}  // namespace
}  // namespace kfpbench::harness
