// The target flags end to end with the real binary: --api v1beta1 against the
// embedded backend's v1 subset, and https to `kfpbench serve --tls-cert`
// with --ca-file, --insecure and a kfpbench.yaml target.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "harness/e2e_support.h"
#include "http/test_certificates.h"
#include "util/ids.h"

namespace kfpbench::harness {
namespace {

using ::testing::HasSubstr;
using namespace kfpbench::testing;  // Kfpbench(), ChildProcess, ScratchDirTest, ReadJson, ...
using nlohmann::json;

class TargetE2eTest : public ScratchDirTest {
 protected:
  json Results(const fs::path& out) { return ReadJson(out / "results.json"); }
  static std::string Pipelines() {
    return std::string(KFPBENCH_SOURCE_DIR) + "/examples/pipelines";
  }
};

TEST_F(TargetE2eTest, PipelineRunAndRandomGetsOverV1beta1) {
  std::string file = Write("s.json", R"([
    {"mode": "PIPELINE_RUN", "runTime": "2s", "numTimes": 2,
     "pipelineFileName": "sleep_chain.yaml", "params": {"duration": "100ms"}},
    {"mode": "RANDOM_GETS", "startTime": "1s", "runTime": "1s", "concurrency": 2}
  ])");
  fs::path out = dir_ / "out";
  auto r = Kfpbench("run " + file + " --api v1beta1 --pipelines " + Pipelines() +
                    " --executor stub --poll-interval 100ms --quiet --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  json j = Results(out);
  ASSERT_TRUE(j.is_object()) << r.output;
  EXPECT_EQ(j["target"]["api_version"], "v1beta1");
  int runs = j["runs"]["count"];
  EXPECT_GE(runs, 2);
  EXPECT_EQ(j["runs"]["by_state"].value("SUCCEEDED", 0), runs) << j["runs"].dump(2);
  for (const auto& run : j["runs"]["records"]) {
    EXPECT_GT(run["duration_ms"].get<double>(), 0) << run;
    // The three steps, read from the v1 workflow's Pod nodes.
    int steps = 0;
    for (const auto& t : run["tasks"]) steps += t["dag"].get<bool>() ? 0 : 1;
    EXPECT_EQ(steps, 3) << run;
  }
  for (const char* op : {"UploadPipeline", "CreateRun", "ListPipelines", "ListPipelineVersions",
                         "ListExperiments", "ListRuns"}) {
    ASSERT_TRUE(j["operations"].contains(op)) << op;
    EXPECT_GT(j["operations"][op]["count"].get<int>(), 0) << op;
    EXPECT_EQ(j["operations"][op]["errors"].get<int>(), 0) << op << " " << j["operations"][op];
  }
  // Following the runs is the observer's: v1beta1 runs are polled one by one.
  const json& get_run = j["observer"]["operations"]["GetRun"];
  EXPECT_GT(get_run["count"].get<int>(), 0) << j["observer"];
  EXPECT_EQ(get_run["errors"].get<int>(), 0) << get_run;
  EXPECT_EQ(j["observer"]["runs_by_listing"].get<int>(), 0) << j["observer"];
  EXPECT_TRUE(j["cleanup_failures"].empty()) << j["cleanup_failures"];
}

TEST_F(TargetE2eTest, UnknownApiVersionIsBadInput) {
  std::string file = Write("s.json", R"([{"mode":"RANDOM_GETS","runTime":"1s"}])");
  auto r = Kfpbench("run " + file + " --api v3 --out " + (dir_ / "out").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--api: unknown KFP API version 'v3'")) << r.output;
}

TEST_F(TargetE2eTest, HttpsToServeWithCaFileInsecureAndNamedTarget) {
  auto pki = http::testing::MakeTestPki(dir_ / "pki");
  ChildProcess server({KfpbenchBinary(), "serve", "--access-log", "none", "--port", "0",
                       "--executor", "stub", "--tls-cert", pki.server_cert, "--tls-key",
                       pki.server_key});
  ASSERT_TRUE(server.started());
  std::string line = server.WaitForLine("serving", std::chrono::seconds(60));
  ASSERT_FALSE(line.empty()) << server.seen();
  std::string url = UrlInLine(line);
  ASSERT_EQ(url.rfind("https://127.0.0.1:", 0), 0u) << line;
  std::string file = Write("s.json", R"([{"mode":"RANDOM_GETS","runTime":"1s","concurrency":2}])");

  auto run = [&](const std::string& flags, const std::string& out) {
    return Kfpbench("run " + file + " " + flags + " --quiet --out " + (dir_ / out).string());
  };
  {
    auto r = run("--host " + url + " --ca-file " + pki.ca_cert.string(), "trusted");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    json j = Results(dir_ / "trusted");
    EXPECT_GT(j["operations"]["ListPipelines"]["count"].get<int>(), 0);
    EXPECT_EQ(j["operations"]["ListPipelines"]["errors"].get<int>(), 0);
    EXPECT_EQ(j["target"]["url"], url);
  }
  {
    auto r = run("--host " + url, "untrusted");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_THAT(r.output,
                HasSubstr("TLS certificate rejected: unable to get local issuer certificate"))
        << r.output;
  }
  {
    auto r = run("--host " + url + " --insecure", "insecure");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_THAT(r.output, HasSubstr("not verified (--insecure)")) << r.output;
  }
  {
    std::string config = Write("kfpbench.yaml", "targets:\n  lab:\n    host: " + url +
                                                    "\n    ca_file: " + pki.ca_cert.string() +
                                                    "\n    api_version: v2beta1\n");
    auto r = run("--config " + config + " --target lab", "named");
    EXPECT_EQ(r.exit_code, 0) << r.output;
  }
  {
    std::string plain = "http" + url.substr(5);
    auto r = run("--host " + plain, "plain");
    EXPECT_NE(r.exit_code, 0) << r.output;
    EXPECT_THAT(r.output, HasSubstr("this port speaks TLS: use https://")) << r.output;
  }
  {
    auto r = run("--host " + url + " --ca-file " + (dir_ / "missing.pem").string(), "missing");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_THAT(r.output, HasSubstr("--ca-file: cannot read")) << r.output;
  }
  server.Stop();
}

}  // namespace
}  // namespace kfpbench::harness
