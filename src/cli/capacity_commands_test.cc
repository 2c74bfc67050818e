// The real kfpbench binary on the capacity examples: simulate and plan with
// --html, and bad input naming the file and field with exit code 2.
#include <sys/wait.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/e2e_support.h"
#include "util/ids.h"

namespace kfpbench::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
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
  EXPECT_THAT(r.output, HasSubstr("artifacts")) << r.output;
  auto j = nlohmann::json::parse(testing::ReadText(Path("sim.json")));
  EXPECT_EQ(j["runs"]["succeeded"], 50);
  EXPECT_EQ(j["artifact_store"]["requests"], 150);   // three trainers per run
  EXPECT_EQ(j["api"]["requests"], 50 + 50 * 6 * 2);  // creations and two updates per task
  std::string page = testing::ReadText(Path("sim.html"));
  EXPECT_THAT(page, HasSubstr("id=\"capacity-data\""));
  EXPECT_THAT(page, HasSubstr("\"series\""));
}

// Issue 37 section 2, known truth: eight one-GPU steps of 10 s a run
// (examples/capacity/eight_gpu_shards.py, KFP's set_accelerator_type/limit),
// 4 runs within 20 s: 32 GPU-steps in two 10 s rounds need 16 GPUs, four
// nodes of 4 GPUs, though their CPU and memory sit mostly idle. Three nodes
// take three rounds.
TEST_F(CapacityCliTest, PlanAnswersInGpuNodesWhenGpusBind) {
  auto cluster = [&](int max) {
    return Write("cluster" + std::to_string(max) + ".yaml",
                 "pools: [{name: gpu, cpu: 16, memory: 64Gi, min: 1, max: " + std::to_string(max) +
                     ", resources: {nvidia.com/gpu: 4}}]\nautoscaler: {enabled: false}\n");
  };
  Write("workload.yaml",
        "pipeline: " + Example("eight_gpu_shards.yaml") + "\nruns: 1\nsteps: {default: 10s}\n");
  const std::string question = " --runs 4 --within 20s --replications 1 --threads 1";
  auto r = Kfpbench("plan " + cluster(10) + " " + Path("workload.yaml") + question);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("answer      4 runs on 4 nodes finish within 20s")) << r.output;
  EXPECT_THAT(r.output, HasSubstr("next        4 runs on 3 nodes do not finish within 20s: 30s"))
      << r.output;
  EXPECT_THAT(r.output, HasSubstr("4 runs on 4 nodes of 4 nvidia.com/gpu")) << r.output;
  EXPECT_THAT(r.output, HasSubstr("binds       nodes' nvidia.com/gpu")) << r.output;
  auto refused = Kfpbench("plan " + cluster(3) + " " + Path("workload.yaml") + question);
  EXPECT_EQ(refused.exit_code, 1) << refused.output;
  EXPECT_THAT(refused.output, HasSubstr("4 runs on 3 nodes do not finish within 20s: 30s"))
      << refused.output;
}

// Issue 38 section 2: simulate says how sure it is, over seeds.
TEST_F(CapacityCliTest, SimulateStatesItsSpreadOverSeeds) {
  auto r = Kfpbench("simulate " + Example("cluster.yaml") + " " + Example("workload.yaml") +
                    " --runs 20 --replications 3 --out " + Path("sim.json"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("spread      over 3 seeds")) << r.output;
  auto j = nlohmann::json::parse(testing::ReadText(Path("sim.json")));
  EXPECT_EQ(j["spread"]["replications"], 3);
  const auto& m = j["spread"]["makespan_seconds"];
  EXPECT_LE(m["min"].get<double>(), m["median"].get<double>());
  EXPECT_LE(m["median"].get<double>(), m["max"].get<double>());
  // One seed: the figures of the workload's seed alone, as before.
  r = Kfpbench("simulate " + Example("cluster.yaml") + " " + Example("workload.yaml") +
               " --runs 20 --replications 1 --out " + Path("one.json"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, Not(HasSubstr("spread"))) << r.output;
  EXPECT_FALSE(nlohmann::json::parse(testing::ReadText(Path("one.json"))).contains("spread"));
  r = Kfpbench("simulate " + Example("cluster.yaml") + " " + Example("workload.yaml") +
               " --replications 0");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  // plan on a recorded pattern draws no page of runs all at once.
  r = Kfpbench("plan " + Example("cluster.yaml") + " " + Example("workload_csv.yaml") +
               " --arrival-scale 2 --nodes 2 --html " + Path("p.html"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = Kfpbench("plan " + Example("cluster.yaml") + " " + Example("workload_csv.yaml") +
               " --arrival-scale 2 --nodes 2 --slo p95");
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

// Issue 38 sections 4 and 5: on a workload whose calibration could not
// decide and missed the levels it did not see by 30%, simulate and plan
// repeat the warning beside their answer, and show their durations no finer
// than 30% allows ("about 7m0s", not "6m57s"); the files keep every digit.
TEST_F(CapacityCliTest, AnUndecidedCalibrationIsRepeatedAndRoundsTheAnswers) {
  using ::testing::HasSubstr;
  using ::testing::Not;
  {
    std::ofstream cal(Path("calibration.json"));
    cal << R"({"default": {"duration": "lognormal:60s:0.3", "overhead": "3s"},
      "fit": {"summary": {
        "levels": [
          {"name": "1 run", "role": "fitted", "error": 0.0,
           "near_fits_makespan_seconds": [500, 500]},
          {"name": "50 runs", "role": "held out", "error": -0.3,
           "near_fits_makespan_seconds": [1200, 2040]}],
        "identifiability": {"decided": false, "near_equal_fits": 12}}}})";
    std::ofstream w(Path("workload.yaml"));
    w << "pipeline: " << Example("six_steps.yaml") << "\nruns: 20\n"
      << "arrivals: {kind: rate, ratePerSecond: 0.05}\ncalibration: calibration.json\nseed: 1\n";
  }
  auto r = Kfpbench("simulate " + Example("cluster.yaml") + " " + Path("workload.yaml") +
                    " --replications 3 --out " + Path("sim.json"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("warning     THE DATA CANNOT DECIDE: the calibration's 12 "
                                  "near-equal fits disagree"));
  EXPECT_THAT(r.output, HasSubstr("on \"50 runs\" they predict 20m0s to 34m0s"));
  EXPECT_THAT(r.output, HasSubstr("makespan    about "));
  EXPECT_THAT(r.output, HasSubstr("run time    p50 about "));
  EXPECT_THAT(r.output, HasSubstr("spread      over 3 seeds (the workload's seed and the next): "
                                  "makespan median about "));
  EXPECT_THAT(r.output, HasSubstr("precision   figures rounded to what the calibration's error "
                                  "allows: it missed levels it did not see by up to 30%"));
  const double makespan =
      nlohmann::json::parse(testing::ReadText(Path("sim.json")))["makespan_seconds"].get<double>();
  EXPECT_NE(std::fmod(makespan, 60.0), 0.0);  // the file keeps what the console rounds

  r = Kfpbench("plan " + Example("cluster.yaml") + " " + Path("workload.yaml") +
               " --runs 20 --nodes 4 --replications 5 --out " + Path("plan.json"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("warning     THE DATA CANNOT DECIDE"));
  EXPECT_THAT(r.output, HasSubstr("median about "));
  EXPECT_THAT(r.output, HasSubstr("it missed levels it did not see by up to 30%"));

  // A calibration that decided, with no unseen error: no warning, every digit.
  {
    std::ofstream cal(Path("calibration.json"));
    cal << R"({"default": {"duration": "lognormal:60s:0.3", "overhead": "3s"}})";
  }
  r = Kfpbench("simulate " + Example("cluster.yaml") + " " + Path("workload.yaml") +
               " --replications 1 --out " + Path("sim.json"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, Not(HasSubstr("CANNOT DECIDE")));
  EXPECT_THAT(r.output, Not(HasSubstr("about")));
  EXPECT_THAT(r.output, Not(HasSubstr("precision")));
}

TEST_F(CapacityCliTest, PlanWritesThePageWithBothSweeps) {
  auto r = Kfpbench("plan " + Example("cluster.yaml") + " " + Example("workload.yaml") +
                    " --runs 20 --nodes 4 --html " + Path("plan.html"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("page"));
  std::string page = testing::ReadText(Path("plan.html"));
  EXPECT_THAT(page, HasSubstr("\"by_runs\""));
  EXPECT_THAT(page, HasSubstr("\"by_nodes\""));
  // Cannot write the page: a clear error and exit code 1 (the answer itself was fine).
  r = Kfpbench("plan " + Example("cluster.yaml") + " " + Example("workload.yaml") +
               " --runs 20 --nodes 4 --html /proc/kfpbench/plan.html");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("cannot write /proc/kfpbench/plan.html")) << r.output;
}

TEST_F(CapacityCliTest, PlanAnswersAtAQuantileOverReplications) {
  auto r = Kfpbench("plan " + Example("cluster.yaml") + " " + Example("workload.yaml") +
                    " --nodes 4 --within 1h --replications 5 --quantile 80% --out " +
                    Path("plan.json") + " --html " + Path("plan.html"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("finish within 1h0m0s in ")) << r.output;
  EXPECT_THAT(r.output, HasSubstr("% interval ")) << r.output;
  EXPECT_THAT(r.output, HasSubstr(": at least P80")) << r.output;
  EXPECT_THAT(r.output, HasSubstr("P80 ")) << r.output;
  auto j = nlohmann::json::parse(testing::ReadText(Path("plan.json")));
  EXPECT_EQ(j["replications_first_batch"], 5);
  EXPECT_DOUBLE_EQ(j["quantile"].get<double>(), 0.8);
  EXPECT_EQ(j["at_answer"]["replication_makespans_seconds"].size(), j["replications"]);
  EXPECT_EQ(j["at_answer"]["within"]["verdict"], "meets");
  EXPECT_GE(j["probability_interval"][0].get<double>(), 0.8);
  EXPECT_LE(j["makespan_seconds"].get<double>(), 3600);
  std::string page = testing::ReadText(Path("plan.html"));
  EXPECT_THAT(page, HasSubstr("\"answer\""));
  EXPECT_THAT(page, HasSubstr("\"deadline_seconds\""));
}

TEST_F(CapacityCliTest, BadPlanAndSimulateFlagsExitTwo) {
  const std::string base =
      "plan " + Example("cluster.yaml") + " " + Example("workload.yaml") + " --runs 5 --nodes 2 ";
  for (const char* bad :
       {"--quantile 0", "--quantile 1.5", "--quantile P", "--quantile ninety", "--replications 0",
        "--replications 10001", "--replications x", "--max-replications 0",
        "--replications 30 --max-replications 20", "--confidence 1", "--confidence 40%"}) {
    auto r = Kfpbench(base + bad);
    EXPECT_EQ(r.exit_code, 2) << bad << "\n" << r.output;
  }
  auto r = Kfpbench(base + "--quantile 0");
  EXPECT_THAT(r.output, HasSubstr("--quantile")) << r.output;
  r = Kfpbench("simulate " + Example("cluster.yaml") + " " + Example("workload.yaml") +
               " --concurrency 0");
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

TEST_F(CapacityCliTest, CountsBelowOneAreRefusedInWords) {
  const std::string files = Example("cluster.yaml") + " " + Example("workload.yaml");
  struct Case {
    std::string flags;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {"plan " + files + " --runs 0 --nodes 2", "--runs: must be at least 1, got 0"},
           {"plan " + files + " --runs 5 --nodes -3", "--nodes: must be at least 1, got -3"},
           {"plan " + files + " --runs 1.5 --nodes 2", "--runs: must be a whole number, got 1.5"},
           {"simulate " + files + " --runs 0", "--runs: must be at least 1, got 0"},
           {"simulate " + files + " --concurrency x", "--concurrency: must be a whole number"},
       }) {
    auto r = Kfpbench(c.flags);
    EXPECT_EQ(r.exit_code, 2) << c.flags << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr(c.message)) << c.flags << "\n" << r.output;
    // CLI11's own check printed the whole range of a double.
    EXPECT_THAT(r.output, Not(HasSubstr("not in range"))) << r.output;
  }
}

TEST_F(CapacityCliTest, SimulateClosedLoopKeepsRunsInFlight) {
  auto r = Kfpbench("simulate " + Example("cluster.yaml") + " " + Example("workload.yaml") +
                    " --runs 12 --concurrency 3 --out " + Path("sim.json"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(testing::ReadText(Path("sim.json")));
  EXPECT_EQ(j["runs"]["succeeded"], 12);
  EXPECT_EQ(j["peak_runs_alive"], 3);
  EXPECT_GT(j["memory_utilisation"].get<double>(), 0);
}

TEST_F(CapacityCliTest, BadBranchesAndServicesExitTwoNamingTheField) {
  std::ofstream(dir_ / "branching.yaml") << testing::ReadText(Example("branching.yaml"));
  std::ofstream(dir_ / "wl.yaml") << "pipeline: branching.yaml\nbranches: {condition-2: 2}\n";
  auto r = Kfpbench("simulate " + Example("cluster.yaml") + " " + Path("wl.yaml"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("wl.yaml: workload.branches.condition-2: a probability must be "
                                  "between 0 and 1"))
      << r.output;
  std::ofstream(dir_ / "cluster.yaml") << "pools: [{cpu: 4, memory: 16Gi, max: 2}]\n"
                                          "api: {taskUpdate: 10ms, replicas: 3}\n";
  r = Kfpbench("plan " + Path("cluster.yaml") + " " + Example("workload.yaml") +
               " --runs 5 --nodes 1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output,
              HasSubstr("cluster.yaml: cluster.api.replicas: unknown field (known: runCreate, "
                        "taskUpdate, workers)"))
      << r.output;
}

}  // namespace
}  // namespace kfpbench::cli

namespace kfpbench::cli {
namespace {

using namespace kfpbench::testing;

class CalibrateCliTest : public ScratchDirTest {
 protected:
  std::string Example(const std::string& name) const {
    return std::string(KFPBENCH_SOURCE_DIR) + "/examples/capacity/" + name;
  }
};

// Fitting the store needs the cluster and pipeline the levels ran on, and
// sizes written LABEL=SIZE; each refusal says which flag, with exit code 2.
TEST_F(CalibrateCliTest, SharedServiceFlagsAreCheckedBeforeAnythingIsRead) {
  auto r = Kfpbench("calibrate a b --artifact-bytes exec-train=1Mi --pipeline " +
                    Example("six_steps.yaml"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--cluster")) << r.output;
  r = Kfpbench("calibrate a b --artifact-bytes exec-train=1Mi --cluster " +
               Example("cluster_loopback.yaml"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--pipeline")) << r.output;
  for (const char* bad : {"exec-train", "=1Mi", "exec-train=lots"}) {
    r = Kfpbench(std::string("calibrate a --artifact-bytes ") + bad);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_THAT(r.output, HasSubstr("LABEL=SIZE")) << bad << ": " << r.output;
  }
  r = Kfpbench("calibrate a --artifact-sharing sometimes");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = Kfpbench("calibrate " + (dir_ / "missing").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("missing")) << r.output;
}

// The embedded backend's limits refuse what they cannot mean.
TEST_F(CalibrateCliTest, ArtifactStoreFlagsOfTheBackendAreChecked) {
  auto r = Kfpbench("serve --port 0 --artifact-bandwidth 4Mi --stub-artifact-bytes 1Mi");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--executor stub")) << r.output;
  r = Kfpbench("serve --port 0 --executor stub --artifact-bandwidth 4Mi");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--stub-artifact-bytes")) << r.output;
  r = Kfpbench(
      "serve --port 0 --executor stub --stub-artifact-bytes 1Mi --artifact-bandwidth fast");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("bytes per second")) << r.output;
  r = Kfpbench("serve --port 0 --executor stub --stub-artifact-bytes exec-x=big");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("[LABEL=]SIZE")) << r.output;
}

}  // namespace
}  // namespace kfpbench::cli
