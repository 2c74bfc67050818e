// The v1beta1 subset, as KFP's v1 client uses it.
#include <gmock/gmock.h>

#include "server/test_support.h"

namespace kfpbench::server {
namespace {

using http::Method;
using nlohmann::json;
using ::testing::HasSubstr;
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

// KFP's DeletePipelineV1 never cascades (2.0.5 and 2.17 alike): a pipeline
// that still has versions, as every upload leaves it, is refused; its
// versions are deleted by id first. kfpbench's v1beta1 client does so.
TEST_F(BackendApiTest, V1DeletePipelineRefusesOneWithVersionsAsKfpDoes) {
  auto upload = [&](const std::string& name) {
    auto form = http::BuildMultipart({{"uploadfile", "two.yaml", "", kPipeline}});
    auto up = client_->Send(Method::kPost, "/apis/v1beta1/pipelines/upload?name=" + name, form.body,
                            form.content_type);
    EXPECT_TRUE(up.ok() && up->status == 200);
    return up.ok() ? json::parse(up->body, nullptr, false) : json();
  };
  json pipeline = upload("v1-delete");
  const std::string id = pipeline.value("id", "");
  const std::string version = pipeline["default_version"].value("id", "");
  ASSERT_FALSE(version.empty()) << pipeline;
  auto [refused, refused_body] = Call(Method::kDelete, "/apis/v1beta1/pipelines/" + id);
  EXPECT_EQ(refused, 400);
  EXPECT_THAT(refused_body.value("message", ""),
              HasSubstr("as it has existing pipeline versions (e.g. " + version + ")"));
  EXPECT_EQ(Call(Method::kDelete, "/apis/v1beta1/pipeline_versions/" + version).first, 200);
  EXPECT_EQ(Call(Method::kDelete, "/apis/v1beta1/pipeline_versions/" + version).first, 404);
  EXPECT_EQ(Call(Method::kDelete, "/apis/v1beta1/pipelines/" + id).first, 200);
  EXPECT_EQ(Call(Method::kGet, "/apis/v1beta1/pipelines/" + id).first, 404);

  const std::string second = upload("v1-delete-2").value("id", "");
  kfp::Client v1(*client_, {"", kfp::ApiVersion::kV1beta1}, nullptr);
  Status deleted = v1.DeletePipeline(second, /*cascade=*/true);
  EXPECT_TRUE(deleted.ok()) << deleted.error().message;
  EXPECT_EQ(Call(Method::kGet, "/apis/v1beta1/pipelines/" + second).first, 404);
}

// Each API reads its own Filter message, as KFP's parseAPIFilter does:
// v1beta1's Predicate names the operation `op`, v2beta1's `operation`, and
// protojson refuses the other's as an unknown field. kfpbench's client says a
// filter in the words of the API it speaks: the request the Kubernetes
// tier's KubeClusterKfp.V1beta1FiltersCleanupAndRecurringRuns sends to KFP's
// own API server finds the same pipeline here.
TEST_F(BackendApiTest, V1beta1FiltersNameTheOperationOp) {
  for (const char* name : {"v1f-a", "v1f-b", "other"}) {
    auto form = http::BuildMultipart({{"uploadfile", "two.yaml", "", kPipeline}});
    auto up =
        client_->Send(Method::kPost, std::string("/apis/v1beta1/pipelines/upload?name=") + name,
                      form.body, form.content_type);
    ASSERT_TRUE(up.ok());
    ASSERT_EQ(up->status, 200) << up->body;
  }
  kfp::Client v1(*client_, {"", kfp::ApiVersion::kV1beta1}, nullptr);
  kfp::ListOptions by_name;
  by_name.filter =
      json{{"predicates", {{{"key", "name"}, {"operation", "EQUALS"}, {"string_value", "v1f-a"}}}}}
          .dump();
  auto listed = v1.ListPipelines(by_name);
  ASSERT_TRUE(listed.ok()) << listed.error().message;
  ASSERT_EQ(listed->items.size(), 1u);
  EXPECT_EQ(listed->items[0].name, "v1f-a");
  EXPECT_EQ(listed->total_size, 1);

  auto list = [&](const std::string& api, const std::string& filter, const std::string& more = "") {
    return Call(Method::kGet,
                "/apis/" + api + "/pipelines?" + http::BuildQuery({{"filter", filter}}) + more);
  };
  const std::string with_op =
      R"({"predicates":[{"key":"name","op":"IS_SUBSTRING","string_value":"v1f-"}]})";
  const std::string with_operation =
      R"({"predicates":[{"key":"name","operation":"IS_SUBSTRING","string_value":"v1f-"}]})";
  auto [v1_status, v1_page] = list("v1beta1", with_op);
  EXPECT_EQ(v1_status, 200) << v1_page;
  EXPECT_EQ(v1_page["total_size"], 2);
  auto [v2_status, v2_page] = list("v2beta1", with_operation);
  EXPECT_EQ(v2_status, 200) << v2_page;
  EXPECT_EQ(v2_page["total_size"], 2);
  // The enum by number on either; 0 is each enum's own name, never an operation.
  EXPECT_EQ(list("v1beta1", R"({"predicates":[{"key":"name","op":9,"stringValue":"v1f-"}]})")
                .second["total_size"],
            2);
  EXPECT_EQ(
      list("v1beta1", R"({"predicates":[{"key":"name","op":"UNKNOWN","string_value":"x"}]})").first,
      400);

  // Each API refuses the other's field, and the other's name for 0.
  auto [wrong_v1, wrong_v1_body] = list("v1beta1", with_operation);
  EXPECT_EQ(wrong_v1, 400);
  EXPECT_THAT(wrong_v1_body.value("message", ""), HasSubstr("unknown field \"operation\""));
  auto [wrong_v2, wrong_v2_body] = list("v2beta1", with_op);
  EXPECT_EQ(wrong_v2, 400);
  EXPECT_THAT(wrong_v2_body.value("message", ""), HasSubstr("unknown field \"op\""));
  auto [unspecified, unspecified_body] =
      list("v1beta1",
           R"({"predicates":[{"key":"name","op":"OPERATION_UNSPECIFIED","string_value":"x"}]})");
  EXPECT_EQ(unspecified, 400);
  EXPECT_THAT(unspecified_body.value("message", ""), HasSubstr("invalid value for enum type"));

  // A v1beta1 page token carries its filter in v1beta1's words: the next page
  // is listed on either API, with the same filter in that API's words.
  auto [first_status, first] = list("v1beta1", with_op, "&page_size=1");
  ASSERT_EQ(first_status, 200) << first;
  const std::string token = first.value("next_page_token", "");
  ASSERT_FALSE(token.empty());
  for (const auto& [api, filter] :
       {std::pair<std::string, std::string>{"v1beta1", with_op}, {"v2beta1", with_operation}}) {
    auto [next_status, next] = list(api, filter, "&page_token=" + token);
    EXPECT_EQ(next_status, 200) << api << next;
    EXPECT_EQ(next["pipelines"].size(), 1u) << api << next;
  }
  // Through the client too, page by page.
  kfp::ListOptions paged;
  paged.page_size = 1;
  paged.filter = json::parse(with_operation).dump();
  auto page1 = v1.ListPipelines(paged);
  ASSERT_TRUE(page1.ok()) << page1.error().message;
  ASSERT_FALSE(page1->next_page_token.empty());
  paged.page_token = page1->next_page_token;
  auto page2 = v1.ListPipelines(paged);
  ASSERT_TRUE(page2.ok()) << page2.error().message;
  ASSERT_EQ(page2->items.size(), 1u);
  EXPECT_NE(page2->items[0].pipeline_id, page1->items[0].pipeline_id);
}

}  // namespace
}  // namespace kfpbench::server
