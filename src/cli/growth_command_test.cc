// The growth shape end to end through the kfpbench binary: bad levels
// refused by validate and run alike, a small growth run on the embedded
// backend, and a "real" target (a server kfpbench does not own) filled only
// with --growth-fill and cleaned up by experiment.
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_test_support.h"
#include "http/client.h"
#include "http/url.h"
#include "kfp/client.h"

namespace kfpbench::cli {
namespace {

using ::testing::HasSubstr;
using namespace kfpbench::testing;  // Kfpbench(), ScratchDirTest, ReadJson, ...

class GrowthCommandTest : public ScratchDirTest {
 protected:
  std::string Scenario(const std::string& levels, const std::string& thresholds = "{}") {
    return Write("growth.json", R"({"scenarios": [{"mode": "PIPELINE_RUN", "runTime": "2m",
        "pipelineFileName": "growth_tiny.yaml", "shape": "growth",
        "growth": {"levels": )" + levels +
                                    R"(, "measureTime": "1s", "fillConcurrency": 4,
                   "measureConcurrency": 2, "runsPerExperiment": 10, "runsPerPipeline": 50,
                   "extrapolateTo": 100000}}],
        "thresholds": )" + thresholds +
                                    "}");
  }
  static constexpr const char* kStub = " --executor stub --stub-duration constant:1ms --quiet";
};

TEST_F(GrowthCommandTest, BadLevelsAreRefusedByValidateAndRunAlike) {
  for (auto [levels, fragment] : std::vector<std::pair<std::string, std::string>>{
           {"[60, 20]", "growth.levels[1]: levels must increase (20 follows 60)"},
           {"[0, 20]", "growth.levels[0]: must be from 1 to 100000000 runs (got 0)"},
           {"[20, -1]", "growth.levels[1]: must be from 1 to 100000000 runs (got -1)"},
           {"[20, 60.5]", "growth.levels[1]: must be a whole number of runs (got 60.5)"},
       }) {
    std::string file = Scenario(levels);
    auto validate = Kfpbench("validate " + file + " --pipelines " + ExamplePipelines());
    EXPECT_EQ(validate.exit_code, 2) << validate.output;
    EXPECT_THAT(validate.output, HasSubstr(fragment)) << validate.output;
    auto run = Kfpbench("run " + file + " --pipelines " + ExamplePipelines() + kStub + " --out " +
                        (dir_ / "out").string());
    EXPECT_EQ(run.exit_code, 2) << run.output;
    EXPECT_THAT(run.output, HasSubstr(fragment)) << run.output;
    EXPECT_FALSE(fs::exists(dir_ / "out" / "results.json"));
  }
}

TEST_F(GrowthCommandTest, ASmallGrowthRunMeasuresEachLevelAndFitsTheCurves) {
  std::string file = Scenario("[20, 60, 150]", R"({"GetRun": ["growth_exponent < 5"],
                                   "ListRuns:deep": ["growth_exponent_p99 < 5"]})");
  fs::path out = dir_ / "out";
  auto r = Kfpbench("run " + file + " --pipelines " + ExamplePipelines() + kStub + " --out " +
                    out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = ReadJson(out / "results.json");
  ASSERT_FALSE(j.is_discarded());
  const auto& g = j["growth"]["0"];
  ASSERT_EQ(g["levels"].size(), 3u) << g.dump(1).substr(0, 3000);
  int64_t previous = 0;
  for (size_t i = 0; i < 3; ++i) {
    const auto& level = g["levels"][i];
    int64_t target = std::vector<int64_t>{20, 60, 150}[i];
    EXPECT_EQ(level["target_runs"], target);
    // The target's count: the level, plus the runs the previous mix's CreateRun added.
    EXPECT_GE(level["runs_stored"].get<int64_t>(), target);
    EXPECT_GT(level["runs_stored"].get<int64_t>(), previous);
    previous = level["runs_stored"].get<int64_t>();
    // A level the previous mix's CreateRun already passed needs no fill.
    EXPECT_GE(level["fill"]["objects_per_s"].get<double>(), 0) << level["fill"];
    EXPECT_EQ(level["fill"]["failures"], 0);
    for (const char* op : {"ListRuns", "ListRuns:state", "ListRuns:experiment", "ListRuns:deep",
                           "GetRun", "ListExperiments", "ListPipelines", "CreateRun"}) {
      ASSERT_TRUE(level["operations"].contains(op)) << op << " at level " << i;
      EXPECT_GT(level["operations"][op]["latency_us"]["count"].get<uint64_t>(), 0u) << op;
    }
  }
  EXPECT_EQ(g["levels"][0]["fill"]["runs_created"], 20);
  EXPECT_GT(g["levels"][0]["fill"]["objects_per_s"].get<double>(), 0);
  EXPECT_EQ(g["levels"][0]["fill"]["experiments_created"], 2);
  for (const char* op : {"ListRuns", "GetRun", "CreateRun"}) {
    const auto& fit = g["fits"][op];
    EXPECT_EQ(fit["p50"]["points"], 3) << fit;
    EXPECT_TRUE(fit["p50"]["exponent_low"].is_number()) << fit;
    EXPECT_TRUE(fit["p99_at_extrapolation_us"].is_number()) << fit;
    std::string verdict = fit["p50"]["verdict"];
    EXPECT_TRUE(verdict == "constant" || verdict == "logarithmic" || verdict == "linear" ||
                verdict == "worse")
        << verdict;
  }
  EXPECT_THAT(r.output, HasSubstr("Growth, scenario 0")) << r.output;
  EXPECT_THAT(r.output, HasSubstr("Growth order: latency ~ runs^k")) << r.output;
  EXPECT_THAT(r.output, HasSubstr("growth_exponent < 5")) << r.output;
  EXPECT_TRUE(fs::exists(out / "report.html"));
  // The report reads it back: the growth section survives `kfpbench report`.
  auto report = Kfpbench("report " + out.string());
  EXPECT_EQ(report.exit_code, 0) << report.output;
}

// A server kfpbench did not start stands for a real deployment.
class GrowthOnARealTargetTest : public GrowthCommandTest {
 protected:
  void SetUp() override {
    GrowthCommandTest::SetUp();
    server::ServeOptions so = StubServer();
    so.backend.stub_durations = {"constant:1ms"};
    Serve(so, backend_);
  }
  void TearDown() override {
    backend_ = {};
    GrowthCommandTest::TearDown();
  }
  int64_t Runs() {
    kfp::ListOptions one;
    one.page_size = 1;
    auto page = backend_.client->ListRunIds(one);
    EXPECT_TRUE(page.ok());
    return page.ok() ? page->total_size : -1;
  }

  server::testing::ServedBackend backend_;
};

TEST_F(GrowthOnARealTargetTest, FillsOnlyWithGrowthFillAndDeletesWhatItCreated) {
  std::string file = Scenario("[15, 30]");
  auto refused = Kfpbench("run " + file + " --pipelines " + ExamplePipelines() + " --host " +
                          backend_.server->url() + " --quiet --out " + (dir_ / "refused").string());
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_THAT(refused.output, HasSubstr("only with --growth-fill NAME")) << refused.output;
  EXPECT_EQ(Runs(), 0);

  fs::path out = dir_ / "out";
  auto r =
      Kfpbench("run " + file + " --pipelines " + ExamplePipelines() + " --host " +
               backend_.server->url() + " --growth-fill gtest-fill --quiet --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = ReadJson(out / "results.json");
  ASSERT_EQ(j["growth"]["0"]["levels"].size(), 2u) << j["growth"];
  EXPECT_TRUE(j["cleanup_failures"].empty()) << j["cleanup_failures"];
  // Everything it filled is gone, found by experiment: runs of the fill and
  // of the mix's CreateRun alike.
  EXPECT_EQ(Runs(), 0);

  // --keep leaves the fill; growth-cleanup deletes it, and again finds nothing.
  auto kept = Kfpbench("run " + file + " --pipelines " + ExamplePipelines() + " --host " +
                       backend_.server->url() + " --growth-fill gtest-fill --keep --quiet --out " +
                       (dir_ / "kept").string());
  ASSERT_EQ(kept.exit_code, 0) << kept.output;
  EXPECT_GE(Runs(), 30);
  auto cleanup = Kfpbench("growth-cleanup --prefix gtest-fill --host " + backend_.server->url());
  EXPECT_EQ(cleanup.exit_code, 0) << cleanup.output;
  EXPECT_THAT(cleanup.output,
              HasSubstr("experiments and 1 pipelines of the growth fill 'gtest-fill'"))
      << cleanup.output;
  EXPECT_EQ(Runs(), 0);
  auto again = Kfpbench("growth-cleanup --prefix gtest-fill --host " + backend_.server->url());
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_THAT(again.output, HasSubstr("deleted 0 runs, 0 experiments and 0 pipelines"))
      << again.output;
}

}  // namespace
}  // namespace kfpbench::cli
