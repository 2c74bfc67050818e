// Issue #11: the literal requests KFP's UI sends, and the API server's rules
// they meet, answered as KFP's API server answers them. Each request is
// written from reading KFP's code (the file is cited above each test), not
// from a recording. KFP's SDK sends its own requests in the SDK tier
// (tests/sdk/, KFP's kfp.Client against kfpbench serve).
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <gmock/gmock.h>

#include "http/multipart.h"
#include "server/api_util.h"
#include "server/pipeline_file.h"
#include "server/test_support.h"

namespace kfpbench::server {
namespace {

using http::Method;
using nlohmann::json;
using ::testing::HasSubstr;
using namespace testing;  // the part's test helpers

constexpr const char* kTokenMismatch =
    "page token does not match the supplied sort by and/or filtering criteria. Either specify "
    "the same criteria or leave the latter empty if page token is specified";

// zlib's deflate of `in`: gzip framing with window_bits 16 + 15, raw (a zip
// entry's method 8) with -15.
std::string Deflate(const std::string& in, int window_bits) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, Z_BEST_COMPRESSION, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY),
            Z_OK);
  std::string out(deflateBound(&zs, in.size()) + 32, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

// A ustar archive of `files` (name, content), as `tar czf` writes one.
std::string TarGz(const std::vector<std::pair<std::string, std::string>>& files) {
  std::string tar;
  for (const auto& [name, content] : files) {
    std::string h(512, '\0');
    h.replace(0, name.size(), name);
    h.replace(100, 7, "0000644");
    h.replace(108, 7, "0000000");
    h.replace(116, 7, "0000000");
    char size[12];
    std::snprintf(size, sizeof(size), "%011o", static_cast<unsigned>(content.size()));
    h.replace(124, 11, size);
    h.replace(136, 11, "00000000000");
    h[156] = '0';
    h.replace(257, 6, std::string("ustar\0", 6));
    h.replace(263, 2, "00");
    h.replace(148, 8, "        ");
    unsigned sum = 0;
    for (unsigned char c : h) sum += c;
    char check[8];
    std::snprintf(check, sizeof(check), "%06o", sum);
    h.replace(148, 7, std::string(check, 6) + '\0');
    tar += h + content + std::string((512 - content.size() % 512) % 512, '\0');
  }
  tar += std::string(1024, '\0');
  return Deflate(tar, 16 + MAX_WBITS);
}

// A zip of `files`, the first stored and the rest deflated, as Python's
// zipfile writes one.
std::string Zip(const std::vector<std::pair<std::string, std::string>>& files) {
  auto u16 = [](std::string& s, uint32_t v) {
    s += static_cast<char>(v & 0xff);
    s += static_cast<char>((v >> 8) & 0xff);
  };
  auto u32 = [&](std::string& s, uint32_t v) {
    u16(s, v & 0xffff);
    u16(s, v >> 16);
  };
  std::string out, central;
  for (size_t i = 0; i < files.size(); ++i) {
    const auto& [name, content] = files[i];
    uint32_t method = i == 0 ? 0 : 8;
    std::string data = method == 0 ? content : Deflate(content, -MAX_WBITS);
    uint32_t crc = static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(content.data()),
                                               static_cast<uInt>(content.size())));
    uint32_t offset = static_cast<uint32_t>(out.size());
    u32(out, 0x04034b50);
    for (uint32_t v : {20u, 0u, method, 0u, 0u}) u16(out, v);
    for (uint32_t v :
         {crc, static_cast<uint32_t>(data.size()), static_cast<uint32_t>(content.size())})
      u32(out, v);
    u16(out, static_cast<uint32_t>(name.size()));
    u16(out, 0);
    out += name + data;
    u32(central, 0x02014b50);
    for (uint32_t v : {20u, 20u, 0u, method, 0u, 0u}) u16(central, v);
    for (uint32_t v :
         {crc, static_cast<uint32_t>(data.size()), static_cast<uint32_t>(content.size())})
      u32(central, v);
    for (uint32_t v : {static_cast<uint32_t>(name.size()), 0u, 0u, 0u, 0u}) u16(central, v);
    u32(central, 0);
    u32(central, offset);
    central += name;
  }
  uint32_t central_at = static_cast<uint32_t>(out.size());
  out += central;
  u32(out, 0x06054b50);
  for (uint32_t v :
       {0u, 0u, static_cast<uint32_t>(files.size()), static_cast<uint32_t>(files.size())})
    u16(out, v);
  u32(out, static_cast<uint32_t>(central.size()));
  u32(out, central_at);
  u16(out, 0);
  return out;
}

class KfpConformanceTest : public BackendApiTest {
 protected:
  std::string CreateExperiment(const std::string& name) {
    auto [status, e] =
        Call(Method::kPost, "/apis/v2beta1/experiments", json{{"display_name", name}}.dump());
    EXPECT_EQ(status, 200) << e;
    return e.value("experiment_id", "");
  }

  // Posts `content` as the multipart file `file_name` to `target`.
  std::pair<int, json> PostFile(const std::string& target, const std::string& file_name,
                                const std::string& content) {
    auto form = http::BuildMultipart({{"uploadfile", file_name, "", content}});
    auto r = client_->Send(Method::kPost, target, form.body, form.content_type);
    EXPECT_TRUE(r.ok());
    if (!r.ok()) return {0, nullptr};
    return {r->status, json::parse(r->body, nullptr, false)};
  }

  // The google.rpc.Status grpc-gateway writes for a KFP UserError.
  static void ExpectUserError(const json& body, int grpc_code, const std::string& message) {
    ASSERT_TRUE(body.is_object()) << body;
    EXPECT_EQ(body["code"], grpc_code) << body;
    ASSERT_TRUE(body["details"].is_array()) << body;
    ASSERT_EQ(body["details"].size(), 1u) << body;
    const json& d = body["details"][0];
    EXPECT_EQ(d["@type"], "type.googleapis.com/google.rpc.Status") << body;
    EXPECT_EQ(d["code"], grpc_code) << body;
    EXPECT_EQ(d["message"], message) << body;
  }
};

// backend/src/apiserver/server/list_request_util.go, parseAPIFilter: the
// filter is URL-unescaped once more after the query string was, so a '+'
// that reached the server as "%2B" is a space by the time it is compared.
TEST_F(KfpConformanceTest, FilterIsUnescapedOnceMore) {
  std::string id = CreateExperiment("a b");
  auto [status, body] = Call(Method::kGet,
                             "/apis/v2beta1/experiments?filter=%7B%22predicates%22%3A%5B%7B%22"
                             "operation%22%3A%22EQUALS%22%2C%22key%22%3A%22name%22%2C%22string_"
                             "value%22%3A%22a%2Bb%22%7D%5D%7D");
  ASSERT_EQ(status, 200) << body;
  ASSERT_EQ(body["experiments"].size(), 1u) << body;
  EXPECT_EQ(body["experiments"][0]["experiment_id"], id);

  // A '%' that is not an escape is refused, quoting the filter as KFP does.
  auto [bad, error] = Call(Method::kGet, "/apis/v2beta1/experiments?filter=100%25");
  EXPECT_EQ(bad, 400) << error;
  ExpectUserError(error, 3, "failed to parse valid filter from \"100%\": invalid URL escape \"%\"");
}

// backend/src/apiserver/list/list.go, NewOptions: sort_by lowercased and split
// on white space; the UI sends "created_at desc" (frontend's
// RunList/ExperimentList), people type "created_at DESC".
TEST_F(KfpConformanceTest, SortByAsKfpSplitsIt) {
  CreateExperiment("first");
  CreateExperiment("second");
  for (const char* sort : {"created_at%20DESC", "%20Created_At%20%20desc%20", "created_at+desc"}) {
    auto [status, body] =
        Call(Method::kGet, std::string("/apis/v2beta1/experiments?sort_by=") + sort);
    ASSERT_EQ(status, 200) << sort << " " << body;
    ASSERT_EQ(body["experiments"].size(), 3u) << body;
    EXPECT_EQ(body["experiments"][0]["display_name"], "second") << sort;
  }
  auto [bad, error] = Call(Method::kGet, "/apis/v2beta1/experiments?sort_by=created_at%20up");
  EXPECT_EQ(bad, 400);
  ExpectUserError(error, 3,
                  "Received invalid sort by format \"created_at up\". Supported format: "
                  "\"field_name\", \"field_name desc\", or \"field_name asc\"");
  auto [three, error3] = Call(Method::kGet, "/apis/v2beta1/experiments?sort_by=a%20b%20c");
  EXPECT_EQ(three, 400) << error3;
}

// backend/src/apiserver/model/run.go and job.go (APIToModelFieldMap): what
// each resource may be sorted and filtered on; the rest is refused.
TEST_F(KfpConformanceTest, SortAndFilterKeysPerResourceAsKfpModels) {
  // Runs: description, namespace, state_history and metric:<name> are KFP's.
  for (const char* sort : {"description", "namespace", "state_history", "metric:accuracy", "status",
                           "recurring_run_id"}) {
    auto [status, body] = Call(Method::kGet, std::string("/apis/v2beta1/runs?sort_by=") + sort);
    EXPECT_EQ(status, 200) << sort << " " << body;
  }
  auto [desc, body] = Call(
      Method::kGet,
      "/apis/v2beta1/runs?filter=%7B%22predicates%22%3A%5B%7B%22operation%22%3A1%2C%22key%22%3A"
      "%22description%22%2C%22stringValue%22%3A%22x%22%7D%5D%7D");
  EXPECT_EQ(desc, 200) << body;
  // KFP's run model has no pipeline_version_id to sort on.
  auto [bad_sort, sort_error] =
      Call(Method::kGet, "/apis/v2beta1/runs?sort_by=pipeline_version_id");
  EXPECT_EQ(bad_sort, 400);
  ExpectUserError(sort_error, 3,
                  "Invalid sorting field: \"pipeline_version_id\" on listable type Run");
  // Nor its job model a status or an experiment_id to filter on.
  auto [bad_filter, filter_error] = Call(
      Method::kGet,
      "/apis/v2beta1/recurringruns?filter=%7B%22predicates%22%3A%5B%7B%22operation%22%3A1%2C%22"
      "key%22%3A%22status%22%2C%22stringValue%22%3A%22ENABLED%22%7D%5D%7D");
  EXPECT_EQ(bad_filter, 400);
  ExpectUserError(filter_error, 3, "no support for filtering on unrecognized field \"status\"");
  auto [pv, pv_body] = Call(Method::kGet, "/apis/v2beta1/pipelines?sort_by=namespace");
  EXPECT_EQ(pv, 200) << pv_body;
  auto [ex, ex_body] = Call(Method::kGet, "/apis/v2beta1/experiments?sort_by=last_run_created_at");
  EXPECT_EQ(ex, 200) << ex_body;
}

// backend/src/apiserver/server/list_request_util.go, validatedListOptions: a
// page token with a sort or filter that differs from the one it was made
// with is refused; the same criteria, or none, continue the listing.
TEST_F(KfpConformanceTest, PageTokenMustMatchSortAndFilter) {
  CreateExperiment("one");
  CreateExperiment("two");
  auto [status, first] =
      Call(Method::kGet, "/apis/v2beta1/experiments?page_size=1&sort_by=created_at%20desc");
  ASSERT_EQ(status, 200) << first;
  std::string token = first.value("next_page_token", "");
  ASSERT_FALSE(token.empty()) << first;

  auto [same, same_body] =
      Call(Method::kGet, "/apis/v2beta1/experiments?page_size=1&page_token=" + token +
                             "&sort_by=CREATED_AT%20DESC");
  EXPECT_EQ(same, 200) << same_body;
  auto [none, none_body] =
      Call(Method::kGet, "/apis/v2beta1/experiments?page_size=1&page_token=" + token);
  ASSERT_EQ(none, 200) << none_body;
  EXPECT_EQ(none_body["experiments"][0]["display_name"], "one");

  auto [other, other_body] =
      Call(Method::kGet,
           "/apis/v2beta1/experiments?page_size=1&page_token=" + token + "&sort_by=display_name");
  EXPECT_EQ(other, 400);
  ExpectUserError(other_body, 3, kTokenMismatch);
  auto [filtered, filtered_body] =
      Call(Method::kGet,
           "/apis/v2beta1/experiments?page_size=1&page_token=" + token +
               "&sort_by=created_at%20desc&filter=%7B%22predicates%22%3A%5B%7B%22operation"
               "%22%3A1%2C%22key%22%3A%22name%22%2C%22stringValue%22%3A%22one%22%7D%5D%7D");
  EXPECT_EQ(filtered, 400);
  ExpectUserError(filtered_body, 3, kTokenMismatch);
}

// backend/src/common/util/error.go, UserError.GRPCStatus, as grpc-gateway v2
// writes it: the details hold one google.rpc.Status. A body that does not
// parse is refused by grpc-gateway itself, with no details.
TEST_F(KfpConformanceTest, ErrorBodiesCarryKfpDetails) {
  auto [status, body] = Call(Method::kGet, "/apis/v2beta1/experiments/no-such-experiment");
  EXPECT_EQ(status, 404);
  ASSERT_TRUE(body["details"].is_array()) << body;
  ASSERT_EQ(body["details"].size(), 1u) << body;
  EXPECT_EQ(body["code"], 5);
  EXPECT_EQ(body["details"][0]["@type"], "type.googleapis.com/google.rpc.Status");
  EXPECT_EQ(body["details"][0]["code"], 5);
  EXPECT_FALSE(body["details"][0]["message"].get<std::string>().empty());

  auto [bad, bad_body] =
      Call(Method::kPost, "/apis/v2beta1/experiments", R"({"display_name":"x","colour":"red"})");
  EXPECT_EQ(bad, 400);
  EXPECT_EQ(bad_body["code"], 3);
  EXPECT_EQ(bad_body["details"], json::array()) << bad_body;
}

// grpc-gateway reads bodies with protojson: a field by its proto name or its
// JSON (lowerCamelCase) name, enums by name or number; unknown fields and a
// field given under both names are refused.
TEST_F(KfpConformanceTest, BodiesTakeJsonNamesAndEnumNumbers) {
  auto [status, e] = Call(Method::kPost, "/apis/v2beta1/experiments",
                          R"({"displayName":"camel","description":"d"})");
  ASSERT_EQ(status, 200) << e;
  EXPECT_EQ(e["display_name"], "camel");

  auto [both, both_body] =
      Call(Method::kPost, "/apis/v2beta1/experiments", R"({"displayName":"a","display_name":"b"})");
  EXPECT_EQ(both, 400) << both_body;
  auto [unknown, unknown_body] =
      Call(Method::kPost, "/apis/v2beta1/experiments", R"({"displayNames":"a"})");
  EXPECT_EQ(unknown, 400) << unknown_body;

  json p = Upload("two-steps", kPipeline);
  // RecurringRun.Mode DISABLE is 2 in recurring_run.proto.
  json rr = {{"displayName", "nightly"},
             {"pipelineVersionReference", {{"pipelineId", p["pipeline_id"]}}},
             {"trigger", {{"periodicSchedule", {{"intervalSecond", "3600"}}}}},
             {"maxConcurrency", "1"},
             {"mode", 2}};
  auto [created, created_body] = Call(Method::kPost, "/apis/v2beta1/recurringruns", rr.dump());
  ASSERT_EQ(created, 200) << created_body;
  EXPECT_EQ(created_body["status"], "DISABLED");
  EXPECT_EQ(created_body["mode"], "DISABLE");
  rr["mode"] = 7;
  auto [bad_enum, bad_enum_body] = Call(Method::kPost, "/apis/v2beta1/recurringruns", rr.dump());
  EXPECT_EQ(bad_enum, 400) << bad_enum_body;
}

// backend/src/apiserver/server/api_converter.go: every timestamp of a
// resource is set (timestamppb.New of the stored seconds), so one not reached
// yet is written as the epoch rather than left out.
TEST_F(KfpConformanceTest, UnsetTimesAreWrittenAsTheEpoch) {
  auto [es, experiment] =
      Call(Method::kPost, "/apis/v2beta1/experiments", R"({"display_name":"fresh"})");
  ASSERT_EQ(es, 200) << experiment;
  EXPECT_EQ(experiment["last_run_created_at"], "1970-01-01T00:00:00Z");
  json p = Upload("two-steps", kPipeline);
  json body = {{"display_name", "r"},
               {"pipeline_version_reference", {{"pipeline_id", p["pipeline_id"]}}}};
  auto [rs, run] = Call(Method::kPost, "/apis/v2beta1/runs", body.dump());
  ASSERT_EQ(rs, 200) << run;
  EXPECT_EQ(run["finished_at"], "1970-01-01T00:00:00Z") << run;
  EXPECT_NE(run["created_at"], "1970-01-01T00:00:00Z");
}

// backend/src/apiserver/server/api_converter.go, toApiRun and
// toApiRecurringRun: a runtime config with neither parameters nor a pipeline
// root is left out (runtimeConfig = nil), and `parameters`, a proto3 map, is
// omitted when empty. KFP's SDK sends {"parameters": {}} for a run without
// arguments (client.py, _create_job_config); the answer has no runtime_config.
TEST_F(KfpConformanceTest, RuntimeConfigWithoutParametersIsLeftOut) {
  json p = Upload("two-steps", kPipeline);
  json body = {{"display_name", "r"},
               {"pipeline_version_reference", {{"pipeline_id", p["pipeline_id"]}}},
               {"runtime_config", {{"parameters", json::object()}}}};
  auto [rs, run] = Call(Method::kPost, "/apis/v2beta1/runs", body.dump());
  ASSERT_EQ(rs, 200) << run;
  EXPECT_FALSE(run.contains("runtime_config")) << run;
  json got = WaitForRun(run["run_id"]);
  EXPECT_FALSE(got.contains("runtime_config")) << got;

  body["trigger"] = {{"periodic_schedule", {{"interval_second", "3600"}}}};
  auto [cs, recurring] = Call(Method::kPost, "/apis/v2beta1/recurringruns", body.dump());
  ASSERT_EQ(cs, 200) << recurring;
  EXPECT_FALSE(recurring.contains("runtime_config")) << recurring;

  body["runtime_config"]["parameters"] = {{"message", "hi"}};
  body.erase("trigger");
  auto [ps, with] = Call(Method::kPost, "/apis/v2beta1/runs", body.dump());
  ASSERT_EQ(ps, 200) << with;
  EXPECT_EQ(with["runtime_config"], json({{"parameters", {{"message", "hi"}}}})) << with;
}

// backend/src/apiserver/resource/resource_manager.go, DeleteExperiment: the
// default experiment, where runs without one go, cannot be deleted (a
// BadRequestError, which is Aborted: 409); any other can.
TEST_F(KfpConformanceTest, TheDefaultExperimentCannotBeDeleted) {
  auto [ls, list] = Call(
      Method::kGet,
      "/apis/v2beta1/experiments?filter=" +
          http::PercentEncode(
              R"({"predicates":[{"operation":"EQUALS","key":"name","string_value":"Default"}]})"));
  ASSERT_EQ(ls, 200) << list;
  ASSERT_EQ(list["experiments"].size(), 1u) << list;
  std::string id = list["experiments"][0]["experiment_id"];
  for (const char* api : {"/apis/v2beta1/experiments/", "/apis/v1beta1/experiments/"}) {
    auto [status, error] = Call(Method::kDelete, api + id);
    EXPECT_EQ(status, 409) << error;
    ExpectUserError(
        error, 10,
        "Failed to delete experiment " + id + ". The default experiment cannot be deleted");
  }
  EXPECT_EQ(Call(Method::kGet, "/apis/v2beta1/experiments/" + id).first, 200);
  std::string other = CreateExperiment("other");
  EXPECT_EQ(Call(Method::kDelete, "/apis/v2beta1/experiments/" + other).first, 200);
}

// backend/src/apiserver/resource/resource_manager.go: ArchiveExperiment
// archives the experiment's runs; UnarchiveRun refuses while the experiment
// stays archived (a FailedPreconditionError: code 9, 400).
TEST_F(KfpConformanceTest, ARunOfAnArchivedExperimentStaysArchived) {
  std::string experiment = CreateExperiment("archived");
  json p = Upload("two-steps", kPipeline);
  json body = {{"display_name", "r"},
               {"experiment_id", experiment},
               {"pipeline_version_reference", {{"pipeline_id", p["pipeline_id"]}}}};
  auto [rs, run] = Call(Method::kPost, "/apis/v2beta1/runs", body.dump());
  ASSERT_EQ(rs, 200) << run;
  std::string id = run["run_id"];
  WaitForRun(id);
  ASSERT_EQ(Call(Method::kPost, "/apis/v2beta1/experiments/" + experiment + ":archive").first, 200);
  EXPECT_EQ(Call(Method::kGet, "/apis/v2beta1/runs/" + id).second["storage_state"], "ARCHIVED");
  auto [status, error] = Call(Method::kPost, "/apis/v2beta1/runs/" + id + ":unarchive");
  EXPECT_EQ(status, 400) << error;
  ExpectUserError(error, 9,
                  "Failed to unarchive run " + id + " as experiment " + experiment +
                      " must be un-archived first");
  ASSERT_EQ(Call(Method::kPost, "/apis/v2beta1/experiments/" + experiment + ":unarchive").first,
            200);
  EXPECT_EQ(Call(Method::kGet, "/apis/v2beta1/runs/" + id).second["storage_state"], "ARCHIVED");
  EXPECT_EQ(Call(Method::kPost, "/apis/v2beta1/runs/" + id + ":unarchive").first, 200);
  EXPECT_EQ(Call(Method::kGet, "/apis/v2beta1/runs/" + id).second["storage_state"], "AVAILABLE");
}

// backend/src/apiserver/template/template.go, setDefaultServiceAccount: a run
// that names no service account runs as pipeline-runner (KFP's
// DefaultPipelineRunnerServiceAccount), which CreateRun reads back from the
// workflow (resource_manager.go); one that names its own keeps it. A
// recurring run keeps what it was given (v2_template.go puts it in the
// ScheduledWorkflow's spec as it is).
TEST_F(KfpConformanceTest, RunsWithoutAServiceAccountRunAsPipelineRunner) {
  json p = Upload("two-steps", kPipeline);
  json body = {{"display_name", "r"},
               {"pipeline_version_reference", {{"pipeline_id", p["pipeline_id"]}}}};
  auto [rs, run] = Call(Method::kPost, "/apis/v2beta1/runs", body.dump());
  ASSERT_EQ(rs, 200) << run;
  EXPECT_EQ(run["service_account"], "pipeline-runner") << run;
  EXPECT_EQ(WaitForRun(run["run_id"])["service_account"], "pipeline-runner");

  body["service_account"] = "trainer";
  auto [ns, named] = Call(Method::kPost, "/apis/v2beta1/runs", body.dump());
  ASSERT_EQ(ns, 200) << named;
  EXPECT_EQ(named["service_account"], "trainer") << named;

  body.erase("service_account");
  body["trigger"] = {{"periodic_schedule", {{"interval_second", "3600"}}}};
  auto [cs, recurring] = Call(Method::kPost, "/apis/v2beta1/recurringruns", body.dump());
  ASSERT_EQ(cs, 200) << recurring;
  EXPECT_FALSE(recurring.contains("service_account")) << recurring;
}

// backend/src/apiserver/server/api_converter.go, toApiRecurringRun: mode and
// status both come from job.Enabled, so they agree after every
// enable and disable (the SDK's disable_recurring_run and
// enable_recurring_run post to ":disable" and ":enable").
TEST_F(KfpConformanceTest, RecurringRunModeAndStatusFollowOneFlag) {
  json p = Upload("two-steps", kPipeline);
  json rr = {{"display_name", "hourly"},
             {"pipeline_version_reference", {{"pipeline_id", p["pipeline_id"]}}},
             {"trigger", {{"periodic_schedule", {{"interval_second", "3600"}}}}}};
  auto [status, created] = Call(Method::kPost, "/apis/v2beta1/recurringruns", rr.dump());
  ASSERT_EQ(status, 200) << created;
  EXPECT_EQ(created["mode"], "ENABLE");
  EXPECT_EQ(created["status"], "ENABLED");
  std::string id = created["recurring_run_id"];
  auto expect = [&](const char* mode, const char* state) {
    auto [s, got] = Call(Method::kGet, "/apis/v2beta1/recurringruns/" + id);
    ASSERT_EQ(s, 200) << got;
    EXPECT_EQ(got["mode"], mode) << got;
    EXPECT_EQ(got["status"], state) << got;
  };
  EXPECT_EQ(Call(Method::kPost, "/apis/v2beta1/recurringruns/" + id + ":disable").first, 200);
  expect("DISABLE", "DISABLED");
  EXPECT_EQ(Call(Method::kPost, "/apis/v2beta1/recurringruns/" + id + ":enable").first, 200);
  expect("ENABLE", "ENABLED");
  auto [listed, list] = Call(Method::kGet, "/apis/v2beta1/recurringruns");
  ASSERT_EQ(listed, 200);
  EXPECT_EQ(list["recurringRuns"][0]["mode"], "ENABLE");
}

// frontend/src/lib/Apis.ts, uploadPipelineV2 and uploadPipelineVersionV2: the
// UI sends name (possibly empty) and display_name. KFP's buildPipelineName
// (pipeline_server.go) names the upload by name, else display name, else file.
TEST_F(KfpConformanceTest, UploadNamesFallBackAsKfpBuildsThem) {
  auto [status, p] = PostFile(
      "/apis/v2beta1/pipelines/upload?name=&display_name=Shown%20Name&description=", "p.yaml",
      kPipeline);
  ASSERT_EQ(status, 200) << p;
  EXPECT_EQ(p["name"], "Shown Name");
  EXPECT_EQ(p["display_name"], "Shown Name");
  std::string id = p["pipeline_id"];

  auto [by_file, named] = PostFile("/apis/v2beta1/pipelines/upload", "by-file.yaml", kPipeline);
  ASSERT_EQ(by_file, 200) << named;
  EXPECT_EQ(named["name"], "by-file.yaml");
  EXPECT_EQ(named["display_name"], "by-file.yaml");

  auto [v_status, v] = PostFile(
      "/apis/v2beta1/pipelines/upload_version?name=&pipelineid=" + id + "&display_name=second",
      "v.yaml", kPipeline);
  ASSERT_EQ(v_status, 200) << v;
  EXPECT_EQ(v["name"], "second");
  EXPECT_EQ(v["display_name"], "second");
}

// backend/src/apiserver/server/util.go, ReadPipelineFile: .tar.gz and .zip
// packages holding pipeline.yaml, or a YAML file first.
TEST_F(KfpConformanceTest, UploadsTakeTarballsAndZips) {
  auto [tgz, tgz_body] = PostFile("/apis/v2beta1/pipelines/upload?name=from-tgz", "p.tar.gz",
                                  TarGz({{"README.md", "hi"}, {"pipeline.yaml", kPipeline}}));
  EXPECT_EQ(tgz, 200) << tgz_body;
  auto [first, first_body] = PostFile("/apis/v2beta1/pipelines/upload?name=first-yaml", "p.tgz",
                                      TarGz({{"two.yml", kPipeline}}));
  EXPECT_EQ(first, 200) << first_body;
  auto [zip, zip_body] = PostFile("/apis/v2beta1/pipelines/upload?name=from-zip", "p.zip",
                                  Zip({{"notes.txt", "x"}, {"pipeline.yaml", kPipeline}}));
  ASSERT_EQ(zip, 200) << zip_body;
  auto [spec_status, versions] =
      Call(Method::kGet,
           "/apis/v2beta1/pipelines/" + zip_body["pipeline_id"].get<std::string>() + "/versions");
  ASSERT_EQ(spec_status, 200);
  EXPECT_EQ(versions["pipeline_versions"][0]["pipeline_spec"]["pipelineInfo"]["name"], "two-steps");

  auto [no_yaml, no_yaml_body] =
      PostFile("/apis/v2beta1/pipelines/upload?name=no-yaml", "p.zip", Zip({{"readme.txt", "x"}}));
  EXPECT_EQ(no_yaml, 400);
  EXPECT_EQ(no_yaml_body["error_message"], "Failed to read a pipeline spec file") << no_yaml_body;
  EXPECT_EQ(no_yaml_body["error_details"],
            "Error extracting pipeline from the zip file. Expecting a pipeline.yaml file inside "
            "the zip. Got: readme.txt");
}

// backend/src/apiserver/server/util.go, ReadPipelineFile, case by case.
TEST(PipelineFile, ReadsPackagesAsKfpDoes) {
  auto error = [](std::string_view name, const std::string& bytes) {
    auto r = ReadPipelineFile(name, bytes);
    EXPECT_FALSE(r.ok()) << name;
    return r.ok() ? std::string() : r.error().message;
  };
  constexpr const char* kUnexpected =
      "Unexpected pipeline file format. Support .zip, .tar.gz, .json or YAML";
  EXPECT_EQ(*ReadPipelineFile("p.json", "{}"), "{}");
  EXPECT_EQ(*ReadPipelineFile("p.yml", "a: 1"), "a: 1");
  // Suffixes are case-sensitive, and a signature needs more than two bytes.
  EXPECT_EQ(error("p.YAML", "a: 1"), kUnexpected);
  EXPECT_EQ(error("p.zip", "PK"), kUnexpected);
  // An archive is known by its bytes, whatever its name.
  EXPECT_EQ(*ReadPipelineFile("package", TarGz({{"pipeline.yaml", "a: 1"}})), "a: 1");

  constexpr const char* kBadTarball =
      "Error extracting pipeline from the tarball file. Not a valid tarball file";
  EXPECT_EQ(error("p.tar.gz", Deflate("not a tar", 16 + MAX_WBITS)), kBadTarball);
  std::string tgz = TarGz({{"pipeline.yaml", std::string(4000, 'x')}});
  EXPECT_EQ(error("p.tar.gz", tgz.substr(0, tgz.size() / 2)), kBadTarball);
  EXPECT_EQ(error("p.tar.gz", TarGz({{"notes.txt", "x"}, {"other.yaml", "a: 1"}})),
            "Error extracting pipeline from the tarball file. Expecting a pipeline.yaml file "
            "inside the tarball. Got: notes.txt");

  std::string zip = Zip({{"pipeline.yaml", "a: 1"}});
  zip[zip.find("a: 1")] = 'b';  // stored bytes no longer match their CRC
  EXPECT_EQ(error("p.zip", zip), "Error reading pipeline YAML from the zip file");
  EXPECT_EQ(error("p.zip", "PK\x03\x04 not really"),
            "Error extracting pipeline from the zip file. Not a valid zip file");

  EXPECT_THAT(error("p.yaml", std::string(kMaxUploadBytes + 1, 'a')),
              HasSubstr("File size too large"));
}

// KFP reads what an archive expands to without a bound; here a small archive
// may not become a pipeline larger than one could upload (a 122 KB tarball
// once became a 120 MiB stored pipeline, at 10.9 s of CPU and 1.1 GB each).
TEST(PipelineFile, AnArchiveExpandsToNoMoreThanKfpsPipelineSizeLimit) {
  auto error = [](std::string_view name, std::string_view bytes) {
    auto text = ReadPipelineFile(name, bytes);
    EXPECT_FALSE(text.ok());
    return text.ok() ? std::string() : text.error().message;
  };
  const std::string too_big(kMaxUploadBytes + 1, 'a');
  const std::string tgz = TarGz({{"pipeline.yaml", too_big}});
  ASSERT_LT(tgz.size(), 1u << 20);
  const std::string kfp_message =
      "File size too large (33554433 bytes). Maximum supported size: 33554432. Consider moving "
      "large embedded artifacts or notebooks or Python code into a container image or object "
      "store.";
  EXPECT_EQ(error("p.tar.gz", tgz), kfp_message);
  // (Zip stores its first entry and deflates the rest.)
  EXPECT_EQ(error("p.zip", Zip({{"notes.txt", "x"}, {"pipeline.yaml", too_big}})), kfp_message);
  // A tar stream padded past the limit with other entries stops expanding
  // there, whatever the entry sizes say.
  const std::string padded =
      TarGz({{"a.bin", std::string(kMaxUploadBytes + (2 << 20), 'b')}, {"pipeline.yaml", "a: 1"}});
  EXPECT_EQ(error("p.tar.gz", padded).find("File size too large (more than "), 0u);
  // A zip entry whose directory understates its size is caught as it inflates.
  std::string lying = Zip({{"notes.txt", "x"}, {"pipeline.yaml", too_big}});
  for (size_t at = lying.find("PK\x01\x02"); at != std::string::npos;
       at = lying.find("PK\x01\x02", at + 1)) {
    lying.replace(at + 24, 4, std::string("\x10\0\0\0", 4));  // uncompressed size: 16
  }
  EXPECT_EQ(error("p.zip", lying).find("File size too large (more than 33554432 bytes)"), 0u)
      << error("p.zip", lying);
  // Exactly at the limit is accepted.
  auto at_limit = ReadPipelineFile("p.tar.gz", TarGz({{"pipeline.yaml", too_big.substr(1)}}));
  ASSERT_TRUE(at_limit.ok()) << at_limit.error().message;
  EXPECT_EQ(at_limit->size(), kMaxUploadBytes);
}

// backend/src/apiserver/server/pipeline_upload_server.go: upload errors are
// {"error_message", "error_details"}, with KFP's statuses.
TEST_F(KfpConformanceTest, UploadErrorsInKfpUploadShape) {
  auto [txt, txt_body] = PostFile("/apis/v2beta1/pipelines/upload?name=t", "p.txt", kPipeline);
  EXPECT_EQ(txt, 400);
  EXPECT_EQ(txt_body["error_message"], "Failed to read a pipeline spec file") << txt_body;
  EXPECT_EQ(txt_body["error_details"],
            "Unexpected pipeline file format. Support .zip, .tar.gz, .json or YAML");

  auto [ok, p] = PostFile("/apis/v2beta1/pipelines/upload?name=dup", "p.yaml", kPipeline);
  ASSERT_EQ(ok, 200) << p;
  auto [dup, dup_body] = PostFile("/apis/v2beta1/pipelines/upload?name=dup", "p.yaml", kPipeline);
  EXPECT_EQ(dup, 409);
  EXPECT_EQ(dup_body["error_message"], "Failed to create a pipeline and a pipeline version")
      << dup_body;

  auto [bad_spec, bad_spec_body] =
      PostFile("/apis/v2beta1/pipelines/upload?name=bad", "bad.yaml", "key: [unclosed");
  EXPECT_EQ(bad_spec, 400);
  EXPECT_THAT(bad_spec_body["error_message"].get<std::string>(), HasSubstr("bad.yaml"))
      << bad_spec_body;

  // An unknown pipeline is a 400 here, not a 404.
  auto [missing, missing_body] = PostFile(
      "/apis/v2beta1/pipelines/upload_version?name=v&pipelineid=nope", "v.yaml", kPipeline);
  EXPECT_EQ(missing, 400);
  EXPECT_EQ(missing_body["error_message"], "Failed to create a pipeline version") << missing_body;
}

// backend/api/v2beta1/pipeline.proto (tags), pipeline_server.go
// (extractTagFiltersFromFilterSpec), pipeline_store.go (updateEntityFields)
// and model/pipeline_tags.go (ValidateTags): tags on create, on upload, in
// PATCH (present replaces, absent keeps, empty clears) and in "tags.<key>"
// filters, EQUALS on a string only.
TEST_F(KfpConformanceTest, PipelineAndVersionTagsAsKfpKeepsThem) {
  auto [cs, created] = Call(Method::kPost, "/apis/v2beta1/pipelines",
                            R"({"display_name":"tagged","tags":{"team":"ml-ops","tier":"gold"}})");
  ASSERT_EQ(cs, 200) << created;
  EXPECT_EQ(created["tags"], json({{"team", "ml-ops"}, {"tier", "gold"}}));
  std::string id = created["pipeline_id"];
  auto [us, uploaded] =
      PostFile("/apis/v2beta1/pipelines/upload?name=up&tags=%7B%22team%22%3A%22ml-ops%22%7D",
               "p.yaml", kPipeline);
  ASSERT_EQ(us, 200) << uploaded;
  EXPECT_EQ(uploaded["tags"], json({{"team", "ml-ops"}}));

  auto count = [&](const std::string& filter) {
    auto [status, body] =
        Call(Method::kGet, "/apis/v2beta1/pipelines?filter=" + http::PercentEncode(filter));
    EXPECT_EQ(status, 200) << body;
    return body.contains("pipelines") ? body["pipelines"].size() : 0u;
  };
  EXPECT_EQ(count(R"({"predicates":[{"operation":1,"key":"tags.team","stringValue":"ml-ops"}]})"),
            2u);
  EXPECT_EQ(
      count(R"({"predicates":[{"operation":"EQUALS","key":"tags.team","string_value":"ml-ops"},
                                   {"operation":"EQUALS","key":"tags.tier","string_value":"gold"}]})"),
      1u);
  auto [ne, ne_body] =
      Call(Method::kGet,
           "/apis/v2beta1/pipelines?filter=" +
               http::PercentEncode(
                   R"({"predicates":[{"operation":2,"key":"tags.team","string_value":"x"}]})"));
  EXPECT_EQ(ne, 400);
  ExpectUserError(ne_body, 3,
                  "only EQUALS operation is supported for tag filtering, got NOT_EQUALS for key "
                  "\"tags.team\"");
  auto [iv, iv_body] = Call(
      Method::kGet, "/apis/v2beta1/pipelines?filter=" +
                        http::PercentEncode(
                            R"({"predicates":[{"operation":1,"key":"tags.team","int_value":1}]})"));
  EXPECT_EQ(iv, 400);
  ExpectUserError(iv_body, 3, "tag filter value must be a string for key \"tags.team\"");
  EXPECT_EQ(Call(Method::kGet, "/apis/v2beta1/pipelines?sort_by=tags.team").first, 400);

  // PATCH: present tags replace the set, absent keep it, empty clear it.
  auto [p1, patched] =
      Call(Method::kPatch, "/apis/v2beta1/pipelines/" + id, R"({"tags":{"team":"infra"}})");
  ASSERT_EQ(p1, 200) << patched;
  EXPECT_EQ(patched["tags"], json({{"team", "infra"}}));
  auto [p2, renamed] =
      Call(Method::kPatch, "/apis/v2beta1/pipelines/" + id, R"({"display_name":"renamed"})");
  ASSERT_EQ(p2, 200) << renamed;
  EXPECT_EQ(renamed["tags"], json({{"team", "infra"}}));
  auto [p3, cleared] = Call(Method::kPatch, "/apis/v2beta1/pipelines/" + id, R"({"tags":{}})");
  ASSERT_EQ(p3, 200) << cleared;
  EXPECT_FALSE(cleared.contains("tags")) << cleared;
  EXPECT_FALSE(Call(Method::kGet, "/apis/v2beta1/pipelines/" + id).second.contains("tags"));

  auto [bad, bad_body] = Call(Method::kPost, "/apis/v2beta1/pipelines",
                              R"({"display_name":"dots","tags":{"a.b":"x"}})");
  EXPECT_EQ(bad, 400);
  ExpectUserError(bad_body, 3, "tag key \"a.b\" must not contain '.' character");
  auto [bad_up, bad_up_body] =
      PostFile("/apis/v2beta1/pipelines/upload?name=t2&tags=notjson", "p.yaml", kPipeline);
  EXPECT_EQ(bad_up, 400);
  EXPECT_EQ(bad_up_body["error_message"],
            "Failed to parse tags query parameter. Expected JSON object with string keys and "
            "values");

  // Versions: tagged on upload_version, filtered among their pipeline's.
  std::string up_id = uploaded["pipeline_id"];
  auto [vs, version] =
      PostFile("/apis/v2beta1/pipelines/upload_version?name=v2&pipelineid=" + up_id +
                   "&tags=%7B%22stage%22%3A%22prod%22%7D",
               "v.yaml", kPipeline);
  ASSERT_EQ(vs, 200) << version;
  EXPECT_EQ(version["tags"], json({{"stage", "prod"}}));
  auto [ls, versions] =
      Call(Method::kGet,
           "/apis/v2beta1/pipelines/" + up_id + "/versions?filter=" +
               http::PercentEncode(
                   R"({"predicates":[{"operation":1,"key":"tags.stage","stringValue":"prod"}]})"));
  ASSERT_EQ(ls, 200) << versions;
  ASSERT_EQ(versions["pipeline_versions"].size(), 1u) << versions;
  EXPECT_EQ(versions["pipeline_versions"][0]["name"], "v2");
}

}  // namespace
}  // namespace kfpbench::server
