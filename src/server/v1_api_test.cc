// The v1beta1 subset, as KFP's v1 client uses it.
#include "server/test_support.h"

namespace kfpbench::server {
namespace {

using http::Method;
using nlohmann::json;
using namespace testing;  // the part's test helpers

TEST_F(BackendApiTest, V1UploadExperimentRunFlow) {
  auto form = http::BuildMultipart({{"uploadfile", "two.yaml", "", kPipeline}});
  auto up = client_->Send(Method::kPost, "/apis/v1beta1/pipelines/upload?name=v1-two", form.body,
                          form.content_type);
  ASSERT_TRUE(up.ok());
  ASSERT_EQ(up->status, 200) << up->body;
  json pipeline = json::parse(up->body);
  EXPECT_EQ(pipeline["name"], "v1-two");
  ASSERT_TRUE(pipeline.contains("id"));
  std::string version_id = pipeline["default_version"]["id"];
  EXPECT_EQ(pipeline["parameters"][0]["name"], "message");
  EXPECT_EQ(pipeline["parameters"][0]["value"], "hello");

  auto [ls, pipelines] = Call(Method::kGet, "/apis/v1beta1/pipelines");
  EXPECT_EQ(ls, 200);
  EXPECT_EQ(pipelines["pipelines"][0]["id"], pipeline["id"]);
  EXPECT_EQ(pipelines["pipelines"][0]["default_version"]["id"], version_id);

  auto [es, experiment] =
      Call(Method::kPost, "/apis/v1beta1/experiments", R"({"name": "v1-exp", "description": "d"})");
  ASSERT_EQ(es, 200) << experiment;
  EXPECT_EQ(experiment["name"], "v1-exp");
  EXPECT_EQ(experiment["storage_state"], "STORAGESTATE_AVAILABLE");
  std::string eid = experiment["id"];

  json body = {{"name", "v1-run"},
               {"pipeline_spec", {{"parameters", {{{"name", "message"}, {"value", "from v1"}}}}}},
               {"resource_references",
                {{{"key", {{"type", "EXPERIMENT"}, {"id", eid}}}, {"relationship", "OWNER"}},
                 {{"key", {{"type", "PIPELINE_VERSION"}, {"id", version_id}}},
                  {"relationship", "CREATOR"}}}}};
  auto [cs, created] = Call(Method::kPost, "/apis/v1beta1/runs", body.dump());
  ASSERT_EQ(cs, 200) << created;
  ASSERT_TRUE(created.contains("run"));
  EXPECT_TRUE(created.contains("pipeline_runtime"));
  std::string rid = created["run"]["id"];
  EXPECT_EQ(created["run"]["name"], "v1-run");
  EXPECT_EQ(created["run"]["status"], "Pending");

  json done;
  for (int i = 0; i < 300; ++i) {
    done = Call(Method::kGet, "/apis/v1beta1/runs/" + rid).second;
    if (done["run"].value("status", "") == "Succeeded") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(done["run"]["status"], "Succeeded") << done.dump(2);
  EXPECT_TRUE(done["run"].contains("finished_at"));
  EXPECT_EQ(done["run"]["pipeline_spec"]["parameters"][0]["value"], "from v1");
  bool owner = false;
  for (const auto& ref : done["run"]["resource_references"]) {
    if (ref["key"]["type"] == "EXPERIMENT" && ref["key"]["id"] == eid) owner = true;
  }
  EXPECT_TRUE(owner);
  json manifest = json::parse(done["pipeline_runtime"]["workflow_manifest"].get<std::string>());
  EXPECT_EQ(manifest["status"]["phase"], "Succeeded");
  // The v2 API sees the same run, with the parameter typed by the pipeline.
  EXPECT_EQ(Call(Method::kGet, "/apis/v2beta1/runs/" + rid).second["state"], "SUCCEEDED");

  auto [rs, runs] = Call(
      Method::kGet,
      "/apis/v1beta1/runs?resource_reference_key.type=EXPERIMENT&resource_reference_key.id=" + eid);
  EXPECT_EQ(rs, 200);
  ASSERT_EQ(runs["runs"].size(), 1u);
  EXPECT_EQ(runs["runs"][0]["id"], rid);
  EXPECT_EQ(Call(Method::kDelete, "/apis/v1beta1/runs/" + rid).first, 200);
  EXPECT_EQ(Call(Method::kGet, "/apis/v1beta1/runs/" + rid).first, 404);

  // v1 mistakes are 400s too.
  EXPECT_EQ(Call(Method::kPost, "/apis/v1beta1/runs", R"({"name": "x", "colour": 1})").first, 400);
  EXPECT_EQ(Call(Method::kPost, "/apis/v1beta1/runs",
                 R"({"name": "x", "resource_references": [{"key": {"type": "JOB", "id": "j"}}]})")
                .first,
            400);
}

}  // namespace
}  // namespace kfpbench::server
