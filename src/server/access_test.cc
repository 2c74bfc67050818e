// Multi-user mode and bearer tokens, endpoint by endpoint: every route the
// backend answers is sent without credentials, with wrong ones, by a user of
// another namespace and by the namespace's own user. The routes come from the
// router itself, so a new endpoint is covered (and must have a rule) at once.
#include "server/access.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "http/multipart.h"
#include "http/url.h"
#include "server/backend.h"
#include "server/spelling_test_cases.h"
#include "server/test_support.h"

namespace kfpbench::server {
namespace {

using http::Method;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kProxyToken = "proxy-token-0123456789abcdef";
constexpr const char* kBobToken = "bob-own-token-0123456789abcdef";

// The resources one route's request reaches, all in team-a.
struct Fixture {
  std::string pipeline, version, pipeline_name, experiment, run, recurring_run;
};

class AccessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BackendOptions o;
    o.executor = "stub";
    o.stub_durations = {"constant:1h"};
    o.auth.tokens = {{DigestOf(kProxyToken), ""}, {DigestOf(kBobToken), "bob"}};
    o.auth.multi_user = true;
    o.auth.policy = {{"alice", {"team-a"}}, {"bob", {"team-b"}}, {"admin", {"kubeflow"}}};
    auto b = Backend::Create(o);
    ASSERT_TRUE(b.ok()) << b.error().message;
    backend_ = std::move(*b);
  }

  // A request as the HTTP server hands it to the backend.
  static http::Request Make(Method method, const std::string& target, std::string body = "",
                            std::string content_type = "application/json") {
    http::Request r;
    r.method = method;
    r.target = target;
    size_t q = target.find('?');
    r.path = *http::PercentDecode(target.substr(0, q), false);
    if (q != std::string::npos) r.query = *http::ParseQuery(target.substr(q + 1));
    if (!body.empty()) r.headers.Set("Content-Type", content_type);
    r.body = std::move(body);
    return r;
  }

  static http::Request Upload(const std::string& target) {
    auto form = http::BuildMultipart(
        {{"uploadfile", "p.yaml", "application/octet-stream", testing::kPipeline}});
    return Make(Method::kPost, target, form.body, form.content_type);
  }

  // As `user`, through the proxy (its token and the user header); empty: no
  // user header.
  std::pair<int, json> As(const std::string& user, http::Request r,
                          const char* token = kProxyToken) {
    if (token) r.headers.Set("Authorization", std::string("Bearer ") + token);
    if (!user.empty()) r.headers.Set("kubeflow-userid", user);
    http::Response answer = backend_->Handle(r);
    return {answer.status, json::parse(answer.body, nullptr, false)};
  }

  // Fresh resources in team-a, each time: the routes delete what they reach.
  Fixture MakeFixture() {
    Fixture f;
    int n = ++fixtures_;
    f.pipeline_name = "p" + std::to_string(n);
    auto [s1, p] = As(
        "alice", Upload("/apis/v2beta1/pipelines/upload?namespace=team-a&name=" + f.pipeline_name));
    EXPECT_EQ(s1, 200) << p;
    f.pipeline = p.value("pipeline_id", "");
    auto [s2, versions] =
        As("alice", Make(Method::kGet, "/apis/v2beta1/pipelines/" + f.pipeline + "/versions"));
    EXPECT_EQ(s2, 200) << versions;
    f.version = versions["pipeline_versions"][0].value("pipeline_version_id", "");
    json e = {{"display_name", "e" + std::to_string(n)}, {"namespace", "team-a"}};
    auto [s3, experiment] = As("alice", Make(Method::kPost, "/apis/v2beta1/experiments", e.dump()));
    EXPECT_EQ(s3, 200) << experiment;
    f.experiment = experiment.value("experiment_id", "");
    json run = {{"display_name", "r"},
                {"experiment_id", f.experiment},
                {"pipeline_version_reference", {{"pipeline_id", f.pipeline}}}};
    auto [s4, r] = As("alice", Make(Method::kPost, "/apis/v2beta1/runs", run.dump()));
    EXPECT_EQ(s4, 200) << r;
    f.run = r.value("run_id", "");
    json rr = {{"display_name", "rr"},
               {"experiment_id", f.experiment},
               {"mode", "DISABLE"},
               {"trigger", {{"periodic_schedule", {{"interval_second", 3600}}}}},
               {"pipeline_version_reference", {{"pipeline_id", f.pipeline}}}};
    auto [s5, recurring] =
        As("alice", Make(Method::kPost, "/apis/v2beta1/recurringruns", rr.dump()));
    EXPECT_EQ(s5, 200) << recurring;
    f.recurring_run = recurring.value("recurring_run_id", "");
    return f;
  }

  // The request a client of team-a would send to `route`: the pattern's
  // parameters filled with the fixture's ids, plus what the route reads from
  // the query or body. Nullopt: the route is new, and needs a line here.
  static std::optional<http::Request> RequestFor(const http::Router::RouteInfo& route,
                                                 const Fixture& f) {
    std::string path = route.pattern;
    auto fill = [&](const std::string& param, const std::string& value) {
      size_t at = path.find("{" + param + "}");
      if (at != std::string::npos) path.replace(at, param.size() + 2, value);
    };
    fill("pipeline_id", f.pipeline);
    fill("pipeline_version_id", f.version);
    fill("version_id", f.version);
    fill("experiment_id", f.experiment);
    fill("run_id", f.run);
    fill("recurring_run_id", f.recurring_run);
    fill("node_id", "node");
    fill("artifact_name", "main-logs");
    fill("name", f.pipeline_name);
    if (path.find("/pipelines/{id}") != std::string::npos) fill("id", f.pipeline);
    if (path.find("/experiments/{id}") != std::string::npos) fill("id", f.experiment);
    if (path.find("/runs/{id}") != std::string::npos) fill("id", f.run);
    if (path.find('{') != std::string::npos) return std::nullopt;

    const std::string v1_namespace =
        "?resource_reference_key.type=NAMESPACE&resource_reference_key.id=team-a";
    const json spec = json::parse(R"({"pipelineInfo":{"name":"x"},"root":{"dag":{"tasks":{}}},
                                      "schemaVersion":"2.1.0","sdkVersion":"kfp-2.13.0"})");
    const json pipeline_ref = {{"pipeline_id", f.pipeline}};
    std::map<std::string, std::pair<std::string, json>> extra = {
        {"UploadPipeline", {"?namespace=team-a&name=new", nullptr}},
        {"UploadPipelineVersion", {"?name=v2&pipelineid=" + f.pipeline, nullptr}},
        {"V1UploadPipeline", {"?namespace=team-a&name=new1", nullptr}},
        {"CreatePipelineAndVersion",
         {"",
          {{"pipeline", {{"name", "pv"}, {"namespace", "team-a"}}},
           {"pipeline_version", {{"pipeline_spec", spec}}}}}},
        {"CreatePipeline", {"", {{"name", "cp"}, {"namespace", "team-a"}}}},
        {"ListPipelines", {"?namespace=team-a", nullptr}},
        {"GetPipelineByName", {"?namespace=team-a", nullptr}},
        {"UpdatePipeline", {"", {{"description", "d"}}}},
        {"CreatePipelineVersion", {"", {{"name", "v3"}, {"pipeline_spec", spec}}}},
        {"UpdatePipelineVersion", {"", {{"description", "d"}}}},
        {"CreateExperiment", {"", {{"display_name", "e-new"}, {"namespace", "team-a"}}}},
        {"ListExperiments", {"?namespace=team-a", nullptr}},
        {"CreateRun",
         {"",
          {{"display_name", "r2"},
           {"experiment_id", f.experiment},
           {"pipeline_version_reference", pipeline_ref}}}},
        {"ListRuns", {"?namespace=team-a", nullptr}},
        {"CreateRecurringRun",
         {"",
          {{"display_name", "rr2"},
           {"experiment_id", f.experiment},
           {"mode", "DISABLE"},
           {"trigger", {{"periodic_schedule", {{"interval_second", 3600}}}}},
           {"pipeline_version_reference", pipeline_ref}}}},
        {"ListRecurringRuns", {"?namespace=team-a", nullptr}},
        {"V1ListPipelines", {v1_namespace, nullptr}},
        {"V1ListPipelineVersions",
         {"?resource_key.type=PIPELINE&resource_key.id=" + f.pipeline, nullptr}},
        {"V1CreateExperiment",
         {"",
          {{"name", "e-v1"},
           {"resource_references",
            {{{"key", {{"type", "NAMESPACE"}, {"id", "team-a"}}}, {"relationship", "OWNER"}}}}}}},
        {"V1ListExperiments", {v1_namespace, nullptr}},
        {"V1CreateRun",
         {"",
          {{"name", "r-v1"},
           {"pipeline_spec", pipeline_ref},
           {"resource_references",
            {{{"key", {{"type", "EXPERIMENT"}, {"id", f.experiment}}},
              {"relationship", "OWNER"}}}}}}},
        {"V1ListRuns", {v1_namespace, nullptr}},
    };
    std::string query;
    json body;
    if (auto it = extra.find(route.name); it != extra.end()) {
      query = it->second.first;
      body = it->second.second;
    }
    if (route.name.find("Upload") != std::string::npos) return Upload(path + query);
    return Make(route.method, path + query, body.is_null() ? "" : body.dump());
  }

  std::unique_ptr<Backend> backend_;
  int fixtures_ = 0;
};

const std::set<std::string> kNoNamespace = {"GetMetrics", "GetHealthz", "V1GetHealthz"};

TEST_F(AccessTest, EveryRouteHasARule) {
  auto rules = AccessRuleRoutes();
  std::set<std::string> with_rule(rules.begin(), rules.end());
  auto routes = backend_->Routes();
  ASSERT_GT(routes.size(), 40u);
  for (const auto& route : routes) {
    EXPECT_TRUE(with_rule.count(route.name)) << route.name << " has no rule in server/access.cc";
  }
}

TEST_F(AccessTest, EveryRouteRefusesMissingAndWrongCredentials) {
  for (const auto& route : backend_->Routes()) {
    Fixture f = MakeFixture();
    auto request = RequestFor(route, f);
    ASSERT_TRUE(request) << route.name << ": add its request to AccessTest::RequestFor";
    auto [none, none_body] = As("alice", *request, nullptr);
    EXPECT_EQ(none, 401) << route.name;
    EXPECT_EQ(none_body.value("code", 0), 16) << route.name;  // UNAUTHENTICATED
    auto [wrong, wrong_body] = As("alice", *request, "not-a-token-0123456789abcdef");
    EXPECT_EQ(wrong, 401) << route.name;
    // The proxy's token without a user: only what reaches no namespace.
    auto [no_user, no_user_body] = As("", *request);
    EXPECT_EQ(no_user, kNoNamespace.count(route.name) ? 200 : 401)
        << route.name << " " << no_user_body;
  }
}

TEST_F(AccessTest, EveryRouteKeepsOtherNamespacesOut) {
  for (const auto& route : backend_->Routes()) {
    Fixture f = MakeFixture();
    auto request = RequestFor(route, f);
    ASSERT_TRUE(request) << route.name;
    // Bob, through the proxy and with his own token.
    for (const char* token : {kProxyToken, kBobToken}) {
      auto [status, body] = As("bob", *request, token);
      if (kNoNamespace.count(route.name)) {
        EXPECT_EQ(status, 200) << route.name;
        continue;
      }
      EXPECT_EQ(status, 403) << route.name << " " << body;
      EXPECT_EQ(body.value("code", 0), 7) << route.name;  // PERMISSION_DENIED
      EXPECT_THAT(body.dump(), HasSubstr("User 'bob' is not authorized")) << body;
      EXPECT_THAT(body.dump(), HasSubstr("Namespace:team-a")) << body;
    }
    // Alice, whose namespace it is, gets past authorization.
    auto [status, body] = As("alice", *request);
    EXPECT_NE(status, 401) << route.name << " " << body;
    EXPECT_NE(status, 403) << route.name << " " << body;
    EXPECT_LT(status, 500) << route.name << " " << body;
  }
}

TEST_F(AccessTest, HealthzSaysMultiUser) {
  auto [v2, body] = As("", Make(Method::kGet, "/apis/v2beta1/healthz"));
  EXPECT_EQ(v2, 200);
  EXPECT_EQ(body["multi_user"], true);
  auto [v1, v1_body] = As("", Make(Method::kGet, "/apis/v1beta1/healthz"));
  EXPECT_EQ(v1, 200);
  EXPECT_EQ(v1_body["multi_user"], true);
}

TEST_F(AccessTest, UnknownPathsAskForCredentialsFirst) {
  auto [status, body] = As("alice", Make(Method::kGet, "/apis/v2beta1/nothing"), nullptr);
  EXPECT_EQ(status, 401);
}

// KFP's InvalidInput errors when multi-user mode's namespace is missing.
TEST_F(AccessTest, AnEmptyNamespaceIsRefusedAsKfpRefusesIt) {
  auto [e, e_body] =
      As("alice", Make(Method::kPost, "/apis/v2beta1/experiments", R"({"display_name":"x"})"));
  EXPECT_EQ(e, 400);
  EXPECT_EQ(e_body["details"][0]["message"],
            "An experiment cannot have an empty namespace in multi-user mode");
  auto [l, l_body] = As("alice", Make(Method::kGet, "/apis/v2beta1/experiments"));
  EXPECT_EQ(l, 400) << l_body;
  auto [runs, runs_body] = As("alice", Make(Method::kGet, "/apis/v2beta1/runs"));
  EXPECT_EQ(runs, 400);
  EXPECT_EQ(runs_body["details"][0]["message"],
            "A run cannot have an empty namespace in multi-user mode");
  auto [r, r_body] = As("alice", Make(Method::kPost, "/apis/v2beta1/runs",
                                      R"({"display_name":"x","pipeline_spec":{}})"));
  EXPECT_EQ(r, 400);
  EXPECT_THAT(r_body.dump(), HasSubstr("Experiment id can not be empty in multi-user mode"));
  auto [rr, rr_body] = As("alice", Make(Method::kGet, "/apis/v2beta1/recurringruns"));
  EXPECT_EQ(rr, 400) << rr_body;
}

TEST_F(AccessTest, ARecurringRunClaimingAnotherNamespaceThanItsExperiment) {
  Fixture f = MakeFixture();
  json rr = {{"display_name", "rr"},
             {"experiment_id", f.experiment},
             {"namespace", "team-b"},
             {"trigger", {{"periodic_schedule", {{"interval_second", 3600}}}}},
             {"pipeline_version_reference", {{"pipeline_id", f.pipeline}}}};
  auto [status, body] = As("bob", Make(Method::kPost, "/apis/v2beta1/recurringruns", rr.dump()));
  EXPECT_EQ(status, 400);
  EXPECT_THAT(body.dump(), HasSubstr("belongs to namespace 'team-a' instead of 'team-b'"));
}

TEST_F(AccessTest, ListsShowOnlyTheNamespaceAsked) {
  MakeFixture();
  json e = {{"display_name", "bobs"}, {"namespace", "team-b"}};
  ASSERT_EQ(As("bob", Make(Method::kPost, "/apis/v2beta1/experiments", e.dump())).first, 200);
  auto [status, list] = As("bob", Make(Method::kGet, "/apis/v2beta1/experiments?namespace=team-b"));
  ASSERT_EQ(status, 200);
  ASSERT_EQ(list["experiments"].size(), 1u);
  EXPECT_EQ(list["experiments"][0]["display_name"], "bobs");
  auto [runs, runs_body] = As("bob", Make(Method::kGet, "/apis/v2beta1/runs?namespace=team-b"));
  EXPECT_EQ(runs, 200);
  EXPECT_FALSE(runs_body.contains("runs"));
}

// Shared pipelines (no namespace): KFP lets anyone read them, and writes
// them only for users of its own namespace.
TEST_F(AccessTest, SharedPipelines) {
  auto [created, shared] = As("admin", Upload("/apis/v2beta1/pipelines/upload?name=shared"));
  ASSERT_EQ(created, 200) << shared;
  std::string id = shared["pipeline_id"];
  EXPECT_EQ(As("bob", Upload("/apis/v2beta1/pipelines/upload?name=mine")).first, 403);
  EXPECT_EQ(As("bob", Make(Method::kGet, "/apis/v2beta1/pipelines/" + id)).first, 200);
  auto [listed, list] = As("bob", Make(Method::kGet, "/apis/v2beta1/pipelines"));
  EXPECT_EQ(listed, 200);
  EXPECT_EQ(list["pipelines"].size(), 1u);
  auto [deleted, denied] =
      As("bob", Make(Method::kDelete, "/apis/v2beta1/pipelines/" + id + "?cascade=true"));
  EXPECT_EQ(deleted, 403);
  EXPECT_THAT(denied.dump(), HasSubstr("Failed to access shared pipeline")) << denied;
  EXPECT_EQ(
      As("admin", Make(Method::kDelete, "/apis/v2beta1/pipelines/" + id + "?cascade=true")).first,
      200);
}

// Every spelling the readers accept of where a create request lands (the
// field's proto and JSON names, body and query, first and last resource
// reference, enums by name and number) is authorized as the handler acts on
// it: bob, allowed in team-b, names alice's team-a somewhere and is refused,
// and nothing lands in team-a; named once, each spelling works.
TEST_F(AccessTest, EverySpellingOfWhereACreateLandsIsAuthorizedAsActedOn) {
  Fixture f = MakeFixture();
  const std::string a = f.experiment;
  json bobs_experiment = {{"display_name", "bobs"}, {"namespace", "team-b"}};
  auto [made, made_body] =
      As("bob", Make(Method::kPost, "/apis/v2beta1/experiments", bobs_experiment.dump()));
  ASSERT_EQ(made, 200) << made_body;
  const std::string b = made_body["experiment_id"];
  auto [uploaded, bobs_pipeline] =
      As("bob", Upload("/apis/v2beta1/pipelines/upload?namespace=team-b&name=bobs"));
  ASSERT_EQ(uploaded, 200) << bobs_pipeline;
  const testing::Spellings spellings(a, "team-a", b, "team-b", bobs_pipeline["pipeline_id"]);
  for (const auto& c : spellings.Crossing()) {
    auto [status, body] = As("bob", Make(Method::kPost, c.target, c.body.dump()));
    EXPECT_EQ(status, c.status) << c.what << ": " << body;
    // KFP's error shape, with the gRPC code of the status.
    EXPECT_EQ(body.value("code", 0), c.status == 403 ? 7 : 3) << c.what << ": " << body;
    EXPECT_TRUE(body.contains("message")) << c.what;
  }
  // Nothing landed in team-a: its experiment still holds the fixture's run
  // and recurring run alone, and no experiment named "sneaky" is there.
  auto [l1, in_a] = As(
      "alice", Make(Method::kGet, std::string(testing::Spellings::kRuns) + "?experiment_id=" + a));
  ASSERT_EQ(l1, 200) << in_a;
  EXPECT_EQ(in_a["runs"].size(), 1u) << in_a;
  auto [l2, jobs_in_a] = As(
      "alice", Make(Method::kGet, std::string(testing::Spellings::kJobs) + "?experiment_id=" + a));
  ASSERT_EQ(l2, 200) << jobs_in_a;
  EXPECT_EQ(jobs_in_a["recurringRuns"].size(), 1u) << jobs_in_a;
  auto [l3, experiments] =
      As("alice", Make(Method::kGet, "/apis/v2beta1/experiments?namespace=team-a"));
  ASSERT_EQ(l3, 200);
  EXPECT_THAT(experiments.dump(), Not(HasSubstr("sneaky"))) << experiments;
  auto [l4, pipelines] =
      As("alice", Make(Method::kGet, "/apis/v2beta1/pipelines?namespace=team-a"));
  ASSERT_EQ(l4, 200);
  EXPECT_THAT(pipelines.dump(), Not(HasSubstr("sneaky"))) << pipelines;

  // Named once, every spelling is read and lands where it says.
  for (const auto& c : spellings.Own()) {
    auto [status, answer] = As("bob", Make(Method::kPost, c.target, c.body.dump()));
    ASSERT_EQ(status, 200) << c.what << ": " << answer;
    if (c.target.find("/runs") == std::string::npos &&
        c.target.find("/recurringruns") == std::string::npos) {
      continue;  // an experiment: its namespace was authorized as team-b
    }
    EXPECT_THAT(answer.dump(), HasSubstr(b)) << c.what << ": " << answer;
  }
}

TEST_F(AccessTest, AStrangersProbeOfAnIdThatDoesNotExistIsNotFound) {
  auto [status, body] = As("bob", Make(Method::kGet, "/apis/v2beta1/runs/no-such-run"));
  EXPECT_EQ(status, 404) << body;
}

}  // namespace
}  // namespace kfpbench::server
