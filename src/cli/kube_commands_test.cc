// End to end through the real binary: `run --kube-context` with a fake
// kubectl on PATH, and `job` writing its HTML report.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/e2e_support.h"
#include "kube/testdata/fixtures.h"
#include "util/ids.h"

namespace kfpbench::cli {
namespace {

namespace fs = std::filesystem;

using namespace kfpbench::testing;  // Kfpbench(), ScratchDirTest, ReadJson, ...

class KubeCliTest : public ScratchDirTest {
 protected:
  void SetUp() override {
    ScratchDirTest::SetUp();
    fs::create_directories(dir_ / "bin");
  }
};

TEST_F(KubeCliTest, RunReadsPodsThroughKubectlAndGonePodsAreNotFatal) {
  // The embedded backend's pods exist on no cluster: every pod is reported
  // missing, and the benchmark still succeeds.
  fs::create_symlink(kube::testdata::FakeKubectl(), dir_ / "bin" / "kubectl");
  kube::testdata::FakeKubectlEnv env;
  std::string old_path = std::getenv("PATH");
  ::setenv("PATH", ((dir_ / "bin").string() + ":" + old_path).c_str(), 1);
  std::string scenario = Write("s.json", R"({"scenarios": [{"mode": "PIPELINE_RUN",
      "runTime": "1s", "numTimes": 2, "pipelineFileName": "sleep_chain.yaml",
      "params": {"duration": "10ms"}}]})");
  fs::path out = dir_ / "out";
  auto r = Kfpbench("run " + scenario + " --pipelines " + KFPBENCH_SOURCE_DIR +
                    "/examples/pipelines --executor stub --stub-duration constant:50ms --quiet "
                    "--poll-interval 50ms --kube-context test-ctx --out " +
                    out.string());
  ::setenv("PATH", old_path.c_str(), 1);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(out / "results.json");
  auto j = nlohmann::json::parse(in);
  const auto& pods = j["pod_lifecycle"];
  ASSERT_TRUE(pods.is_object()) << j.dump().substr(0, 2000);
  EXPECT_EQ(pods["context"], "test-ctx");
  EXPECT_EQ(pods["namespace"], "kubeflow");
  int requested = pods["pods_requested"];
  EXPECT_GE(requested, 2);  // at least one step pod per run
  EXPECT_EQ(pods["pods_missing"], requested);
  EXPECT_EQ(pods["pods_read"], 0);
  EXPECT_EQ(pods["missing_pods"].size(), static_cast<size_t>(requested));
  auto calls = env.Calls();
  // By name, then by workflow (in case they are Argo node IDs); no pod
  // found, so no events call.
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].rfind("--context=test-ctx get pods ", 0), 0u) << calls[0];
  EXPECT_NE(calls[0].find(" -n kubeflow --ignore-not-found -o json"), std::string::npos);
  EXPECT_NE(calls[1].find(" -l workflows.argoproj.io/workflow in ("), std::string::npos)
      << calls[1];
  EXPECT_NE(r.output.find("pod lifecycle: "), std::string::npos) << r.output;
}

TEST_F(KubeCliTest, JobWritesCsvJsonAndHtmlReport) {
  std::string config = Write("echo.yaml", R"(
name: echo
kind: Job
image: busybox:1.36
command: [/bin/sh, -c, "echo '{\"v\": {{n}}}'"]
replicas: {Worker: 1}
timeoutSeconds: 60
sweep:
  grid:
    n: [1, 4]
metrics:
  v: {jsonl: v}
)");
  fs::path out = dir_ / "job";
  auto r = Kfpbench("job " + config + " --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("report.html"), std::string::npos) << r.output;
  // Its own name: results.json is the benchmark's file, of another shape.
  EXPECT_FALSE(fs::exists(out / "results.json"));
  EXPECT_TRUE(fs::exists(out / "results.csv"));
  std::ifstream in(out / "job_results.json");
  auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["jobs"]["swept"], nlohmann::json::array({"n"}));
  EXPECT_EQ(j["jobs"]["runs"][1]["metrics"]["v"], 4.0);
  std::ifstream html_in(out / "report.html");
  std::string html((std::istreambuf_iterator<char>(html_in)), std::istreambuf_iterator<char>());
  EXPECT_NE(html.find("id=\"kfpbench-jobs\""), std::string::npos);
  EXPECT_NE(html.find("\"swept\":[\"n\"]"), std::string::npos);
}

}  // namespace
}  // namespace kfpbench::cli
