// `kfpbench run` as a call: the file checked, the target chosen and opened,
// the benchmark run and its results written, without spawning the binary.
#include "harness/run_scenario_file.h"

#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/e2e_support.h"

namespace kfpbench::harness {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class RunScenarioFileTest : public kfpbench::testing::ScratchDirTest {
 protected:
  // A request for `file` on the embedded backend, every step a 50 ms stub.
  RunRequest Request(const std::string& file) {
    RunRequest r;
    r.scenario = file;
    r.load.pipeline_dirs = {fs::path(KFPBENCH_SOURCE_DIR) / "examples/pipelines"};
    r.target.embedded.port = 0;
    r.target.embedded.backend.executor = "stub";
    r.target.embedded.backend.stub_durations = {"constant:50ms"};
    r.executor = "stub";
    r.out = (dir_ / "out").string();
    r.benchmark.harness.poll_interval = std::chrono::milliseconds(50);
    return r;
  }
  std::ostringstream console_;
};

constexpr const char* kTwoRuns = R"([{"mode": "PIPELINE_RUN", "runTime": "2s", "numTimes": 2,
                                     "pipelineFileName": "sleep_chain.yaml"}])";

// Issue 39: `run --repeat N --time-scale X` wrote time_scale 1.0 in the
// merged results.json.
TEST_F(RunScenarioFileTest, RepetitionsKeepTheTimeScaleInTheirMerge) {
  RunRequest r = Request(Write("s.json", kTwoRuns));
  r.load.time_scale = 0.5;
  r.benchmark.repeat = 2;
  bool opened = false;
  r.on_target_open = [&] { opened = true; };
  auto outcome = RunScenarioFile(r, console_);
  ASSERT_TRUE(outcome.ok()) << outcome.error().message;
  EXPECT_EQ(*outcome, Outcome::kOk) << console_.str();
  EXPECT_TRUE(opened);
  auto merged = kfpbench::testing::ReadJson(dir_ / "out/results.json");
  ASSERT_TRUE(merged.is_object());
  EXPECT_EQ(merged["scenario"]["time_scale"], 0.5);
  EXPECT_EQ(merged["repetitions"].size(), 2u);
  for (const char* rep : {"rep-1", "rep-2"}) {
    auto one = kfpbench::testing::ReadJson(dir_ / "out" / rep / "results.json");
    ASSERT_TRUE(one.is_object()) << rep;
    EXPECT_EQ(one["scenario"]["time_scale"], 0.5) << rep;
  }
  EXPECT_GE(merged["runs"]["count"].get<int>(), 2);
  EXPECT_EQ(merged["target"]["executor"], "stub");
  EXPECT_THAT(console_.str(), HasSubstr("results: "));
}

// The preflight runs though the target does not resolve, so a file's bad
// "target" is said with its other problems; nothing is created.
TEST_F(RunScenarioFileTest, ABadTargetIsSaidWithTheFilesOtherProblems) {
  RunRequest r = Request(Write("s.json", R"({"target": {"hots": "http://127.0.0.1:1"},
      "scenarios": [{"mode": "PIPELINE_RUN", "runTime": "1s", "params": {"no_such_input": 1},
                     "pipelineFileName": "sleep_chain.yaml"}]})"));
  auto outcome = RunScenarioFile(r, console_);
  ASSERT_FALSE(outcome.ok());
  EXPECT_THAT(outcome.error().message, HasSubstr("no_such_input"));
  EXPECT_THAT(outcome.error().message, HasSubstr("target.hots: unknown key"));
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

TEST_F(RunScenarioFileTest, RefusesAnUnreadableFileAndAZeroCheckpointInterval) {
  auto missing = RunScenarioFile(Request((dir_ / "none.json").string()), console_);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr("none.json"));

  RunRequest r = Request(Write("s.json", kTwoRuns));
  r.benchmark.harness.checkpoint_interval = Duration::zero();
  auto zero = RunScenarioFile(r, console_);
  ASSERT_FALSE(zero.ok());
  EXPECT_THAT(zero.error().message, HasSubstr("--checkpoint-every"));
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

}  // namespace
}  // namespace kfpbench::harness
