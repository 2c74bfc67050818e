#include "kfp/model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kfpbench::kfp {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

TEST(Model, RunRoundTripsInProtoJsonForm) {
  kfp::Run run;
  run.run_id = "r1";
  run.display_name = "bench";
  run.pipeline_id = "p1";
  run.pipeline_version_reference_id = "v1";
  run.runtime_config.parameters = {{"a", 1}};
  run.created_at = WallTime(std::chrono::seconds(1700000000));
  run.state = RuntimeState::kRunning;
  run.state_history.push_back({run.created_at, RuntimeState::kPending, std::nullopt});
  PipelineTaskDetail task;
  task.task_id = "t1";
  task.execution_id = 42;
  task.state = RuntimeState::kSucceeded;
  run.task_details.push_back(task);
  json j = ToJson(run);
  EXPECT_EQ(j["state"], "RUNNING");
  EXPECT_EQ(j["created_at"], "2023-11-14T22:13:20Z");
  EXPECT_EQ(j["pipeline_version_reference"]["pipeline_version_id"], "v1");
  EXPECT_EQ(j["run_details"]["task_details"][0]["execution_id"], "42");  // int64 as string
  EXPECT_FALSE(j.contains("finished_at"));                               // unset fields are omitted
  EXPECT_FALSE(j.contains("description"));
  auto back = RunFromJson(j, true);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(ToJson(*back), j);
}

TEST(Model, StrictReadingRejectsUnknownFieldsWithTheirPath) {
  auto r = RunFromJson(json{{"display_name", "x"}, {"bogus", 1}}, true);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "unknown field \"bogus\"");
  EXPECT_EQ(r.error().code, 400);
  auto nested = RunFromJson(json{{"runtime_config", {{"parameterz", {}}}}}, true);
  ASSERT_FALSE(nested.ok());
  EXPECT_EQ(nested.error().message, "unknown field \"runtime_config.parameterz\"");
  EXPECT_TRUE(RunFromJson(json{{"bogus", 1}}, false).ok());
}

TEST(Model, TypeErrorsNameTheField) {
  auto r = RunFromJson(json{{"display_name", 5}}, true);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "display_name: must be a string");
  auto t = RunFromJson(json{{"created_at", "yesterday"}}, true);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.error().message, HasSubstr("created_at"));
  auto s = RunFromJson(json{{"state", "DANCING"}}, true);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr("DANCING"));
  EXPECT_FALSE(RunFromJson(json::array(), true).ok());
}

// grpc-gateway reads bodies with protojson: JSON (lowerCamelCase) names beside
// proto names at every depth, enums by number, never one field twice.
// KFP 2.0.5 answers a running task's end_time as Go's zero time: unset, not
// an error (it failed every ListRuns of a run in flight). Other times before
// 1678 are still refused.
TEST(Model, GoZeroTimeReadsAsUnset) {
  auto run = RunFromJson(json::parse(R"({"run_id":"r","finished_at":"0001-01-01T00:00:00Z",
      "run_details":{"task_details":[{"task_id":"t","start_time":"2026-11-29T05:51:50Z",
      "end_time":"0001-01-01T00:00:00Z"}]}})"),
                         true);
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_EQ(run->finished_at, WallTime{});
  ASSERT_EQ(run->task_details.size(), 1u);
  EXPECT_EQ(run->task_details[0].end_time, WallTime{});
  EXPECT_EQ(run->task_details[0].start_time, WallTime(std::chrono::seconds(1795931510)));
  auto old = RunFromJson(json{{"finished_at", "1500-01-01T00:00:00Z"}}, true);
  ASSERT_FALSE(old.ok());
  EXPECT_THAT(old.error().message, HasSubstr("finished_at")) << old.error().message;
  EXPECT_FALSE(RunFromJson(json{{"finished_at", 5}}, true).ok());
}

TEST(Model, StrictReadingTakesJsonNamesAndEnumNumbers) {
  auto run = RunFromJson(json::parse(R"({"displayName":"r","storageState":2,
      "pipelineVersionReference":{"pipelineId":"p1","pipelineVersionId":"v1"},
      "runtimeConfig":{"pipelineRoot":"/tmp/root","parameters":{"snake_key":1}}})"),
                         true);
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_EQ(run->display_name, "r");
  EXPECT_EQ(run->storage_state, "ARCHIVED");
  EXPECT_EQ(run->pipeline_id, "p1");
  EXPECT_EQ(run->pipeline_version_reference_id, "v1");
  EXPECT_EQ(run->runtime_config.pipeline_root, "/tmp/root");
  // Map keys are data, not field names.
  EXPECT_EQ(run->runtime_config.parameters, json({{"snake_key", 1}}));

  auto twice = RunFromJson(json{{"display_name", "a"}, {"displayName", "b"}}, true);
  ASSERT_FALSE(twice.ok());
  EXPECT_THAT(twice.error().message, HasSubstr("duplicate field"));

  // RecurringRun.Status numbers DISABLED 3; 2 is not a value.
  auto rr = RecurringRunFromJson(json{{"status", 3}, {"mode", "DISABLE"}}, true);
  ASSERT_TRUE(rr.ok()) << rr.error().message;
  EXPECT_EQ(rr->status, "DISABLED");
  EXPECT_FALSE(RecurringRunFromJson(json{{"status", 2}}, true).ok());
  EXPECT_FALSE(RecurringRunFromJson(json{{"mode", "SOMETIMES"}}, true).ok());
  // The zero value is the field left unset.
  EXPECT_EQ(RecurringRunFromJson(json{{"mode", 0}}, true)->mode, "");
}

}  // namespace
}  // namespace kfpbench::kfp
