// End to end: two benchmarks kept (--keep) on one KFP server (the embedded
// backend on loopback, reached through --host as a real one would be), then
// `kfpbench cleanup --benchmark-id` of one: its pipelines, experiments and runs
// are gone, and the other benchmark's (and a user's) are all still there.
#include <filesystem>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_test_support.h"
#include "kfp/client.h"

namespace kfpbench::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace kfpbench::testing;  // Kfpbench(), ScratchDirTest, ReadJson, ...
using ::testing::HasSubstr;

class CleanupCommandTest : public ServedBackendTest {
 protected:
  // Runs the scenario with --keep; the benchmark's id from its results.json.
  std::string KeptBenchmark(const std::string& out) {
    std::string scenario = Write("s.json", R"([
      {"mode": "EXPERIMENT", "runTime": "1s", "numTimes": 2,
       "pipelineFileName": ")" + ExamplePipelines() +
                                               R"(/sleep_chain.yaml",
       "params": {"duration": "10ms"}}])");
    auto r = Kfpbench("run " + scenario + " --host " + backend_.server->url() +
                      " --keep --quiet --poll-interval 100ms --out " + (dir_ / out).string());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_THAT(r.output, HasSubstr("kept (--keep): kfpbench cleanup --benchmark-id")) << r.output;
    auto j = ReadJson(dir_ / out / "results.json");
    EXPECT_GT(j["created"]["runs"].get<int>(), 0) << j["created"];
    EXPECT_EQ(j["created"]["experiments"], 1);
    EXPECT_EQ(j["created"]["pipelines"], 1);
    EXPECT_TRUE(j["kept"].get<bool>());
    return j["benchmark_id"].get<std::string>();
  }
  // How many objects of each kind are named "<prefix>...".
  struct Count {
    int pipelines = 0, experiments = 0, runs = 0;
  };
  Count Named(const std::string& prefix) {
    Count c;
    kfp::ListOptions o;
    o.page_size = 200;
    auto starts = [&](const std::string& name) { return name.rfind(prefix, 0) == 0; };
    auto runs = backend_.client->ListRuns(o);
    auto experiments = backend_.client->ListExperiments(o);
    auto pipelines = backend_.client->ListPipelines(o);
    EXPECT_TRUE(runs.ok() && experiments.ok() && pipelines.ok());
    if (!runs.ok() || !experiments.ok() || !pipelines.ok()) return c;
    for (const auto& r : runs->items) c.runs += starts(r.display_name);
    for (const auto& e : experiments->items) c.experiments += starts(e.display_name);
    for (const auto& p : pipelines->items) c.pipelines += starts(p.name);
    return c;
  }
};

TEST_F(CleanupCommandTest, DeletesOneBenchmarkAndNothingElse) {
  std::string first = KeptBenchmark("a");
  std::string second = KeptBenchmark("b");
  ASSERT_NE(first, second);
  auto user = backend_.client->CreateExperiment(first + "x-not-a-benchmark-object", "a user's");
  ASSERT_TRUE(user.ok());
  Count before = Named(first + "-");
  EXPECT_EQ(before.pipelines, 1);
  EXPECT_EQ(before.experiments, 1);
  EXPECT_GT(before.runs, 0);

  auto r = Kfpbench("cleanup --benchmark-id " + first + " --host " + backend_.server->url());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output,
              HasSubstr("deleted 0 recurring run(s), " + std::to_string(before.runs) +
                        " run(s), 1 experiment(s) and 1 pipeline(s) of benchmark " + first))
      << r.output;
  Count gone = Named(first + "-");
  EXPECT_EQ(gone.pipelines + gone.experiments + gone.runs, 0);
  Count kept = Named(second + "-");
  EXPECT_EQ(kept.pipelines, 1);
  EXPECT_EQ(kept.experiments, 1);
  EXPECT_GT(kept.runs, 0);
  EXPECT_EQ(Named(first + "x-").experiments, 1);

  // Again: nothing left of it, nothing else touched.
  auto again = Kfpbench("cleanup --benchmark-id " + first + " --host " + backend_.server->url());
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_THAT(again.output, HasSubstr("deleted 0 recurring run(s), 0 run(s)"));
  EXPECT_EQ(Named(second + "-").runs, kept.runs);
}

// Through v1beta1 as through v2beta1 (issue 41): its filters say `op`, and
// its DeletePipeline, which never cascades on KFP, is preceded by the
// versions' deletes. Before, v1beta1 lists refused the filter and nothing
// was found.
TEST_F(CleanupCommandTest, DeletesABenchmarkThroughV1beta1) {
  std::string id = KeptBenchmark("a");
  Count before = Named(id + "-");
  ASSERT_GT(before.runs, 0);
  auto r =
      Kfpbench("cleanup --benchmark-id " + id + " --api v1beta1 --host " + backend_.server->url());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("deleted 0 recurring run(s), " + std::to_string(before.runs) +
                                  " run(s), 1 experiment(s) and 1 pipeline(s) of benchmark " + id));
  Count gone = Named(id + "-");
  EXPECT_EQ(gone.pipelines + gone.experiments + gone.runs, 0);
}

TEST_F(CleanupCommandTest, RefusesWhatIsNotABenchmarkId) {
  for (const char* id : {"kfpbench", "kfpbench-", "kfpbench-12345", "x-1a2b3c4d"}) {
    auto r =
        Kfpbench(std::string("cleanup --benchmark-id ") + id + " --host " + backend_.server->url());
    EXPECT_EQ(r.exit_code, 2) << id << r.output;
    EXPECT_THAT(r.output, HasSubstr("is not a benchmark id")) << r.output;
  }
}

// Issue 39: without --host, cleanup started a fresh embedded backend,
// "deleted 0" and exited 0, so a CI clean-up that forgot --host passed.
TEST_F(CleanupCommandTest, RefusesWithoutATarget) {
  auto r = Kfpbench("cleanup --benchmark-id kfpbench-1a2b3c4d");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output,
              HasSubstr("cleanup --benchmark-id kfpbench-1a2b3c4d needs the target that holds "
                        "them: --host URL, or --target NAME"))
      << r.output;
  EXPECT_THAT(r.output, Not(HasSubstr("deleted"))) << r.output;
  auto growth = Kfpbench("growth-cleanup --prefix fill");
  EXPECT_EQ(growth.exit_code, 2) << growth.output;
}

}  // namespace
}  // namespace kfpbench::cli
