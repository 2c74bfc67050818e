// The API handlers through real HTTP on a loopback port, with the stub executor.
#include "server/test_support.h"

namespace kfpbench::server {
namespace {

using nlohmann::json;
using testing::BackendApiTest;
using testing::kPipeline;

TEST_F(BackendApiTest, HealthzAnswers) {
  auto [status, body] = Call(http::Method::kGet, "/apis/v2beta1/healthz");
  EXPECT_EQ(status, 200);
  EXPECT_EQ(body["pipeline_store"], "database");
}

TEST_F(BackendApiTest, UploadListGetPipelineAndVersions) {
  json p = Upload("two-steps", kPipeline);
  std::string id = p["pipeline_id"];
  EXPECT_EQ(p["name"], "two-steps");
  EXPECT_TRUE(p.contains("created_at"));
  auto [ls, list] = Call(http::Method::kGet, "/apis/v2beta1/pipelines");
  EXPECT_EQ(ls, 200);
  EXPECT_EQ(list["total_size"], 1);
  EXPECT_EQ(list["pipelines"][0]["pipeline_id"], id);
  auto [vs, versions] = Call(http::Method::kGet, "/apis/v2beta1/pipelines/" + id + "/versions");
  EXPECT_EQ(vs, 200);
  ASSERT_EQ(versions["pipeline_versions"].size(), 1u);
  std::string vid = versions["pipeline_versions"][0]["pipeline_version_id"];
  auto [gs, version] =
      Call(http::Method::kGet, "/apis/v2beta1/pipelines/" + id + "/versions/" + vid);
  EXPECT_EQ(gs, 200);
  EXPECT_EQ(version["pipeline_spec"]["pipelineInfo"]["name"], "two-steps");
  // Same name again: 409 in KFP's error shape.
  auto form = http::BuildMultipart({{"uploadfile", "x.yaml", "", kPipeline}});
  auto again = client_->Send(http::Method::kPost, "/apis/v2beta1/pipelines/upload?name=two-steps",
                             form.body, form.content_type);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->status, 409);
  json err = json::parse(again->body);
  EXPECT_EQ(err["code"], 6);  // ALREADY_EXISTS
  EXPECT_TRUE(err["details"].is_array());
  // Delete needs cascade while versions exist.
  EXPECT_EQ(Call(http::Method::kDelete, "/apis/v2beta1/pipelines/" + id).first, 400);
  EXPECT_EQ(Call(http::Method::kDelete, "/apis/v2beta1/pipelines/" + id + "?cascade=true").first,
            200);
  EXPECT_EQ(Call(http::Method::kGet, "/apis/v2beta1/pipelines/" + id).first, 404);
}

TEST_F(BackendApiTest, ExperimentsLifecycle) {
  auto [cs, e] = Call(http::Method::kPost, "/apis/v2beta1/experiments",
                      R"({"display_name": "bench", "description": "d"})");
  ASSERT_EQ(cs, 200) << e;
  std::string id = e["experiment_id"];
  EXPECT_EQ(e["storage_state"], "AVAILABLE");
  auto [ls, list] = Call(http::Method::kGet, "/apis/v2beta1/experiments?sort_by=created_at%20desc");
  EXPECT_EQ(ls, 200);
  EXPECT_EQ(list["total_size"], 2);  // ours and "Default"
  EXPECT_EQ(list["experiments"][0]["experiment_id"], id);
  EXPECT_EQ(Call(http::Method::kGet, "/apis/v2beta1/experiments/" + id).first, 200);
  EXPECT_EQ(
      Call(http::Method::kPost, "/apis/v2beta1/experiments", R"({"display_name": "bench"})").first,
      409);
  EXPECT_EQ(Call(http::Method::kDelete, "/apis/v2beta1/experiments/" + id).first, 200);
  EXPECT_EQ(Call(http::Method::kGet, "/apis/v2beta1/experiments/" + id).first, 404);
}

TEST_F(BackendApiTest, RunFromVersionReferenceSucceedsWithTaskDetails) {
  json p = Upload("two-steps", kPipeline);
  json body = {{"display_name", "r1"},
               {"pipeline_version_reference", {{"pipeline_id", p["pipeline_id"]}}},
               {"runtime_config", {{"parameters", {{"message", "hi"}}}}}};
  auto [cs, created] = Call(http::Method::kPost, "/apis/v2beta1/runs", body.dump());
  ASSERT_EQ(cs, 200) << created;
  EXPECT_EQ(created["state"], "PENDING");
  EXPECT_FALSE(created["experiment_id"].get<std::string>().empty());  // the Default experiment
  json run = WaitForRun(created["run_id"]);
  ASSERT_EQ(run["state"], "SUCCEEDED") << run.dump(2);
  EXPECT_TRUE(run.contains("finished_at"));
  ASSERT_TRUE(run["run_details"]["task_details"].is_array());
  bool saw_consume = false;
  for (const auto& t : run["run_details"]["task_details"]) {
    EXPECT_TRUE(t.contains("create_time"));
    EXPECT_TRUE(t.contains("state_history"));
    // Task inputs and outputs are KFP ArtifactList maps, never parameter values.
    for (const char* io : {"inputs", "outputs"}) {
      if (!t.contains(io)) continue;
      for (const auto& [name, list] : t[io].items()) {
        EXPECT_TRUE(list.contains("artifact_ids")) << name << ": " << list;
      }
    }
    if (t["display_name"] == "consume") {
      saw_consume = true;
      EXPECT_EQ(t["state"], "SUCCEEDED");
      EXPECT_TRUE(t.contains("start_time"));
      EXPECT_TRUE(t.contains("end_time"));
    }
  }
  EXPECT_TRUE(saw_consume);
  std::vector<std::string> states;
  for (const auto& h : run["state_history"]) states.push_back(h["state"]);
  EXPECT_EQ(states.front(), "PENDING");
  EXPECT_EQ(states.back(), "SUCCEEDED");

  json filter = {
      {"predicates", {{{"key", "state"}, {"operation", "EQUALS"}, {"string_value", "SUCCEEDED"}}}}};
  auto [ls, list] =
      Call(http::Method::kGet, "/apis/v2beta1/runs?filter=" + http::PercentEncode(filter.dump()));
  EXPECT_EQ(ls, 200);
  EXPECT_EQ(list["total_size"], 1);
  EXPECT_EQ(
      Call(http::Method::kDelete, "/apis/v2beta1/runs/" + run["run_id"].get<std::string>()).first,
      200);
  EXPECT_EQ(
      Call(http::Method::kGet, "/apis/v2beta1/runs/" + run["run_id"].get<std::string>()).first,
      404);
}

TEST_F(BackendApiTest, RunFromInlineSpec) {
  json p = Upload("two-steps", kPipeline);
  auto [vs, versions] =
      Call(http::Method::kGet,
           "/apis/v2beta1/pipelines/" + p["pipeline_id"].get<std::string>() + "/versions");
  json spec = versions["pipeline_versions"][0]["pipeline_spec"];
  json body = {{"display_name", "inline"}, {"pipeline_spec", spec}};
  auto [cs, created] = Call(http::Method::kPost, "/apis/v2beta1/runs", body.dump());
  ASSERT_EQ(cs, 200) << created;
  EXPECT_EQ(WaitForRun(created["run_id"])["state"], "SUCCEEDED");
}

TEST_F(BackendApiTest, BadRequestsGetClearFourHundreds) {
  json p = Upload("two-steps", kPipeline);
  struct Case {
    http::Method method;
    std::string target;
    std::string body;
    int status;
    std::string fragment;
  };
  std::string pid = p["pipeline_id"];
  std::vector<Case> cases = {
      {http::Method::kPost, "/apis/v2beta1/runs", "{not json", 400, "not valid JSON"},
      {http::Method::kPost, "/apis/v2beta1/runs", R"({"display_name":"x","colour":"red"})", 400,
       "unknown field \"colour\""},
      {http::Method::kPost, "/apis/v2beta1/runs", R"({"pipeline_spec":{}})", 400, "display_name"},
      {http::Method::kPost, "/apis/v2beta1/runs", R"({"display_name":"x"})", 400,
       "pipeline_version_reference"},
      {http::Method::kPost, "/apis/v2beta1/runs",
       R"({"display_name":"x","pipeline_version_reference":{"pipeline_id":"nope"}})", 404, "nope"},
      {http::Method::kPost, "/apis/v2beta1/runs",
       R"({"display_name":"x","experiment_id":"nope","pipeline_version_reference":{"pipeline_id":")" +
           pid + R"("}})",
       404, "experiment nope"},
      {http::Method::kPost, "/apis/v2beta1/runs",
       R"({"display_name":"x","pipeline_spec":{"pipelineInfo":{"name":"x"}}})", 400,
       "pipeline_spec"},
      {http::Method::kGet, "/apis/v2beta1/runs?page_size=-1", "", 400, "page_size"},
      {http::Method::kGet, "/apis/v2beta1/runs?filter=%7Bbad", "", 400, "filter"},
      {http::Method::kGet, "/apis/v2beta1/runs?sort_by=colour", "", 400, "colour"},
      {http::Method::kGet, "/apis/v2beta1/runs/does-not-exist", "", 404, "does-not-exist"},
      {http::Method::kGet, "/apis/v2beta1/nothing", "", 404, "no API"},
      {http::Method::kPut, "/apis/v2beta1/runs", "", 405, "not allowed"},
      {http::Method::kPost, "/apis/v2beta1/experiments", R"({"description":"no name"})", 400,
       "display_name"},
  };
  for (const auto& c : cases) {
    auto [status, body] = Call(c.method, c.target, c.body);
    EXPECT_EQ(status, c.status) << c.target << " " << c.body << " -> " << body;
    ASSERT_TRUE(body.is_object()) << c.target;
    EXPECT_NE(body.value("message", "").find(c.fragment), std::string::npos)
        << c.target << " " << c.body << " -> " << body;
    EXPECT_TRUE(body.contains("code"));
  }
  // Uploads: no uploadfile field, and a file that is not a pipeline.
  auto form = http::BuildMultipart({{"file", "x.yaml", "", kPipeline}});
  auto r = client_->Send(http::Method::kPost, "/apis/v2beta1/pipelines/upload", form.body,
                         form.content_type);
  EXPECT_EQ(r->status, 400);
  form = http::BuildMultipart({{"uploadfile", "x.yaml", "", "key: [unclosed"}});
  r = client_->Send(http::Method::kPost, "/apis/v2beta1/pipelines/upload", form.body,
                    form.content_type);
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("x.yaml"), std::string::npos) << r->body;
}

TEST_F(BackendApiTest, MissingRequiredParameterIsRefusedAtCreate) {
  std::string spec = kPipeline;
  // Drop the default so that "message" becomes required.
  spec.replace(spec.find("        defaultValue: hello\n"), 27, "");
  json p = Upload("needs-message", spec);
  json body = {{"display_name", "r"},
               {"pipeline_version_reference", {{"pipeline_id", p["pipeline_id"]}}}};
  auto [status, err] = Call(http::Method::kPost, "/apis/v2beta1/runs", body.dump());
  EXPECT_EQ(status, 400) << err;
  EXPECT_NE(err.value("message", "").find("message"), std::string::npos) << err;
}

}  // namespace
}  // namespace kfpbench::server
