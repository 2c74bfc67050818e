// Caching and retry through the API: a cache hit is reported as KFP does
// (SKIPPED with cache_fingerprint) and survives a restart; :retry runs only
// what did not succeed.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ir/pipeline_spec.h"
#include "server/test_support.h"
#include "util/test_support.h"

namespace kfpbench::server {
namespace {

using http::Method;
using nlohmann::json;
namespace fs = std::filesystem;

// produce writes its message as output (and counts its runs in a file);
// consume fails until a marker file exists. Both paths are pipeline inputs.
const std::string kCountedPipeline =
    kfpbench::testing::TestData("server/testdata/counted_pipeline.yaml");

std::string Pipeline(bool cache) {
  std::string yaml = kCountedPipeline;
  for (size_t at; (at = yaml.find("CACHE")) != std::string::npos;) {
    yaml.replace(at, 5, cache ? "true" : "false");
  }
  return yaml;
}

int Lines(const fs::path& path) {
  std::ifstream in(path);
  int n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

class CacheRetryTest : public testing::BackendApiTest {
 protected:
  CacheRetryTest() {
    dir_ = fs::temp_directory_path() /
           fmt::format("kfpbench-cache-retry-{}-{}", getpid(), reinterpret_cast<uintptr_t>(this));
    fs::create_directories(dir_);
    options_.backend.executor = "process";
    options_.backend.db_path = (dir_ / "kfp.db").string();
    options_.backend.work_root = dir_ / "work";
  }
  ~CacheRetryTest() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  void Restart() {
    client_.reset();
    server_.reset();
    SetUp();
  }

  json RunInline(bool cache, const std::string& message) {
    auto spec = ir::YamlToJson(Pipeline(cache));
    EXPECT_TRUE(spec.ok());
    json body = {{"display_name", "counted"},
                 {"pipeline_spec", (*spec)[0]},
                 {"runtime_config",
                  {{"parameters",
                    {{"message", message},
                     {"counter", (dir_ / "produce.count").string()},
                     {"marker", (dir_ / "marker").string()}}}}}};
    auto [status, created] = Call(Method::kPost, "/apis/v2beta1/runs", body.dump());
    EXPECT_EQ(status, 200) << created;
    return created;
  }

  static json Task(const json& run, const std::string& name) {
    for (const auto& t : run["run_details"]["task_details"]) {
      if (t.value("display_name", "") == name) return t;
    }
    ADD_FAILURE() << "no task " << name << " in " << run.dump(2);
    return json::object();
  }

  fs::path dir_;
};

TEST_F(CacheRetryTest, CacheHitIsSkippedWithFingerprintAndSurvivesRestart) {
  std::ofstream(dir_ / "marker") << "";
  json first = WaitForRun(RunInline(true, "hi")["run_id"]);
  ASSERT_EQ(first["state"], "SUCCEEDED") << first.dump(2);
  const std::string fingerprint = Task(first, "produce").value("cache_fingerprint", "");
  EXPECT_EQ(fingerprint.size(), 64u);
  EXPECT_EQ(Task(first, "produce")["state"], "SUCCEEDED");
  EXPECT_EQ(Lines(dir_ / "produce.count"), 1);

  Restart();
  json second = WaitForRun(RunInline(true, "hi")["run_id"]);
  ASSERT_EQ(second["state"], "SUCCEEDED") << second.dump(2);
  EXPECT_EQ(Lines(dir_ / "produce.count"), 1);  // not executed again
  json produce = Task(second, "produce");
  EXPECT_EQ(produce["state"], "SKIPPED");
  EXPECT_EQ(produce["cache_fingerprint"], fingerprint);
  EXPECT_FALSE(produce.contains("error"));
  EXPECT_EQ(Task(second, "consume")["state"], "SKIPPED");  // same inputs: cached too

  // Other inputs: a miss.
  json third = WaitForRun(RunInline(true, "ho")["run_id"]);
  ASSERT_EQ(third["state"], "SUCCEEDED") << third.dump(2);
  EXPECT_EQ(Task(third, "produce")["state"], "SUCCEEDED");
  EXPECT_EQ(Lines(dir_ / "produce.count"), 2);
}

TEST_F(CacheRetryTest, EnableCacheFalseAlwaysRuns) {
  std::ofstream(dir_ / "marker") << "";
  WaitForRun(RunInline(false, "hi")["run_id"]);
  json second = WaitForRun(RunInline(false, "hi")["run_id"]);
  ASSERT_EQ(second["state"], "SUCCEEDED") << second.dump(2);
  EXPECT_EQ(Task(second, "produce")["state"], "SUCCEEDED");
  EXPECT_FALSE(Task(second, "produce").contains("cache_fingerprint"));
  EXPECT_EQ(Lines(dir_ / "produce.count"), 2);
}

TEST_F(CacheRetryTest, RetryRerunsOnlyWhatDidNotSucceed) {
  json created = RunInline(false, "hi");
  const std::string id = created["run_id"];
  json failed = WaitForRun(id);
  ASSERT_EQ(failed["state"], "FAILED") << failed.dump(2);
  json produced = Task(failed, "produce");
  EXPECT_EQ(produced["state"], "SUCCEEDED");
  EXPECT_EQ(Task(failed, "consume")["state"], "FAILED");
  EXPECT_EQ(Lines(dir_ / "produce.count"), 1);

  // The cause is fixed; retry survives a restart in between too.
  std::ofstream(dir_ / "marker") << "";
  Restart();
  EXPECT_EQ(Call(Method::kPost, "/apis/v2beta1/runs/" + id + ":retry").first, 200);
  json retried = WaitForRun(id);
  ASSERT_EQ(retried["state"], "SUCCEEDED") << retried.dump(2);
  EXPECT_EQ(Lines(dir_ / "produce.count"), 1);  // kept, not run again
  json kept = Task(retried, "produce");
  EXPECT_EQ(kept["state"], "SUCCEEDED");
  EXPECT_EQ(kept["task_id"], produced["task_id"]);
  EXPECT_EQ(kept["start_time"], produced["start_time"]);
  EXPECT_EQ(kept["end_time"], produced["end_time"]);
  EXPECT_EQ(Task(retried, "consume")["state"], "SUCCEEDED");
}

}  // namespace
}  // namespace kfpbench::server
