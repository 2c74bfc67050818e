// The real kfpbench binary on the capacity examples: simulate and plan with
// --html, and bad input naming the file and field with exit code 2.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/e2e_support.h"
#include "util/ids.h"

namespace kfpbench::cli {
namespace {

namespace fs = std::filesystem;

using namespace kfpbench::testing;  // Kfpbench(), ScratchDirTest, ReadJson, ...

class CapacityCliTest : public ScratchDirTest {
 protected:
  std::string Example(const std::string& name) const {
    return std::string(KFPBENCH_SOURCE_DIR) + "/examples/capacity/" + name;
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
};

TEST_F(CapacityCliTest, SimulateWithSharedServicesWritesResultsAndPage) {
  auto r = Kfpbench("simulate " + Example("cluster_shared.yaml") + " " +
                    Example("workload_shared.yaml") + " --runs 50 --out " + Path("sim.json") +
                    " --html " + Path("sim.html"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("artifacts"), std::string::npos) << r.output;
  auto j = nlohmann::json::parse(testing::ReadText(Path("sim.json")));
  EXPECT_EQ(j["runs"]["succeeded"], 50);
  EXPECT_EQ(j["artifact_store"]["requests"], 150);   // three trainers per run
  EXPECT_EQ(j["api"]["requests"], 50 + 50 * 6 * 2);  // creations and two updates per task
  std::string page = testing::ReadText(Path("sim.html"));
  EXPECT_NE(page.find("id=\"capacity-data\""), std::string::npos);
  EXPECT_NE(page.find("\"series\""), std::string::npos);
}

TEST_F(CapacityCliTest, PlanWritesThePageWithBothSweeps) {
  auto r = Kfpbench("plan " + Example("cluster.yaml") + " " + Example("workload.yaml") +
                    " --runs 20 --nodes 4 --html " + Path("plan.html"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("page"), std::string::npos);
  std::string page = testing::ReadText(Path("plan.html"));
  EXPECT_NE(page.find("\"by_runs\""), std::string::npos);
  EXPECT_NE(page.find("\"by_nodes\""), std::string::npos);
  // Cannot write the page: a clear error and exit code 1 (the answer itself was fine).
  r = Kfpbench("plan " + Example("cluster.yaml") + " " + Example("workload.yaml") +
               " --runs 20 --nodes 4 --html /proc/kfpbench/plan.html");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("cannot write /proc/kfpbench/plan.html"), std::string::npos) << r.output;
}

TEST_F(CapacityCliTest, BadBranchesAndServicesExitTwoNamingTheField) {
  std::ofstream(dir_ / "branching.yaml") << testing::ReadText(Example("branching.yaml"));
  std::ofstream(dir_ / "wl.yaml") << "pipeline: branching.yaml\nbranches: {condition-2: 2}\n";
  auto r = Kfpbench("simulate " + Example("cluster.yaml") + " " + Path("wl.yaml"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("wl.yaml: workload.branches.condition-2: a probability must be "
                          "between 0 and 1"),
            std::string::npos)
      << r.output;
  std::ofstream(dir_ / "cluster.yaml") << "pools: [{cpu: 4, memory: 16Gi, max: 2}]\n"
                                          "api: {taskUpdate: 10ms, replicas: 3}\n";
  r = Kfpbench("plan " + Path("cluster.yaml") + " " + Example("workload.yaml") +
               " --runs 5 --nodes 1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("cluster.yaml: cluster.api: unknown field 'replicas'"), std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace kfpbench::cli
