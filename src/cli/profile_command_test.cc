// End to end: `kfpbench profile` runs a pipeline of kfpbench steps on the
// embedded backend and reports each step; bad input exits 2 with one line.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/e2e_support.h"
#include "ir/pipeline_spec.h"
#include "util/ids.h"

namespace kfpbench::cli {
namespace {

using ::testing::HasSubstr;
using namespace kfpbench::testing;  // Kfpbench(), ScratchDirTest, ReadJson, ...

const nlohmann::json* Step(const nlohmann::json& profile, const std::string& name) {
  for (const auto& s : profile["steps"]) {
    if (s["step"] == name) return &s;
  }
  return nullptr;
}

class ProfileCommandTest : public ScratchDirTest {
 protected:
  std::string Example() const {
    return std::string(KFPBENCH_SOURCE_DIR) + "/examples/capacity/profile_steps.yaml";
  }
};

TEST_F(ProfileCommandTest, ProfilesEachStepAndRecommendsRequestsLimitsAndJobsPerNode) {
  fs::path out = dir_ / "out";
  Outcome r = Kfpbench("profile " + Example() +
                       " --params memory=192Mi --params cpu=1 --params duration=2s"
                       " --node-size 4cpu,8Gi --headroom 25% --out " +
                       out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* text : {"load", "train", "report", "jobs/node",
                           "Rule: request = p95 x 1.25, limit = peak x 1.25 (25% headroom)",
                           "Node 4cpu,8Gi: the bottleneck step is"}) {
    EXPECT_THAT(r.output, HasSubstr(text)) << text << "\n" << r.output;
  }
  nlohmann::json profile = testing::ReadJson(out / "profile.json");
  ASSERT_TRUE(profile.is_object()) << r.output;
  ASSERT_EQ(profile["steps"].size(), 3u);
  const nlohmann::json* load = Step(profile, "load");
  const nlohmann::json* train = Step(profile, "train");
  const nlohmann::json* report = Step(profile, "report");
  ASSERT_TRUE(load && train && report);
  constexpr double kMi = 1 << 20;
  // load holds 192 MiB: its memory peak is at least that, and its request
  // (p95 x 1.25, rounded to 64Mi) at least 192Mi.
  EXPECT_GE((*load)["memory_bytes"]["peak"].get<double>(), 180 * kMi);
  EXPECT_LT((*load)["memory_bytes"]["peak"].get<double>(), 400 * kMi);
  // train burns a core, or what a loaded two-core machine leaves of one.
  EXPECT_GT((*train)["cpu_cores"]["peak"].get<double>(), 0.02);
  EXPECT_LT((*train)["cpu_cores"]["peak"].get<double>(), 1.6);
  EXPECT_GT((*train)["cpu_seconds_mean"].get<double>(), 0.05);
  EXPECT_GE((*train)["samples"].get<int>(), 5);
  EXPECT_GE((*train)["duration_p50_s"].get<double>(), 1.9);
  // report sleeps: far less CPU than train, and the smallest memory.
  EXPECT_LT((*report)["cpu_seconds_mean"].get<double>(),
            (*train)["cpu_seconds_mean"].get<double>());
  EXPECT_LT((*report)["memory_bytes"]["peak"].get<double>(),
            (*load)["memory_bytes"]["peak"].get<double>());
  for (const auto* s : {load, train, report}) {
    ASSERT_TRUE(s->contains("jobs_per_node")) << s->dump();
    EXPECT_GE((*s)["jobs_per_node"]["jobs"].get<int>(), 1);
  }
  EXPECT_EQ((*train)["executor_label"], "exec-train");
  EXPECT_FALSE(profile["bottleneck"]["step"].get<std::string>().empty());

  // The runs are a results.json calibrate reads, and the sized pipeline compiles.
  nlohmann::json results = testing::ReadJson(out / "results.json");
  ASSERT_TRUE(results.is_object());
  ASSERT_EQ(results["runs"]["records"].size(), 1u);
  EXPECT_EQ(results["runs"]["records"][0]["state"], "SUCCEEDED");
  std::ifstream sized_in(out / "pipeline-sized.json");
  std::stringstream sized;
  sized << sized_in.rdbuf();
  auto spec = ir::ParsePipelineSpec(sized.str());
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_GE(spec->FindExecutor("exec-load")->container.resources.memory_request, 192 * kMi);
  Outcome calibrate =
      Kfpbench("calibrate " + out.string() + " --out " + (dir_ / "calibration.json").string());
  EXPECT_EQ(calibrate.exit_code, 0) << calibrate.output;

  // results.json carries each task's figures: profiling from it recommends
  // what the run itself did.
  bool annotated = false;
  for (const auto& t : results["runs"]["records"][0]["tasks"]) annotated |= t.contains("resources");
  EXPECT_TRUE(annotated);
  Outcome again =
      Kfpbench("profile --from-results " + out.string() + " " + Example() +
               " --node-size 4cpu,8Gi --headroom 25% --out " + (dir_ / "again").string());
  ASSERT_EQ(again.exit_code, 0) << again.output;
  nlohmann::json reread = testing::ReadJson(dir_ / "again" / "profile.json");
  for (const char* name : {"load", "train", "report"}) {
    const nlohmann::json* a = Step(profile, name);
    const nlohmann::json* b = Step(reread, name);
    ASSERT_TRUE(a && b) << name;
    EXPECT_EQ((*a)["recommended"], (*b)["recommended"]) << name;
    EXPECT_EQ((*b)["executor_label"], (*a)["executor_label"]) << name;
  }
}

TEST_F(ProfileCommandTest, ProfilesFromAResultsFileWithPerTaskResources) {
  nlohmann::json results = {
      {"runs",
       {{"records",
         {{{"state", "SUCCEEDED"},
           {"tasks",
            {{{"name", "train"},
              {"state", "SUCCEEDED"},
              {"started_at", "2026-01-01T00:00:00Z"},
              {"finished_at", "2026-01-01T00:01:00Z"},
              {"resources",
               {{"cpu_cores", {{"peak", 3.1}, {"p95", 2.4}}},
                {"memory_bytes", {{"peak", 6.0 * (1 << 30)}, {"p95", 5.0 * (1 << 30)}}}}}}}}}}}}}};
  std::ofstream(dir_ / "results.json") << results.dump();
  Outcome r = Kfpbench("profile --from-results " + dir_.string() +
                       " --node-size 16cpu,56Gi --headroom 0 --out " + (dir_ / "p").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  nlohmann::json profile = testing::ReadJson(dir_ / "p" / "profile.json");
  const nlohmann::json* train = Step(profile, "train");
  ASSERT_TRUE(train);
  EXPECT_EQ((*train)["recommended"]["cpu_request"], "2400m");
  EXPECT_EQ((*train)["recommended"]["cpu_limit"], "3100m");
  EXPECT_EQ((*train)["recommended"]["memory_request"], "5Gi");
  EXPECT_EQ((*train)["recommended"]["memory_limit"], "6Gi");
  EXPECT_EQ((*train)["jobs_per_node"]["jobs"], 6);  // 16 / 2.4 cores
  EXPECT_EQ((*train)["jobs_per_node"]["limited_by"], "cpu");
}

TEST_F(ProfileCommandTest, BadInputExitsTwoWithOneClearLine) {
  struct Case {
    std::string args;
    std::string message;
  };
  std::ofstream(dir_ / "empty.json") << R"({"runs": []})";
  for (const auto& c : std::vector<Case>{
           {"/nonexistent/p.yaml", "cannot read /nonexistent/p.yaml: No such file or directory"},
           {Example() + " --node-size 16cpu", "--node-size '16cpu': no comma"},
           {Example() + " --node-size big,56Gi", "--node-size 'big,56Gi'"},
           {Example() + " --params batch=3",
            "--params: the pipeline has no input parameter 'batch'"},
           {Example() + " --params cpu", "--params: expected NAME=VALUE, got 'cpu'"},
           {Example() + " --headroom lots", "--headroom: expected a percentage"},
           {Example() + " --repeat 0", "--repeat: must be at least 1"},
           {"--from-results " + (dir_ / "empty.json").string(), "carries resource figures"},
           {"", "give a PIPELINE.yaml to run, or --from-results"},
       }) {
    Outcome r = Kfpbench("profile " + c.args + " --out " + (dir_ / "never").string());
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr(c.message)) << c.args << "\n" << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  }
  EXPECT_FALSE(fs::exists(dir_ / "never"));
}

}  // namespace
}  // namespace kfpbench::cli
