#include "capture/records.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "util/time.h"

namespace kfpbench::capture {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

kfp::Run SampleRun() {
  kfp::Run run;
  run.run_id = "r1";
  run.pipeline_id = "p1";
  run.pipeline_version_reference_id = "v1";
  run.created_at = *ParseRfc3339("2026-11-20T10:00:00Z");
  run.state = RuntimeState::kRunning;
  run.runtime_config.parameters = {{"lr", 0.1}, {"db_password", "hunter2"}};
  kfp::PipelineTaskDetail cached;
  cached.display_name = "prep";
  cached.state = RuntimeState::kSkipped;
  cached.cache_fingerprint = "abc";
  kfp::PipelineTaskDetail retried;
  retried.display_name = "train";
  retried.state = RuntimeState::kSucceeded;
  retried.create_time = *ParseRfc3339("2026-11-20T10:00:01Z");
  retried.start_time = *ParseRfc3339("2026-11-20T10:00:02Z");
  retried.end_time = *ParseRfc3339("2026-11-20T10:00:09Z");
  retried.state_history = {
      {retried.start_time, RuntimeState::kRunning, std::nullopt},
      {retried.start_time, RuntimeState::kRunning, kfp::RpcStatus{2, "attempt 1 failed"}},
      {retried.end_time, RuntimeState::kSucceeded, std::nullopt}};
  run.task_details = {cached, retried};
  return run;
}

TEST(Records, ARunInProgressIsCensoredAndParametersAreHashed) {
  auto line = RunLine(SampleRun(), "v1", {{"train", "exec-train"}}, {});
  EXPECT_TRUE(line["censored"]);
  EXPECT_FALSE(line.contains("finished_at"));
  EXPECT_EQ(line["created_at"], "2026-11-20T10:00:00Z");
  EXPECT_EQ(line["parameters"]["lr"], HashedValue(0.1));
  EXPECT_EQ(line["parameters"]["lr"].get<std::string>().rfind("sha256:", 0), 0u);
  EXPECT_EQ(line["parameters"]["db_password"], HashedValue("hunter2"));
  ASSERT_EQ(line["tasks"].size(), 2u);
  EXPECT_TRUE(line["tasks"][0]["cached"]);
  EXPECT_EQ(line["tasks"][0]["attempts"], 0);
  EXPECT_FALSE(line["tasks"][0].contains("executor"));
  EXPECT_EQ(line["tasks"][1]["executor"], "exec-train");
  EXPECT_EQ(line["tasks"][1]["attempts"], 2);
  EXPECT_EQ(line["tasks"][1]["start_time"], "2026-11-20T10:00:02Z");
}

TEST(Records, KeptParametersStillHashCredentials) {
  auto line = RunLine(SampleRun(), "v1", {}, {.keep_parameters = true});
  EXPECT_EQ(line["parameters"]["lr"], 0.1);
  EXPECT_EQ(line["parameters"]["db_password"], HashedValue("hunter2"));
  EXPECT_THAT(line.dump(), Not(HasSubstr("hunter2")));
}

TEST(Records, AVersionKeyIsTheVersionOrTheInlineSpecsHash) {
  kfp::Run run = SampleRun();
  EXPECT_EQ(VersionKey(run), "v1");
  run.pipeline_version_reference_id.clear();
  run.pipeline_spec = {{"pipelineInfo", {{"name", "x"}}}};
  EXPECT_EQ(VersionKey(run).rfind("inline-", 0), 0u);
}

TEST(Records, AMissingVersionSaysSo) {
  auto file = MissingVersionFile("v9", "v9", "p1", "not found");
  EXPECT_TRUE(file["missing"]);
  EXPECT_TRUE(file["spec"].is_null());
}

}  // namespace
}  // namespace kfpbench::capture
