// kfp::Client under --api v1beta1 against a scripted server: v1 paths, v1
// request bodies, and v1 answers read into the v2beta1 model.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <mutex>
#include <vector>

#include "http/server.h"
#include "kfp/client.h"
#include "kfp/v1_model.h"

namespace kfpbench::kfp {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

TEST(V1Model, StatusWordsMapToRunStates) {
  EXPECT_EQ(v1::StateFromStatus(""), RuntimeState::kPending);
  EXPECT_EQ(v1::StateFromStatus("Running"), RuntimeState::kRunning);
  EXPECT_EQ(v1::StateFromStatus("Succeeded"), RuntimeState::kSucceeded);
  EXPECT_EQ(v1::StateFromStatus("Failed"), RuntimeState::kFailed);
  EXPECT_EQ(v1::StateFromStatus("Error"), RuntimeState::kFailed);
  EXPECT_EQ(v1::StateFromStatus("Skipped"), RuntimeState::kSkipped);
  EXPECT_EQ(v1::StateFromStatus("Terminating"), RuntimeState::kCanceling);
  EXPECT_EQ(v1::StateFromStatus("Canceled"), RuntimeState::kCanceled);
  EXPECT_EQ(v1::StateFromStatus("Bogus"), std::nullopt);
}

TEST(V1Model, RunWithReferencesParametersAndWorkflowNodes) {
  json workflow = {{"status",
                    {{"phase", "Succeeded"},
                     {"nodes",
                      {{"wf-1", {{"id", "wf-1"}, {"displayName", "wf"}, {"type", "DAG"}}},
                       {"wf-2",
                        {{"id", "wf-2"},
                         {"displayName", "train"},
                         {"type", "Pod"},
                         {"phase", "Succeeded"},
                         {"startedAt", "2024-01-01T00:00:01Z"},
                         {"finishedAt", "2024-01-01T00:00:05Z"}}}}}}}};
  json answer = {
      {"run",
       {{"id", "r1"},
        {"name", "run one"},
        {"status", "Succeeded"},
        {"created_at", "2024-01-01T00:00:00Z"},
        {"finished_at", "2024-01-01T00:00:06Z"},
        {"scheduled_at", "1970-01-01T00:00:00Z"},
        {"pipeline_spec", {{"parameters", {{{"name", "n"}, {"value", "3"}}}}}},
        {"resource_references",
         {{{"key", {{"type", "EXPERIMENT"}, {"id", "e1"}}}, {"relationship", "OWNER"}},
          {{"key", {{"type", "PIPELINE_VERSION"}, {"id", "v1"}}}, {"relationship", "CREATOR"}}}}}},
      {"pipeline_runtime", {{"workflow_manifest", workflow.dump()}}}};
  auto run = v1::RunDetailFromJson(answer);
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_EQ(run->run_id, "r1");
  EXPECT_EQ(run->display_name, "run one");
  EXPECT_EQ(run->state, RuntimeState::kSucceeded);
  EXPECT_EQ(run->experiment_id, "e1");
  EXPECT_EQ(run->pipeline_version_reference_id, "v1");
  EXPECT_EQ(run->runtime_config.parameters["n"], "3");
  EXPECT_EQ(run->scheduled_at.time_since_epoch().count(), 0);
  ASSERT_EQ(run->task_details.size(), 1u);  // the Pod node only
  EXPECT_EQ(run->task_details[0].display_name, "train");
  EXPECT_EQ(run->task_details[0].pod_name, "wf-2");
  EXPECT_EQ(run->task_details[0].state, RuntimeState::kSucceeded);
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::seconds>(run->task_details[0].end_time -
                                                             run->task_details[0].start_time)
                .count(),
            4);

  json bad = {{"run", {{"id", "r2"}, {"status", "Exploded"}}}};
  auto r2 = v1::RunDetailFromJson(bad);
  ASSERT_FALSE(r2.ok());
  EXPECT_THAT(r2.error().message, HasSubstr("unknown status \"Exploded\""));
  EXPECT_FALSE(v1::RunDetailFromJson(json{{"runs", json::array()}}).ok());
}

TEST(V1Model, RunBodyUsesReferencesAndStringParameters) {
  RunCreate c;
  c.display_name = "x";
  c.experiment_id = "e1";
  c.pipeline_id = "p1";
  c.parameters = {{"n", 3}, {"s", "text"}, {"flag", true}};
  json body = v1::RunBody(c);
  EXPECT_EQ(body["name"], "x");
  EXPECT_EQ(body["pipeline_spec"]["pipeline_id"], "p1");
  ASSERT_EQ(body["resource_references"].size(), 1u);
  EXPECT_EQ(body["resource_references"][0]["key"]["type"], "EXPERIMENT");
  EXPECT_EQ(body["resource_references"][0]["relationship"], "OWNER");
  for (const auto& p : body["pipeline_spec"]["parameters"]) {
    EXPECT_TRUE(p["value"].is_string()) << p;
    if (p["name"] == "n") {
      EXPECT_EQ(p["value"], "3");
    } else if (p["name"] == "s") {
      EXPECT_EQ(p["value"], "text");
    } else {
      EXPECT_EQ(p["value"], "true");
    }
  }
}

// kfpbench's callers write filters in v2beta1's words; v1beta1's Predicate
// names the operation `op`, and KFP refuses `operation` there (issue 41).
TEST(V1Model, FiltersSayTheOperationInV1beta1sWords) {
  EXPECT_EQ(json::parse(v1::FilterFromV2(
                R"({"predicates":[{"key":"name","operation":"EQUALS","string_value":"a"},)"
                R"({"key":"state","operation":8,"stringValues":{"values":["x"]}}]})")),
            json::parse(R"({"predicates":[{"key":"name","op":"EQUALS","string_value":"a"},)"
                        R"({"key":"state","op":8,"stringValues":{"values":["x"]}}]})"));
  // Enum 0 has another name in v1beta1's Op.
  EXPECT_EQ(json::parse(v1::FilterFromV2(
                R"({"predicates":[{"key":"k","operation":"OPERATION_UNSPECIFIED"}]})")),
            json::parse(R"({"predicates":[{"key":"k","op":"UNKNOWN"}]})"));
  // What is no filter goes as it is; a predicate that says both, too: the
  // server refuses either.
  for (const char* as_is : {"{", "[]", R"({"predicates":3})"}) {
    EXPECT_EQ(v1::FilterFromV2(as_is), as_is);
  }
  const char* both = R"({"predicates":[{"key":"k","op":1,"operation":1}]})";
  EXPECT_EQ(json::parse(v1::FilterFromV2(both)), json::parse(both));
}

TEST(V1Client, SendsV1PathsAndQueries) {
  std::mutex mu;
  std::vector<std::string> targets;
  http::ServerOptions so;
  so.handler = [&](const http::Request& r) {
    {
      std::lock_guard lock(mu);
      std::string line(http::MethodName(r.method));
      line += ' ';
      line += r.target;
      targets.push_back(std::move(line));
    }
    if (r.path == "/apis/v1beta1/pipeline_versions") {
      return http::Response::Json(
          200,
          R"({"versions":[{"id":"v9","name":"ver","resource_references":[{"key":{"type":"PIPELINE","id":"p1"},"relationship":"OWNER"}]}],"total_size":1})");
    }
    if (r.path == "/apis/v1beta1/runs") {
      return http::Response::Json(200, R"({"runs":[{"id":"r1","status":""}],"total_size":1})");
    }
    return http::Response::Json(200, "{}");
  };
  http::Server server(std::move(so));
  ASSERT_TRUE(server.Start().ok());
  http::ClientOptions co;
  co.base.scheme = "http";
  co.base.host = "127.0.0.1";
  co.base.port = server.port();
  http::Client http(co);
  Client client(http, {"team-a", ApiVersion::kV1beta1}, nullptr);

  ListOptions page;
  page.page_size = 5;
  auto versions = client.ListPipelineVersions("p1", page);
  ASSERT_TRUE(versions.ok()) << versions.error().message;
  ASSERT_EQ(versions->items.size(), 1u);
  EXPECT_EQ(versions->items[0].pipeline_version_id, "v9");
  EXPECT_EQ(versions->items[0].pipeline_id, "p1");
  ListOptions by_experiment;
  by_experiment.experiment_id = "e1";
  by_experiment.filter =
      R"({"predicates":[{"key":"name","operation":"EQUALS","string_value":"r"}]})";
  auto runs = client.ListRuns(by_experiment);
  ASSERT_TRUE(runs.ok()) << runs.error().message;
  EXPECT_EQ(runs->items[0].state, RuntimeState::kPending);
  ASSERT_TRUE(client.ListExperiments({}).ok());
  ASSERT_TRUE(client.DeletePipeline("p1", true).ok());
  auto recurring = client.CreateRecurringRun({});
  ASSERT_FALSE(recurring.ok());
  EXPECT_THAT(recurring.error().message, HasSubstr("v2beta1"));

  std::lock_guard lock(mu);
  ASSERT_EQ(targets.size(), 4u);
  EXPECT_EQ(targets[0],
            "GET /apis/v1beta1/pipeline_versions?page_size=5&resource_key.id=p1&"
            "resource_key.type=PIPELINE");
  EXPECT_EQ(
      targets[1],
      "GET "
      "/apis/v1beta1/runs?filter=%7B%22predicates%22%3A%5B%7B%22key%22%3A%22name%22%2C%22op%22%3A%"
      "22EQUALS%22%2C%22string_value%22%3A%22r%22%7D%5D%7D&resource_reference_key.id=e1&"
      "resource_reference_key.type=EXPERIMENT");
  EXPECT_EQ(targets[2],
            "GET /apis/v1beta1/experiments?resource_reference_key.id=team-a&"
            "resource_reference_key.type=NAMESPACE");
  EXPECT_EQ(targets[3], "DELETE /apis/v1beta1/pipelines/p1");
  server.Stop();
}

}  // namespace
}  // namespace kfpbench::kfp
