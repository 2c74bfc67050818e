#include "http/router.h"

#include <gtest/gtest.h>

namespace kfpbench::http {
namespace {

// Each handler answers with its own label so a test can see which one matched.
RouteHandler Named(std::string label) {
  return [label](const Request&, const PathParams&) { return Response::Text(200, label); };
}

std::string Call(const Router::Match& m) {
  if (m.handler == nullptr) return m.path_matched ? "405" : "404";
  return (*m.handler)(Request{}, m.params).body;
}

class RouterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    r.Add(Method::kGet, "/apis/v2beta1/runs", Named("ListRuns"), "ListRuns");
    r.Add(Method::kPost, "/apis/v2beta1/runs", Named("CreateRun"), "CreateRun");
    r.Add(Method::kGet, "/apis/v2beta1/runs/{run_id}", Named("GetRun"), "GetRun");
    r.Add(Method::kDelete, "/apis/v2beta1/runs/{run_id}", Named("DeleteRun"));
    r.Add(Method::kPost, "/apis/v2beta1/runs/{run_id}:archive", Named("ArchiveRun"));
    r.Add(Method::kPost, "/apis/v2beta1/runs/{run_id}:unarchive", Named("UnarchiveRun"));
    r.Add(Method::kGet, "/apis/v2beta1/runs/special", Named("Special"));
    r.Add(Method::kGet, "/apis/v2beta1/pipelines/{pipeline_id}/versions/{pipeline_version_id}",
          Named("GetVersion"));
    r.Add(Method::kGet, "/apis/v2beta1/pipelines/names/{name}", Named("GetByName"));
    r.Add(Method::kGet, "/", Named("Root"));
  }
  Router r;
};

TEST_F(RouterTest, LiteralAndParams) {
  auto m = r.Find(Method::kGet, "/apis/v2beta1/runs");
  EXPECT_EQ(Call(m), "ListRuns");
  ASSERT_NE(m.name, nullptr);
  EXPECT_EQ(*m.name, "ListRuns");
  EXPECT_TRUE(m.params.empty());

  m = r.Find(Method::kGet, "/apis/v2beta1/runs/abc-123");
  EXPECT_EQ(Call(m), "GetRun");
  EXPECT_EQ(m.params.at("run_id"), "abc-123");

  m = r.Find(Method::kGet, "/apis/v2beta1/pipelines/p1/versions/v2");
  EXPECT_EQ(Call(m), "GetVersion");
  EXPECT_EQ(m.params.at("pipeline_id"), "p1");
  EXPECT_EQ(m.params.at("pipeline_version_id"), "v2");

  EXPECT_EQ(Call(r.Find(Method::kGet, "/")), "Root");
}

TEST_F(RouterTest, DefaultNameIsThePattern) {
  auto m = r.Find(Method::kDelete, "/apis/v2beta1/runs/x");
  ASSERT_NE(m.name, nullptr);
  EXPECT_EQ(*m.name, "/apis/v2beta1/runs/{run_id}");
}

TEST_F(RouterTest, LiteralBeatsParam) {
  EXPECT_EQ(Call(r.Find(Method::kGet, "/apis/v2beta1/runs/special")), "Special");
  // "names" is literal in one route and a parameter value in another.
  auto m = r.Find(Method::kGet, "/apis/v2beta1/pipelines/names/versions/v");
  EXPECT_EQ(Call(m), "GetVersion");
  m = r.Find(Method::kGet, "/apis/v2beta1/pipelines/names/foo");
  EXPECT_EQ(Call(m), "GetByName");
  EXPECT_EQ(m.params.at("name"), "foo");
}

TEST_F(RouterTest, CustomVerbs) {
  auto m = r.Find(Method::kPost, "/apis/v2beta1/runs/abc:archive");
  EXPECT_EQ(Call(m), "ArchiveRun");
  EXPECT_EQ(m.params.at("run_id"), "abc");
  m = r.Find(Method::kPost, "/apis/v2beta1/runs/abc:unarchive");
  EXPECT_EQ(Call(m), "UnarchiveRun");
  EXPECT_EQ(m.params.at("run_id"), "abc");
  // An unknown verb matches nothing, not "{run_id}".
  EXPECT_EQ(Call(r.Find(Method::kPost, "/apis/v2beta1/runs/abc:retry")), "404");
  EXPECT_EQ(Call(r.Find(Method::kGet, "/apis/v2beta1/runs/abc:retry")), "404");
  // A verb route needs a non-empty id.
  EXPECT_EQ(Call(r.Find(Method::kPost, "/apis/v2beta1/runs/:archive")), "404");
  // A plain "{run_id}" never swallows a verb segment.
  EXPECT_EQ(Call(r.Find(Method::kGet, "/apis/v2beta1/runs/abc:archive")), "405");
}

TEST_F(RouterTest, MethodMismatchIs405AndUnknownIs404) {
  auto m = r.Find(Method::kPut, "/apis/v2beta1/runs");
  EXPECT_EQ(m.handler, nullptr);
  EXPECT_TRUE(m.path_matched);
  m = r.Find(Method::kGet, "/apis/v2beta1/runs/abc:archive");
  EXPECT_TRUE(m.path_matched);
  m = r.Find(Method::kGet, "/apis/v2beta1/nothing");
  EXPECT_EQ(m.handler, nullptr);
  EXPECT_FALSE(m.path_matched);
}

TEST_F(RouterTest, MethodFiltersBeforeSpecificity) {
  // The literal "special" route is GET-only; DELETE falls back to "{run_id}".
  auto m = r.Find(Method::kDelete, "/apis/v2beta1/runs/special");
  EXPECT_EQ(Call(m), "DeleteRun");
  EXPECT_EQ(m.params.at("run_id"), "special");
}

TEST_F(RouterTest, EmptySegmentsAndTrailingSlashesDoNotMatch) {
  EXPECT_EQ(Call(r.Find(Method::kGet, "/apis/v2beta1/runs/")), "404");
  EXPECT_EQ(Call(r.Find(Method::kGet, "/apis//runs")), "404");
  EXPECT_EQ(Call(r.Find(Method::kGet, "/apis/v2beta1/runs/a/b")), "404");
  EXPECT_EQ(Call(r.Find(Method::kGet, "")), "Root");
}

TEST(Router, EmptyRouterFindsNothing) {
  Router r;
  auto m = r.Find(Method::kGet, "/x");
  EXPECT_EQ(m.handler, nullptr);
  EXPECT_FALSE(m.path_matched);
}

}  // namespace
}  // namespace kfpbench::http
