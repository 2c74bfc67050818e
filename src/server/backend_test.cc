// The API handlers through real HTTP on a loopback port, with the stub executor.
#include "server/test_support.h"
#include "util/test_support.h"

#include <zlib.h>

#include <mutex>
#include <vector>

#include <gmock/gmock.h>

namespace kfpbench::server {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;
using namespace testing;  // the part's test helpers

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
  // Same name again: 409 in KFP's upload error shape (pipeline_upload_server.go).
  auto form = http::BuildMultipart({{"uploadfile", "x.yaml", "", kPipeline}});
  auto again = client_->Send(http::Method::kPost, "/apis/v2beta1/pipelines/upload?name=two-steps",
                             form.body, form.content_type);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->status, 409);
  json err = json::parse(again->body);
  EXPECT_EQ(err["error_message"], "Failed to create a pipeline and a pipeline version");
  EXPECT_TRUE(err["error_details"].is_string());
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
      {http::Method::kGet, "/apis/v2beta1/runs?page_size=-1", "", 400, "page size"},
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
    EXPECT_THAT(body.value("message", ""), HasSubstr(c.fragment))
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
  EXPECT_THAT(r->body, HasSubstr("x.yaml")) << r->body;
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
  EXPECT_THAT(err.value("message", ""), HasSubstr("message")) << err;
}

}  // namespace
}  // namespace kfpbench::server

namespace kfpbench::server {
namespace {

using nlohmann::json;

// The task_id of the task a run's details show under `display_name`; empty
// when there is none.
std::string TaskIdOf(const json& run, const std::string& display_name) {
  const json tasks = run.value("run_details", json::object()).value("task_details", json::array());
  for (const auto& t : tasks) {
    if (t.value("display_name", "") == display_name) return t.value("task_id", "");
  }
  return "";
}

std::string Base64Decode(const std::string& in) {
  static const std::string kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  uint32_t buffer = 0;
  int bits = 0;
  for (char c : in) {
    if (c == '=') break;
    buffer = buffer << 6 | static_cast<uint32_t>(kAlphabet.find(c));
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buffer >> bits) & 0xff);
    }
  }
  return out;
}

std::string Gunzip(const std::string& in) {
  z_stream zs{};
  EXPECT_EQ(inflateInit2(&zs, 15 + 16), Z_OK);
  std::string out(1 << 20, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(inflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  inflateEnd(&zs);
  return out;
}

// What KFP's SDK compiles a @dsl.component into: pip installs kfp, then its
// executor runs the function, inside the component's image.
const std::string kSdkPipeline = kfpbench::testing::TestData("server/testdata/sdk_pipeline.yaml");

class ProcessExecutorApiTest : public testing::BackendApiTest {
 protected:
  ProcessExecutorApiTest() { options_.backend.executor = "process"; }
};

// Never silently on the host: the run is refused at CreateRun, and the
// message says what to do instead.
TEST_F(ProcessExecutorApiTest, KfpSdkPythonComponentsAreRefusedWithWhatToDoInstead) {
  json p = Upload("sdk", kSdkPipeline);
  json body = {{"display_name", "r"},
               {"pipeline_version_reference", {{"pipeline_id", p["pipeline_id"]}}}};
  auto [status, answer] = Call(http::Method::kPost, "/apis/v2beta1/runs", body.dump());
  EXPECT_EQ(status, 400) << answer;
  std::string message = answer.value("message", "");
  EXPECT_THAT(message,
              HasSubstr("executor 'exec-say' (image python:3.11) is a Python component of KFP's "
                        "SDK"))
      << message;
  EXPECT_THAT(message, HasSubstr("--executor stub")) << message;
  EXPECT_EQ(Call(http::Method::kGet, "/apis/v2beta1/runs").second.value("total_size", 0), 0);
}

// A container that names only an image runs its entrypoint in a pod; on
// this host there is nothing to run, so the process executor refuses it.
TEST_F(ProcessExecutorApiTest, AnEntrypointOnlyContainerIsRefusedWithWhatToDoInstead) {
  std::string yaml = kSdkPipeline;
  size_t from = yaml.find("        command:");
  size_t to = yaml.find("pipelineInfo:");
  yaml.replace(from, to - from, "");
  json p = Upload("entrypoint", yaml);
  json body = {{"display_name", "r"},
               {"pipeline_version_reference", {{"pipeline_id", p["pipeline_id"]}}}};
  auto [status, answer] = Call(http::Method::kPost, "/apis/v2beta1/runs", body.dump());
  EXPECT_EQ(status, 400) << answer;
  EXPECT_THAT(answer.value("message", ""), HasSubstr("sets neither command nor args")) << answer;
}

// Bytes that are not UTF-8 from a step, in its output parameter or in its
// log, ended the whole server: the engine thread threw writing the task's
// record. Now the parameter fails the step (as KFP's launcher does) and the
// log is shown with U+FFFD, and the server goes on serving.
TEST_F(ProcessExecutorApiTest, BytesThatAreNotUtf8FromAStepFailItAndTheServerGoesOn) {
  const std::string pipeline = R"(components:
  comp-a:
    executorLabel: exec-a
    outputDefinitions: {parameters: {Output: {parameterType: STRING}}}
deploymentSpec:
  executors:
    exec-a:
      container:
        image: alpine
        command: [sh, -c, COMMAND, "{{$.outputs.parameters['Output'].output_file}}"]
pipelineInfo: {name: bytes}
root:
  dag:
    tasks:
      a: {componentRef: {name: comp-a}, taskInfo: {name: a}}
schemaVersion: 2.1.0
)";
  auto with = [&](const std::string& command) {
    std::string yaml = pipeline;
    yaml.replace(yaml.find("COMMAND"), 7, command);
    return yaml;
  };
  json parameter = RunPipeline(Upload("parameter", with(R"('printf "\377" > "$0"')")));
  EXPECT_EQ(parameter["state"], "FAILED") << parameter;
  EXPECT_THAT(parameter.dump(), HasSubstr("is not valid UTF-8")) << parameter;
  json log = RunPipeline(Upload("log", with(R"('printf "bad \377" >&2; exit 3')")));
  EXPECT_EQ(log["state"], "FAILED") << log;
  EXPECT_THAT(log.dump(), HasSubstr("bad \xEF\xBF\xBD")) << log;
  EXPECT_EQ(Call(http::Method::kGet, "/apis/v2beta1/healthz").first, 200);
}

// What a step wrote comes back from the artifact read endpoint as KFP's
// object store serves it: {"data": base64 of a .tgz}, by task and artifact
// name, and the step's log as "main-logs".
TEST_F(ProcessExecutorApiTest, ArtifactsAStepWroteAreReadAsKfpServesThem) {
  json p = Upload("writes", kfpbench::testing::TestData("server/testdata/writes.yaml"));
  json run = RunPipeline(p);
  ASSERT_EQ(run["state"], "SUCCEEDED") << run;
  const std::string run_id = run["run_id"];
  const std::string task_id = TaskIdOf(run, "write");
  ASSERT_FALSE(task_id.empty()) << run;
  auto read = [&](const std::string& node, const std::string& name) {
    return Call(http::Method::kGet,
                "/apis/v2beta1/runs/" + run_id + "/nodes/" + node + "/artifacts/" + name + ":read");
  };
  auto [ok, artifact] = read(task_id, "out");
  ASSERT_EQ(ok, 200) << artifact;
  std::string tgz = Base64Decode(artifact["data"].get<std::string>());
  std::string tar = Gunzip(tgz);
  ASSERT_GE(tar.size(), 1024u);
  EXPECT_EQ(tar.substr(0, 3), "out");                  // the entry's name
  EXPECT_EQ(tar.substr(512, 15), "hello-artifact\n");  // its content
  auto [logs, log_body] = read(task_id, "main-logs");
  ASSERT_EQ(logs, 200) << log_body;
  EXPECT_THAT(Gunzip(Base64Decode(log_body["data"].get<std::string>())), HasSubstr("logged"));
  auto [missing, why] = read(task_id, "nope");
  EXPECT_EQ(missing, 404);
  EXPECT_THAT(why.value("error_message", ""), HasSubstr("artifact not found")) << why;
  EXPECT_EQ(read("no-such-node", "out").first, 404);
  EXPECT_EQ(
      Call(http::Method::kGet, "/apis/v2beta1/runs/no-such-run/nodes/n/artifacts/a:read").first,
      404);
}

// An importer whose URI is a run parameter, feeding a step that reads it.
const std::string kImporterPipeline =
    kfpbench::testing::TestData("server/testdata/importer_pipeline.yaml");

// Issue 30: an importer given /etc/passwd (or the server's own environment)
// once made the artifact read endpoint hand the file out. Every path an
// importer may name is confined to the work root (and --package-root), and
// refused when the run is created.
TEST_F(ProcessExecutorApiTest, ImporterUrisOutsideTheArtifactRootsAreRefusedAtCreateRun) {
  json p = Upload("imports", kImporterPipeline);
  auto create = [&](const std::string& uri) {
    json body = {{"display_name", "r"},
                 {"pipeline_version_reference", {{"pipeline_id", p["pipeline_id"]}}},
                 {"runtime_config", {{"parameters", {{"dataset_uri", uri}}}}}};
    return Call(http::Method::kPost, "/apis/v2beta1/runs", body.dump());
  };
  for (const std::string uri :
       {"/etc/passwd", "/proc/self/environ", "/", "file:///etc/passwd", "http://example.com/x"}) {
    auto [status, answer] = create(uri);
    EXPECT_EQ(status, 400) << uri << ": " << answer;
    EXPECT_THAT(answer.value("message", ""),
                HasSubstr("task 'importer': artifact URI '" + uri + "' is refused"))
        << answer;
  }
  EXPECT_EQ(Call(http::Method::kGet, "/apis/v2beta1/runs").second.value("total_size", 0), 0);

  // An object-store URI is a folder under the work root; the importer's
  // artifact is not something a task of the run wrote, so it is not served.
  auto [status, created] = create("gs://bucket/data.csv");
  ASSERT_EQ(status, 200) << created;
  json run = WaitForRun(created["run_id"]);
  ASSERT_EQ(run["state"], "SUCCEEDED") << run;
  const std::string importer_id = TaskIdOf(run, "importer");
  auto [read, why] =
      Call(http::Method::kGet, "/apis/v2beta1/runs/" + created["run_id"].get<std::string>() +
                                   "/nodes/" + importer_id + "/artifacts/artifact:read");
  EXPECT_EQ(read, 404) << why;

  // An object key that climbs out of its store: KFP's importer records it,
  // so it is imported, with no local copy for a step to read.
  auto [climbs, climbing] = create("gs://b/../../../etc");
  ASSERT_EQ(climbs, 200) << climbing;
  json climbed = WaitForRun(climbing["run_id"]);
  EXPECT_EQ(climbed["state"], "SUCCEEDED") << climbed;
}

// Issue #35: an importer whose URI comes from an upstream task (through a
// nested pipeline's input), as in KFP's compiled test pipeline
// pipeline_with_importer_workspace, failed at the importer; KFP's importer
// records the URI and the run succeeds. Under the stub executor the
// upstream URI is a stand-in, under the process executor a file the
// producer wrote, which the consumer reads.
const std::string kImporterFromUpstream =
    kfpbench::testing::TestData("server/testdata/importer_from_upstream.yaml");

TEST_F(BackendApiTest, AnImporterOfAnUpstreamUriSucceedsAsInKfp) {
  json p = Upload("upstream", kImporterFromUpstream);
  json run = RunPipeline(p);
  EXPECT_EQ(run["state"], "SUCCEEDED") << run;
}

TEST_F(ProcessExecutorApiTest, AnImporterOfAnUpstreamUriSucceedsAndItsFileIsRead) {
  json p = Upload("upstream", kImporterFromUpstream);
  json run = RunPipeline(p);
  ASSERT_EQ(run["state"], "SUCCEEDED") << run;
}

// A step that leaves a symbolic link where its artifact should be cannot
// make the read endpoint follow it out of the run's folder.
TEST_F(ProcessExecutorApiTest, TheArtifactReadEndpointFollowsNoLinkOutOfTheRun) {
  json p = Upload("links", kfpbench::testing::TestData("server/testdata/links.yaml"));
  json run = RunPipeline(p);
  ASSERT_EQ(run["state"], "SUCCEEDED") << run;
  const std::string run_id = run["run_id"];
  const std::string task_id = TaskIdOf(run, "link");
  auto read = [&](const std::string& name) {
    return Call(http::Method::kGet, "/apis/v2beta1/runs/" + run_id + "/nodes/" + task_id +
                                        "/artifacts/" + name + ":read");
  };
  auto [file, file_body] = read("file");
  EXPECT_EQ(file, 404) << file_body;
  auto [dir, dir_body] = read("dir");
  ASSERT_EQ(dir, 200) << dir_body;
  std::string tar = Gunzip(Base64Decode(dir_body["data"].get<std::string>()));
  EXPECT_THAT(tar, HasSubstr("dir/own.txt"));
  EXPECT_THAT(tar, Not(HasSubstr("root:")));  // no line of /etc/passwd
  EXPECT_THAT(tar, Not(HasSubstr("dir/passwd")));
}

// A NUL byte would end the string on the step's command line ("a\0b"
// reached the step as "a" and the run succeeded): refused at CreateRun.
TEST_F(BackendApiTest, ANulByteInARunParameterIsRefusedAtCreateRun) {
  json p = Upload("two", kPipeline);
  json body = {{"display_name", "r"},
               {"pipeline_version_reference", {{"pipeline_id", p["pipeline_id"]}}},
               {"runtime_config", {{"parameters", {{"message", std::string("a\0b", 3)}}}}}};
  auto [status, answer] = Call(http::Method::kPost, "/apis/v2beta1/runs", body.dump());
  EXPECT_EQ(status, 400) << answer;
  EXPECT_THAT(answer.value("message", ""),
              HasSubstr("parameter 'message': a NUL byte cannot be passed"))
      << answer;
}

// The stub executor times the same pipeline's steps instead.
TEST_F(BackendApiTest, KfpSdkPythonComponentsRunAsTimedStubs) {
  json p = Upload("sdk", kSdkPipeline);
  EXPECT_EQ(RunPipeline(p)["state"], "SUCCEEDED");
}

}  // namespace
// serve's access log: every request answered, with the user and namespace
// it reached and its status; a denied request leaves its trail, and neither
// the token nor a header's raw text reaches the log.
TEST(BackendAccessLog, RecordsWhoReachedWhatAndTheStatus) {
  constexpr const char* kToken = "proxy-token-0123456789abcdef";
  BackendOptions o;
  o.executor = "stub";
  o.auth.tokens = {{DigestOf(kToken), ""}};
  o.auth.multi_user = true;
  o.auth.policy = {{"alice", {"team-a"}}, {"bob", {"team-b"}}};
  std::mutex m;
  std::vector<AccessRecord> records;
  o.access_log = [&](const AccessRecord& r) {
    std::lock_guard lock(m);
    records.push_back(r);
  };
  auto backend = Backend::Create(o);
  ASSERT_TRUE(backend.ok()) << backend.error().message;
  auto ask = [&](const std::string& user, const char* token) {
    http::Request r;
    r.method = http::Method::kGet;
    r.target = r.path = "/apis/v2beta1/runs";
    r.query = {{"namespace", "team-a"}};
    if (token) r.headers.Set("Authorization", std::string("Bearer ") + token);
    if (!user.empty()) r.headers.Set("kubeflow-userid", user);
    return (*backend)->Handle(r).status;
  };
  EXPECT_EQ(ask("alice", kToken), 200);
  EXPECT_EQ(ask("bob", kToken), 403);
  EXPECT_EQ(ask("bob", "wrong-token"), 401);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].user, "alice");
  EXPECT_EQ(records[0].namespace_, "team-a");
  EXPECT_EQ(records[0].route, "ListRuns");
  EXPECT_EQ(records[0].status, 200);
  EXPECT_EQ(records[1].user, "bob");
  EXPECT_EQ(records[1].status, 403);
  EXPECT_EQ(records[2].route, "Unauthenticated");
  EXPECT_EQ(records[2].user, "");
  EXPECT_EQ(AccessLogLine(records[1]).substr(0, 55),
            "user=bob namespace=team-a route=ListRuns status=403 ms=");
  AccessRecord hostile{"eve\n<forged> status=200", "", "ListRuns", 403, 0};
  EXPECT_THAT(AccessLogLine(hostile), Not(HasSubstr("\n")));
  EXPECT_THAT(AccessLogLine(hostile), Not(HasSubstr(" status=200")));
}

}  // namespace kfpbench::server
