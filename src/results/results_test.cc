#include "results/results.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "util/secrets.h"

namespace kfpbench::results {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Issue #13, item 10: a target whose run errors echo the request headers put
// the token into results.json and report.html.
TEST(Results, SecretsAreRedactedFromEveryStringTheTargetSent) {
  const std::string token = "results-test-token-4f1c9e";
  RegisterSecret(token);
  BenchmarkResults r;
  RunRecord run;
  run.run_id = "r1";
  run.error = "failed: request had Authorization: Bearer " + token;
  r.runs.push_back(run);
  r.errors.push_back("scenario [0]: " + token);
  r.cleanup_failures.push_back("DeleteRun r1: " + token);
  r.partial_reason = "aborted: " + token;
  r.operations["GetRun"].AddErrorMessage("HTTP 500: echo " + token, 3);
  r.RedactSecrets();
  EXPECT_THAT(r.runs[0].error, Not(HasSubstr(token))) << r.runs[0].error;
  EXPECT_THAT(r.runs[0].error, HasSubstr("[REDACTED]")) << r.runs[0].error;
  EXPECT_THAT(r.errors[0], Not(HasSubstr(token)));
  EXPECT_THAT(r.cleanup_failures[0], Not(HasSubstr(token)));
  EXPECT_THAT(r.partial_reason, Not(HasSubstr(token)));
  ASSERT_EQ(r.operations["GetRun"].error_messages.size(), 1u);
  EXPECT_THAT(r.operations["GetRun"].error_messages.begin()->first, Not(HasSubstr(token)));
  EXPECT_EQ(r.operations["GetRun"].error_messages.begin()->second, 3u);
}

}  // namespace
}  // namespace kfpbench::results
