// Capture against a target that answers as an attacker would: ids that are
// paths, page tokens that repeat, runs outside the window, answers nested
// 100,000 deep. Whatever it says, capture writes below --out alone, ends,
// and says what was wrong.
#include <algorithm>
#include <fstream>
#include <functional>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "capture/capture.h"
#include "capture/derive.h"
#include "capture/records.h"
#include "harness/test_support.h"
#include "util/files.h"
#include "util/ids.h"
#include "util/json_reader.h"

namespace kfpbench::capture {
namespace {

using ::testing::HasSubstr;

namespace fs = std::filesystem;
using nlohmann::json;

const char* kSpec = R"({"pipelineInfo":{"name":"p"},"schemaVersion":"2.1.0",
  "sdkVersion":"kfp-2.13.0","root":{"dag":{"tasks":{"t":{"taskInfo":{"name":"t"},
  "componentRef":{"name":"comp-t"}}}}},"components":{"comp-t":{"executorLabel":"exec-t"}},
  "deploymentSpec":{"executors":{"exec-t":{"container":{"image":"alpine"}}}}})";

// A KFP-shaped target whose answers each test writes.
class HostileTarget : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kfpbench-hostile-" + NewUuid());
    out_ = dir_ / "out";
    fs::create_directories(dir_);
    ASSERT_TRUE(target_.started());
  }
  void TearDown() override { fs::remove_all(dir_); }

  static json Run(const std::string& id, const std::string& version, WallTime created) {
    return {
        {"run_id", id},
        {"display_name", "r"},
        {"experiment_id", "e"},
        {"created_at", FormatRfc3339(created)},
        {"finished_at", FormatRfc3339(created + std::chrono::seconds(5))},
        {"state", "SUCCEEDED"},
        {"pipeline_version_reference", {{"pipeline_id", "p"}, {"pipeline_version_id", version}}}};
  }

  // Answers the list with `runs` (one page), each run's GetRun with itself,
  // and each version with a one-step spec.
  void Serve(std::vector<json> runs) {
    answer_ = [runs](const http::Request& r) {
      const std::string runs_path = "/apis/v2beta1/runs";
      if (r.path == runs_path) return http::Response::Json(200, json{{"runs", runs}}.dump());
      if (r.path.starts_with(runs_path + "/")) {
        std::string id = r.path.substr(runs_path.size() + 1);
        for (const auto& run : runs) {
          if (run["run_id"] == id) return http::Response::Json(200, run.dump());
        }
        return http::Response::Json(404, R"({"code":5,"message":"no run"})");
      }
      if (r.path.find("/versions/") != std::string::npos) {
        std::string id = r.path.substr(r.path.find("/versions/") + 10);
        json v = {{"pipeline_id", "p"},
                  {"pipeline_version_id", id},
                  {"display_name", "v"},
                  {"pipeline_spec", json::parse(kSpec)}};
        return http::Response::Json(200, v.dump());
      }
      return http::Response::Json(404, R"({"code":5,"message":"no such path"})");
    };
  }

  CaptureOptions Options() const {
    CaptureOptions o;
    o.out = out_;
    o.since = "1h";
    o.qps = 0;
    return o;
  }

  // Every file under the test's folder that is not below --out.
  std::vector<std::string> Outside() const {
    std::vector<std::string> outside;
    for (const auto& e : fs::recursive_directory_iterator(dir_)) {
      auto rel = fs::relative(e.path(), out_);
      if (rel.empty() || *rel.begin() == "..") outside.push_back(e.path().string());
    }
    return outside;
  }

  fs::path dir_, out_;
  std::function<http::Response(const http::Request&)> answer_;
  harness::testing::ScriptedTarget target_{[this](const http::Request& r) { return answer_(r); }};
  kfp::Client& client_ = target_.client();
};

// Issue #35: pipeline_version_id "../../x" or "/tmp/x" made capture write
// x.json and x/{pipeline.json, arrivals.csv, workload.yaml} there.
TEST_F(HostileTarget, IdsThatArePathsNameFilesBelowOutOnly) {
  const WallTime t = WallClock::now() - std::chrono::minutes(10);
  const std::vector<std::string> ids = {
      "../../escaped",  (dir_ / "absolute").string(), "..", "a/b", "x\ny: 1", "id-0123", "-rf",
      "8d3f-plain-uuid"};
  std::vector<json> runs;
  for (size_t i = 0; i < ids.size(); ++i) {
    runs.push_back(Run(std::string("r") + std::to_string(i), ids[i], t + std::chrono::seconds(i)));
  }
  Serve(runs);
  auto summary = Capture(client_, Options());
  ASSERT_TRUE(summary.ok()) << summary.error().message;
  EXPECT_EQ(summary->progress.runs, static_cast<int64_t>(ids.size()));
  EXPECT_EQ(summary->progress.versions, static_cast<int64_t>(ids.size()));
  EXPECT_TRUE(Outside().empty()) << ::testing::PrintToString(Outside());
  // Each version is in a file of a plain name, its id kept inside.
  std::set<std::string> kept;
  for (const auto& e : fs::directory_iterator(out_ / kVersionsDir)) {
    EXPECT_TRUE(IsSafeKey(e.path().stem().string())) << e.path();
    json file = ParseJson(ReadSmallFile(e.path()));
    kept.insert(file.value("pipeline_version_id", ""));
  }
  EXPECT_EQ(kept, std::set<std::string>(ids.begin(), ids.end()));
  EXPECT_TRUE(fs::exists(out_ / kVersionsDir / "8d3f-plain-uuid.json"));
  std::error_code ec;  // no simulate/ when no spec was read
  for (const auto& e : fs::directory_iterator(out_ / kSimulateDir, ec)) {
    if (e.is_directory()) {
      EXPECT_TRUE(IsSafeKey(e.path().filename().string())) << e.path();
    }
  }
}

// A folder edited by hand is outside input too: a runs.jsonl line whose
// version is a path is refused, not followed.
TEST_F(HostileTarget, AHandEditedVersionKeyIsRefused) {
  Serve({Run("r1", "v1", WallClock::now() - std::chrono::minutes(10))});
  auto options = Options();
  auto summary = Capture(client_, options);
  ASSERT_TRUE(summary.ok()) << summary.error().message;
  std::string runs = ReadSmallFile(out_ / kRunsFile);
  auto at = runs.find("\"pipeline_version\":\"v1\"");
  ASSERT_NE(at, std::string::npos) << runs;
  runs.replace(at, 23, "\"pipeline_version\":\"../../x\"");
  ASSERT_TRUE(WriteFileAtomically(out_ / kRunsFile, runs).ok());
  auto derived = Derive(out_, summary->since, summary->until);
  ASSERT_FALSE(derived.ok());
  EXPECT_THAT(derived.error().message, HasSubstr("line 1")) << derived.error().message;
  EXPECT_TRUE(Outside().empty()) << ::testing::PrintToString(Outside());
}

TEST_F(HostileTarget, ARepeatedPageTokenEndsTheCaptureWithAnError) {
  const json run = Run("r1", "v1", WallClock::now() - std::chrono::minutes(10));
  Serve({run});
  auto serve_runs = answer_;
  answer_ = [&](const http::Request& r) {
    if (r.path == "/apis/v2beta1/runs") {
      return http::Response::Json(200, json{{"runs", {run}}, {"next_page_token", "again"}}.dump());
    }
    return serve_runs(r);
  };
  auto summary = Capture(client_, Options());
  ASSERT_FALSE(summary.ok());
  EXPECT_THAT(summary.error().message, HasSubstr("same next_page_token"))
      << summary.error().message;
  EXPECT_FALSE(fs::exists(out_ / kManifestFile));
}

TEST_F(HostileTarget, RunsOutsideTheWindowOrListedAgainAreLeftOut) {
  const WallTime t = WallClock::now() - std::chrono::minutes(10);
  auto in_2200 = *ParseRfc3339("2200-01-01T00:00:00Z");
  auto in_2000 = *ParseRfc3339("2000-01-01T00:00:00Z");
  const json first = Run("r1", "v1", t);
  const json second = Run("r2", "v1", t + std::chrono::seconds(3));
  std::vector<json> all = {first, Run("late", "v1", in_2200), Run("early", "v1", in_2000), second};
  Serve(all);
  auto serve = answer_;
  // Two pages; the second lists the first page's run again, as a history
  // that changed between pages would.
  answer_ = [&](const http::Request& r) {
    if (r.path == "/apis/v2beta1/runs") {
      if (r.Query("page_token").empty()) {
        return http::Response::Json(
            200, json{{"runs", {first, all[1]}}, {"next_page_token", "2"}}.dump());
      }
      return http::Response::Json(200, json{{"runs", {all[2], first, second}}}.dump());
    }
    return serve(r);
  };
  auto options = Options();
  options.page_size = 3;
  auto summary = Capture(client_, options);
  ASSERT_TRUE(summary.ok()) << summary.error().message;
  EXPECT_EQ(summary->progress.runs, 2);
  std::string runs = ReadSmallFile(out_ / kRunsFile);
  EXPECT_EQ(std::count(runs.begin(), runs.end(), '\n'), 2) << runs;
}

TEST_F(HostileTarget, APageLargerThanAskedIsRefused) {
  const WallTime t = WallClock::now() - std::chrono::minutes(10);
  std::vector<json> runs;
  for (int i = 0; i < 50; ++i) runs.push_back(Run(std::string("r") + std::to_string(i), "v1", t));
  Serve(runs);
  auto options = Options();
  options.page_size = 10;
  auto summary = Capture(client_, options);
  ASSERT_FALSE(summary.ok());
  EXPECT_THAT(summary.error().message, HasSubstr("50 runs for a page of 10"))
      << summary.error().message;
}

// Issue #35: a GetRun answer or a spec nested 100,000 deep crashed capture.
TEST_F(HostileTarget, AnswersNestedTooDeepAreErrorsNotCrashes) {
  const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
  const json run = Run("r1", "v1", WallClock::now() - std::chrono::minutes(10));
  Serve({run});
  auto serve = answer_;
  for (const char* path : {"/apis/v2beta1/runs/r1", "/versions/"}) {
    answer_ = [&](const http::Request& r) {
      if (r.path.find(path) == std::string::npos) return serve(r);
      std::string body =
          r.path.find("/versions/") != std::string::npos
              ? R"({"pipeline_version_id":"v1","pipeline_spec":)" + deep + "}"
              : R"({"run_id":"r1","runtime_config":{"parameters":{"p":)" + deep + "}}}";
      return http::Response::Json(200, body);
    };
    fs::remove_all(out_);
    auto summary = Capture(client_, Options());
    ASSERT_FALSE(summary.ok()) << path;
    EXPECT_THAT(summary.error().message, HasSubstr("nested deeper than"))
        << path << ": " << summary.error().message;
  }
}

}  // namespace
}  // namespace kfpbench::capture
