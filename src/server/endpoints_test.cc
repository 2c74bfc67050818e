// The v2beta1 endpoints beyond the basics: pipeline versions, create-by-URL,
// PATCH, archiving, terminate, retry, healthz, and bad input.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>

#include "server/test_support.h"
#include "util/json_reader.h"

namespace kfpbench::server {
namespace {

using http::Method;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;
using namespace testing;  // the part's test helpers

// Where these tests let package_url read local files (serve --package-root).
std::filesystem::path PackageRoot() {
  auto dir = std::filesystem::temp_directory_path() / "kfpbench-endpoints-packages";
  std::filesystem::create_directories(dir);
  return dir;
}

class EndpointsTest : public BackendApiTest {
 protected:
  EndpointsTest() { options_.backend.package_root = PackageRoot(); }

  json CreateRunOf(const std::string& pipeline_id, const std::string& name = "r") {
    json body = {{"display_name", name},
                 {"pipeline_version_reference", {{"pipeline_id", pipeline_id}}}};
    auto [status, run] = Call(Method::kPost, "/apis/v2beta1/runs", body.dump());
    EXPECT_EQ(status, 200) << run;
    return run;
  }
  std::vector<std::string> States(const json& run) {
    std::vector<std::string> out;
    for (const auto& h : run["state_history"]) out.push_back(h["state"]);
    return out;
  }
};

class SlowEndpointsTest : public EndpointsTest {
 protected:
  SlowEndpointsTest() { options_.backend.stub_durations = {"constant:30s"}; }
};

// Issue #35: a body nested 100,000 levels deep (parameters of a run, a
// recurring run, a v1 run) killed the server for everyone as it was written
// out recursively. Such text is refused before it is parsed, with 400, and
// the server answers the next request.
TEST_F(EndpointsTest, DeeplyNestedBodiesAreRefusedAndTheServerStaysUp) {
  auto nested = [](size_t depth) {
    return std::string(depth, '[') + "1" + std::string(depth, ']');
  };
  const std::string deep = nested(100'000);
  const std::vector<std::pair<std::string, std::string>> bodies = {
      {"/apis/v2beta1/runs",
       R"({"display_name":"deep","runtime_config":{"parameters":{"p":)" + deep + "}}}"},
      {"/apis/v2beta1/recurringruns",
       R"({"display_name":"deep","trigger":{"periodic_schedule":{"interval_second":60}},)"
       R"("runtime_config":{"parameters":{"p":)" +
           deep + "}}}"},
      {"/apis/v1beta1/runs",
       R"({"name":"deep","pipeline_spec":{"runtime_config":{"parameters":{"p":)" + deep + "}}}}"},
      {"/apis/v2beta1/experiments", R"({"display_name":)" + deep + "}"},
  };
  for (const auto& [path, body] : bodies) {
    auto [status, answer] = Call(Method::kPost, path, body);
    EXPECT_EQ(status, 400) << path << ": " << answer.dump().substr(0, 300);
    EXPECT_EQ(answer.value("code", 0), 3) << path;  // INVALID_ARGUMENT
    auto [up, health] = Call(Method::kGet, "/apis/v2beta1/healthz");
    ASSERT_EQ(up, 200) << "after " << path;
  }
  // As deep as KFP takes is read (and refused for what it is, not its depth).
  std::string at_limit = R"({"display_name":"deep","runtime_config":{"parameters":{"p":)";
  at_limit += nested(kMaxJsonDepth - 4);
  at_limit += "}}}";
  auto [status, answer] = Call(Method::kPost, "/apis/v2beta1/runs", at_limit);
  EXPECT_EQ(status, 400);
  EXPECT_THAT(answer.dump(), Not(HasSubstr("deeper"))) << answer.dump().substr(0, 300);
}

TEST_F(EndpointsTest, HealthzSaysSingleUser) {
  auto [status, body] = Call(Method::kGet, "/apis/v2beta1/healthz");
  EXPECT_EQ(status, 200);
  ASSERT_TRUE(body.contains("multi_user"));
  EXPECT_EQ(body["multi_user"], false);
}

// Issue #13, item 11: without --package-root the server reads no local file
// a client names (it may run as root).
TEST_F(BackendApiTest, PackageUrlsReadNoLocalFilesByDefault) {
  json body = {{"pipeline", {{"name", "shadow"}}},
               {"pipeline_version", {{"package_url", {{"pipeline_url", "file:///etc/passwd"}}}}}};
  auto [status, answer] = Call(Method::kPost, "/apis/v2beta1/pipelines/create", body.dump());
  EXPECT_EQ(status, 400) << answer;
  EXPECT_THAT(answer["message"].get<std::string>(), HasSubstr("--package-root")) << answer;
}

// Issue #13, items 2 and 3: bytes that are not UTF-8, in the file or in a
// query parameter, are refused before anything is written, and the server
// keeps serving (and storing) afterwards.
TEST_F(EndpointsTest, UploadsThatAreNotUtf8AreRefusedAndStoreNothing) {
  std::string bad_file = kPipeline;
  bad_file.replace(bad_file.find("two-steps"), 9, "two-st\x83ps");
  auto form = http::BuildMultipart({{"uploadfile", "p.yaml", "", bad_file}});
  auto r = client_->Send(Method::kPost, "/apis/v2beta1/pipelines/upload?name=bytes", form.body,
                         form.content_type);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_THAT(r->body, HasSubstr("not valid UTF-8")) << r->body;

  auto good = http::BuildMultipart({{"uploadfile", "p.yaml", "", kPipeline}});
  r = client_->Send(Method::kPost, "/apis/v2beta1/pipelines/upload?name=ok%FFname", good.body,
                    good.content_type);
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_THAT(r->body, HasSubstr("name is not valid UTF-8")) << r->body;

  auto [ls, list] = Call(Method::kGet, "/apis/v2beta1/pipelines");
  EXPECT_EQ(ls, 200) << list;
  EXPECT_FALSE(list.contains("pipelines")) << list;  // nothing was stored
  auto [es, experiment] =
      Call(Method::kPost, "/apis/v2beta1/experiments", R"({"display_name": "after"})");
  EXPECT_EQ(es, 200) << experiment;
  EXPECT_EQ(Upload("two-steps", kPipeline).value("name", ""), "two-steps");
}

// Found by fuzzing: a path that is not UTF-8 (%FF decoded) is quoted in the
// 404's message, and writing that message as JSON threw.
TEST_F(EndpointsTest, APathThatIsNotUtf8GetsA404NotACrash) {
  auto r = client_->Send(Method::kGet, "/apis/v2beta1/pip%FF%FFelines");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status, 404) << r->body;
  EXPECT_FALSE(json::parse(r->body, nullptr, false).is_discarded()) << r->body;
  EXPECT_EQ(Call(Method::kGet, "/apis/v2beta1/healthz").first, 200);
}

TEST_F(EndpointsTest, VersionsUploadCreatePatchDelete) {
  json p = Upload("two-steps", kPipeline);
  std::string pid = p["pipeline_id"];
  auto form = http::BuildMultipart({{"uploadfile", "v2.yaml", "", kPipeline}});
  auto r = client_->Send(Method::kPost,
                         "/apis/v2beta1/pipelines/upload_version?name=v2&pipelineid=" + pid,
                         form.body, form.content_type);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->status, 200) << r->body;
  json v2 = json::parse(r->body);
  EXPECT_EQ(v2["name"], "v2");
  EXPECT_EQ(v2["pipeline_id"], pid);
  // Without pipelineid: 400.
  r = client_->Send(Method::kPost, "/apis/v2beta1/pipelines/upload_version?name=v3", form.body,
                    form.content_type);
  EXPECT_EQ(r->status, 400);

  // A version from a local file, by path and by file:// URL.
  auto path = PackageRoot() / ("kfpbench-endpoints-" + std::to_string(getpid()) + ".yaml");
  std::ofstream(path) << kPipeline;
  json body = {{"name", "v3"}, {"package_url", {{"pipeline_url", path.string()}}}};
  auto [cs, v3] = Call(Method::kPost, "/apis/v2beta1/pipelines/" + pid + "/versions", body.dump());
  EXPECT_EQ(cs, 200) << v3;
  EXPECT_EQ(v3["pipeline_spec"]["pipelineInfo"]["name"], "two-steps");
  body = {{"pipeline", {{"name", "by-url"}}},
          {"pipeline_version", {{"package_url", {{"pipeline_url", "file://" + path.string()}}}}}};
  auto [bs, by_url] = Call(Method::kPost, "/apis/v2beta1/pipelines/create", body.dump());
  EXPECT_EQ(bs, 200) << by_url;
  EXPECT_EQ(by_url["name"], "by-url");
  std::filesystem::remove(path);
  body["pipeline"]["name"] = "remote";
  body["pipeline_version"]["package_url"]["pipeline_url"] = "https://example.com/p.yaml";
  auto [rs, remote] = Call(Method::kPost, "/apis/v2beta1/pipelines/create", body.dump());
  EXPECT_EQ(rs, 400);
  EXPECT_THAT(remote["message"].get<std::string>(), HasSubstr("no network fetches"));
  // Nothing half-created.
  EXPECT_EQ(Call(Method::kGet, "/apis/v2beta1/pipelines/names/remote").first, 404);

  // Outside the root, existing or not, and through "..": the same refusal,
  // so no client can probe the server's files (issue #13, item 11).
  for (const std::string& outside :
       std::vector<std::string>{"file:///etc/passwd", "file:///etc/no-such-file",
                                "file://" + (PackageRoot() / ".." / "x.yaml").string()}) {
    body["pipeline"]["name"] = "probe";
    body["pipeline_version"]["package_url"]["pipeline_url"] = outside;
    auto [os, probe] = Call(Method::kPost, "/apis/v2beta1/pipelines/create", body.dump());
    EXPECT_EQ(os, 400) << outside;
    EXPECT_THAT(probe["message"].get<std::string>(), HasSubstr("outside the package root"))
        << probe;
  }

  auto [ns, named] = Call(Method::kGet, "/apis/v2beta1/pipelines/names/two-steps");
  EXPECT_EQ(ns, 200);
  EXPECT_EQ(named["pipeline_id"], pid);

  auto [ps, patched] = Call(Method::kPatch, "/apis/v2beta1/pipelines/" + pid,
                            R"({"display_name": "Two steps", "description": "d"})");
  EXPECT_EQ(ps, 200) << patched;
  EXPECT_EQ(patched["display_name"], "Two steps");
  EXPECT_EQ(patched["name"], "two-steps");
  std::string v2id = v2["pipeline_version_id"];
  auto [vs, pv] = Call(Method::kPatch, "/apis/v2beta1/pipelines/" + pid + "/versions/" + v2id,
                       R"({"display_name": "Second"})");
  EXPECT_EQ(vs, 200) << pv;
  EXPECT_EQ(pv["display_name"], "Second");
  EXPECT_EQ(Call(Method::kPatch, "/apis/v2beta1/pipelines/" + pid, R"({"colour": "red"})").first,
            400);

  EXPECT_EQ(Call(Method::kDelete, "/apis/v2beta1/pipelines/" + pid + "/versions/" + v2id).first,
            200);
  EXPECT_EQ(Call(Method::kGet, "/apis/v2beta1/pipelines/" + pid + "/versions/" + v2id).first, 404);
  auto [ls, list] = Call(Method::kGet, "/apis/v2beta1/pipelines/" + pid + "/versions");
  EXPECT_EQ(list["total_size"], 2);
}

TEST_F(EndpointsTest, ArchivingAnExperimentArchivesItsRuns) {
  json p = Upload("two-steps", kPipeline);
  auto [es, e] = Call(Method::kPost, "/apis/v2beta1/experiments", R"({"display_name": "x"})");
  std::string eid = e["experiment_id"];
  json body = {{"display_name", "r"},
               {"experiment_id", eid},
               {"pipeline_version_reference", {{"pipeline_id", p["pipeline_id"]}}}};
  auto [rs, run] = Call(Method::kPost, "/apis/v2beta1/runs", body.dump());
  ASSERT_EQ(rs, 200);
  std::string rid = run["run_id"];
  EXPECT_EQ(Call(Method::kPost, "/apis/v2beta1/experiments/" + eid + ":archive").first, 200);
  EXPECT_EQ(Call(Method::kGet, "/apis/v2beta1/experiments/" + eid).second["storage_state"],
            "ARCHIVED");
  EXPECT_EQ(Call(Method::kGet, "/apis/v2beta1/runs/" + rid).second["storage_state"], "ARCHIVED");
  // The run cannot come back while its experiment is archived.
  EXPECT_EQ(Call(Method::kPost, "/apis/v2beta1/runs/" + rid + ":unarchive").first, 400);
  EXPECT_EQ(Call(Method::kPost, "/apis/v2beta1/experiments/" + eid + ":unarchive").first, 200);
  EXPECT_EQ(Call(Method::kPost, "/apis/v2beta1/runs/" + rid + ":unarchive").first, 200);
  EXPECT_EQ(Call(Method::kGet, "/apis/v2beta1/runs/" + rid).second["storage_state"], "AVAILABLE");
  EXPECT_EQ(Call(Method::kPost, "/apis/v2beta1/runs/" + rid + ":archive").first, 200);

  json filter = {
      {"predicates",
       {{{"key", "storage_state"}, {"operation", "EQUALS"}, {"string_value", "ARCHIVED"}}}}};
  auto [ls, list] = Call(Method::kGet, "/apis/v2beta1/runs?experiment_id=" + eid +
                                           "&filter=" + http::PercentEncode(filter.dump()));
  EXPECT_EQ(ls, 200);
  EXPECT_EQ(list["total_size"], 1);
  auto [ls2, others] = Call(Method::kGet, "/apis/v2beta1/runs?experiment_id=nope");
  EXPECT_EQ(ls2, 200);
  EXPECT_FALSE(others.contains("runs"));
  EXPECT_EQ(Call(Method::kPost, "/apis/v2beta1/experiments/nope:archive").first, 404);
}

TEST_F(SlowEndpointsTest, TerminateThenRetry) {
  json p = Upload("two-steps", kPipeline);
  json run = CreateRunOf(p["pipeline_id"]);
  std::string rid = run["run_id"];
  // Retrying a run that has not failed is refused.
  EXPECT_EQ(Call(Method::kPost, "/apis/v2beta1/runs/" + rid + ":retry").first, 400);
  EXPECT_EQ(Call(Method::kPost, "/apis/v2beta1/runs/" + rid + ":terminate").first, 200);
  json done = WaitForRun(rid);
  ASSERT_EQ(done["state"], "CANCELED") << done.dump(2);
  auto states = States(done);
  EXPECT_NE(std::find(states.begin(), states.end(), "CANCELING"), states.end());

  EXPECT_EQ(Call(Method::kPost, "/apis/v2beta1/runs/" + rid + ":retry").first, 200);
  auto [gs, retried] = Call(Method::kGet, "/apis/v2beta1/runs/" + rid);
  EXPECT_NE(retried["state"], "CANCELED");
  // History kept: the cancellation is still there, followed by PENDING again.
  states = States(retried);
  ASSERT_GE(states.size(), 3u);
  EXPECT_NE(std::find(states.begin(), states.end(), "CANCELED"), states.end());
  auto canceled = std::find(states.begin(), states.end(), "CANCELED");
  EXPECT_NE(std::find(canceled, states.end(), "PENDING"), states.end());
  EXPECT_EQ(Call(Method::kPost, "/apis/v2beta1/runs/" + rid + ":terminate").first, 200);
  EXPECT_EQ(WaitForRun(rid)["state"], "CANCELED");
  EXPECT_EQ(Call(Method::kPost, "/apis/v2beta1/runs/nope:terminate").first, 404);
}

class SmallBodyTest : public EndpointsTest {
 protected:
  SmallBodyTest() { options_.max_body_bytes = 64 * 1024; }
};

TEST_F(SmallBodyTest, BadInputNeverGetsAFiveHundred) {
  json p = Upload("two-steps", kPipeline);
  // Larger than the server limit: 413 in KFP's error shape.
  std::string big = R"({"display_name": ")" + std::string(100 * 1024, 'x') + R"("})";
  auto [bs, big_err] = Call(Method::kPost, "/apis/v2beta1/experiments", big);
  EXPECT_EQ(bs, 413);
  EXPECT_TRUE(big_err.contains("code"));
  // The HTTP server's own answer, byte for byte (server::TransportErrorResponse).
  auto raw = client_->Send(Method::kPost, "/apis/v2beta1/experiments", big, "application/json");
  ASSERT_TRUE(raw.ok()) << raw.error().message;
  EXPECT_EQ(raw->headers.Get("Content-Type"), "application/json");
  EXPECT_EQ(raw->body,
            R"({"code":8,"message":"request body is larger than 65536 bytes","details":[]})");

  // A DAG with a cycle and one with a missing component: 400 with the reason.
  json spec = json::parse(Call(Method::kGet, "/apis/v2beta1/pipelines/" +
                                                 p["pipeline_id"].get<std::string>() + "/versions")
                              .second["pipeline_versions"][0]["pipeline_spec"]
                              .dump());
  json cyclic = spec;
  cyclic["root"]["dag"]["tasks"]["produce"]["dependentTasks"] = {"consume"};
  auto [cs, cycle] = Call(Method::kPost, "/apis/v2beta1/runs",
                          json{{"display_name", "c"}, {"pipeline_spec", cyclic}}.dump());
  EXPECT_EQ(cs, 400);
  EXPECT_THAT(cycle["message"].get<std::string>(), HasSubstr("cycle")) << cycle;
  json missing = spec;
  missing["root"]["dag"]["tasks"]["produce"]["componentRef"]["name"] = "comp-nope";
  auto [ms, miss] = Call(Method::kPost, "/apis/v2beta1/runs",
                         json{{"display_name", "m"}, {"pipeline_spec", missing}}.dump());
  EXPECT_EQ(ms, 400);
  EXPECT_THAT(miss["message"].get<std::string>(), HasSubstr("comp-nope")) << miss;

  // Page tokens that are not ours.
  for (const char* token : {"%21%21", "bm90LWpzb24", "eyJzIjoxfQ"}) {
    auto [ts, err] = Call(Method::kGet, std::string("/apis/v2beta1/runs?page_token=") + token);
    EXPECT_EQ(ts, 400) << token << " " << err;
  }
  // SQL in a filter is a value like any other.
  json filter = {
      {"predicates",
       {{{"key", "display_name"}, {"operation", "EQUALS"}, {"string_value", "x' OR '1'='1"}}}}};
  auto [fs, none] =
      Call(Method::kGet, "/apis/v2beta1/runs?filter=" + http::PercentEncode(filter.dump()));
  EXPECT_EQ(fs, 200);
  EXPECT_FALSE(none.contains("runs"));
  filter["predicates"][0]["string_value"] = "'; DROP TABLE runs; --";
  EXPECT_EQ(
      Call(Method::kGet, "/apis/v2beta1/runs?filter=" + http::PercentEncode(filter.dump())).first,
      200);
  EXPECT_EQ(Call(Method::kGet, "/apis/v2beta1/runs").first, 200);

  // Wrong types and shapes everywhere: 400s.
  for (const char* body :
       {R"({"display_name": 5})", R"({"display_name": "x", "runtime_config": []})",
        R"({"display_name": "x", "pipeline_version_reference": "p"})", R"([1, 2])", R"("run")",
        R"({"display_name": "x", "runtime_config": {"parameters": {"message": 5}},
            "pipeline_version_reference": {"pipeline_id": "nope"}})"}) {
    auto [s, err] = Call(Method::kPost, "/apis/v2beta1/runs", body);
    EXPECT_GE(s, 400) << body;
    EXPECT_LT(s, 500) << body << " " << err;
  }
  for (const char* body :
       {R"({"display_name": "x", "trigger": {"cron_schedule": {"cron": "bad"}}})",
        R"({"display_name": "x", "max_concurrency": "many"})",
        R"({"display_name": "x", "trigger": {}})"}) {
    auto [s, err] = Call(Method::kPost, "/apis/v2beta1/recurringruns", body);
    EXPECT_EQ(s, 400) << body << " " << err;
  }
}

}  // namespace
}  // namespace kfpbench::server
