#include "harness/preflight.h"

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/e2e_support.h"

namespace kfpbench::harness {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

namespace fs = std::filesystem;

const fs::path kPipelines = fs::path(KFPBENCH_SOURCE_DIR) / "examples" / "pipelines";

class PreflightTest : public kfpbench::testing::ScratchDirTest {};

// What run checks before any load is what it then sends: the pipeline is read
// once, and the text checked is the text uploaded.
TEST_F(PreflightTest, ReadsEachPipelineOnceAndKeepsItsText) {
  std::string file = Write("s.json", R"([
    {"mode": "PIPELINE_RUN", "runTime": "1s", "numTimes": 4,
     "pipelineFileName": "sleep_chain.yaml", "params": {"duration": "50ms"}},
    {"mode": "PIPELINE_UPLOAD", "runTime": "1s", "pipelineFileName": "sleep_chain.yaml"}])");
  LoadOptions load;
  load.pipeline_dirs = {kPipelines};
  auto checked = LoadCheckedScenarioFile(file, load, "1/2");
  ASSERT_TRUE(checked.ok()) << checked.error().message;
  ASSERT_EQ(checked->pipeline_texts.size(), 1u);
  const auto& [path, text] = *checked->pipeline_texts.begin();
  EXPECT_EQ(path, checked->scenarios[0].pipeline_path.string());
  EXPECT_EQ(text, kfpbench::testing::ReadText(kPipelines / "sleep_chain.yaml"));
  EXPECT_EQ(checked->shard_index, 1);
  EXPECT_EQ(checked->shard_count, 2);
}

TEST_F(PreflightTest, RefusesWithEveryProblemAndABadShard) {
  std::string file = Write("s.json", R"([
    {"mode": "PIPELINE_RUN", "runTime": "1s", "pipelineFileName": "sleep_chain.yaml",
     "params": {"durtion": "50ms"}},
    {"mode": "PIPELINE_RUN", "runTime": "1s", "pipelineFileName": "sleep_chain.yaml",
     "params": {"duration": 5}}])");
  LoadOptions load;
  load.pipeline_dirs = {kPipelines};
  auto refused = LoadCheckedScenarioFile(file, load, "");
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error().message, HasSubstr("[0].params: ")) << refused.error().message;
  EXPECT_THAT(refused.error().message, HasSubstr("[1].params: ")) << refused.error().message;
  std::string good = Write("g.json", R"([{"mode": "RANDOM_GETS", "runTime": "1s"}])");
  auto shard = LoadCheckedScenarioFile(good, load, "3/2");
  ASSERT_FALSE(shard.ok());
  EXPECT_THAT(shard.error().message, HasSubstr("--shard")) << shard.error().message;
  auto words = LoadCheckedScenarioFile(good, load, "half");
  ASSERT_FALSE(words.ok());
  EXPECT_THAT(words.error().message, HasSubstr("--shard: expected i/N"));
}

// A stress search's plan is said before it runs: the rates runTime holds,
// and when it cannot reach maxRate; a runTime shorter than one step is
// refused.
TEST_F(PreflightTest, SaysWhichStressRatesRunTimeHolds) {
  auto plan = [&](const std::string& stress, const std::string& run_time) {
    std::string file = Write("s.json", R"([{"mode": "PIPELINE_RUN", "runTime": ")" + run_time +
                                           R"(", "rate": 15, "shape": "stress",
       "pipelineFileName": "sleep_chain.yaml", "params": {"duration": "50ms"},
       "stress": )" + stress + "}]");
    LoadOptions load;
    load.pipeline_dirs = {kPipelines};
    auto loaded = LoadScenarioFile(file, load);
    EXPECT_TRUE(loaded.ok()) << loaded.error().message;
    return loaded.ok() ? CheckScenarioFile(*loaded) : Preflight{};
  };
  auto fits = plan(R"({"stepTime": "1m", "rateFactor": 2, "maxRate": 100,
                       "slo": {"p95": "5m"}})",
                   "10m");
  EXPECT_TRUE(fits.problems.empty());
  // The stress plan, then how long the load runs (10 minutes).
  ASSERT_EQ(fits.notes.size(), 2u);
  EXPECT_THAT(fits.notes[1], HasSubstr("the load runs for about 10m0s")) << fits.notes[1];
  EXPECT_THAT(fits.notes[0], HasSubstr(".stress: 3 step(s) of 1m0s at 15, 30, 60 runs/min"))
      << fits.notes[0];

  auto short_run = plan(R"({"stepTime": "1m", "rateFactor": 2, "maxRate": 1000,
                            "slo": {"p95": "5m"}})",
                        "3m");
  ASSERT_EQ(short_run.notes.size(), 3u);
  EXPECT_THAT(short_run.notes[1],
              HasSubstr("reaching maxRate 1000/min takes 7 steps (7m0s), but runTime "
                        "3m0s holds 3: the search may end with the SLO still holding"))
      << short_run.notes[1];

  auto none = plan(R"({"stepTime": "2m", "slo": {"p95": "5m"}})", "90s");
  ASSERT_EQ(none.problems.size(), 1u);
  EXPECT_THAT(none.problems[0], HasSubstr(".runTime: 1m30s is shorter than one stress step (2m0s)"))
      << none.problems[0];
}

// A pipeline of KFP SDK Python components cannot run as processes on this
// host. With no --executor the embedded backend runs the whole benchmark as
// timed stubs, said in a note and kept for results.json; --executor process
// refuses it before any load, with the words CreateRun would answer; a real
// KFP (--host) runs it, so nothing is said.
TEST_F(PreflightTest, ChoosesStubStepsForPipelinesThatCannotRunAsProcesses) {
  std::string spec = kfpbench::testing::ReadText(kPipelines / "sleep_chain.yaml");
  const std::string step = "        - kfpbench\n        - step\n";
  ASSERT_THAT(spec, HasSubstr(step));
  spec.replace(spec.find(step), step.size(),
               "        - sh\n        - -c\n        - python3 -m kfp.dsl.executor_main\n");
  Write("sdk.yaml", spec);
  std::string file = Write("s.json", R"([
    {"mode": "PIPELINE_RUN", "runTime": "1s", "pipelineFileName": "sdk.yaml"},
    {"mode": "PIPELINE_RUN", "runTime": "1s", "pipelineFileName": "sleep_chain.yaml"},
    {"mode": "PIPELINE_UPLOAD", "runTime": "1s", "pipelineFileName": "sdk.yaml"}])");
  LoadOptions load;
  load.pipeline_dirs = {kPipelines};
  auto loaded = LoadScenarioFile(file, load);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;

  Preflight chosen = CheckScenarioFile(*loaded);
  EXPECT_TRUE(chosen.problems.empty());
  EXPECT_EQ(chosen.executor, "stub");
  EXPECT_THAT(chosen.executor_reason, HasSubstr("sdk.yaml cannot run as processes"))
      << chosen.executor_reason;
  EXPECT_THAT(chosen.executor_reason, HasSubstr("Python component of KFP's SDK"))
      << chosen.executor_reason;
  EXPECT_THAT(chosen.executor_reason, Not(HasSubstr("sleep_chain")));
  ASSERT_FALSE(chosen.notes.empty());
  EXPECT_THAT(chosen.notes.back(), HasSubstr("executor is stub"));

  Preflight refused = CheckScenarioFile(*loaded, {.executor = "process"});
  ASSERT_EQ(refused.problems.size(), 1u);  // the upload-only scenario starts no runs
  EXPECT_THAT(refused.problems[0], HasSubstr("[0].pipelineFileName: executor 'exec-sleep'"))
      << refused.problems[0];
  EXPECT_THAT(refused.problems[0], HasSubstr("--executor stub"));

  EXPECT_EQ(CheckScenarioFile(*loaded, {.executor = "stub"}).executor, "stub");
  Preflight remote = CheckScenarioFile(*loaded, {.remote_target = true, .executor = "process"});
  EXPECT_TRUE(remote.problems.empty());
  EXPECT_EQ(remote.executor, "");

  // Pipelines that run as processes keep the process executor.
  std::string plain = Write("p.json", R"([{"mode": "PIPELINE_RUN", "runTime": "1s",
    "pipelineFileName": "sleep_chain.yaml"}])");
  auto kept = LoadCheckedScenarioFile(plain, load, "");
  ASSERT_TRUE(kept.ok()) << kept.error().message;
  EXPECT_EQ(kept->executor, "process");
  EXPECT_EQ(kept->executor_reason, "");
}

// A real KFP pulls each step's image; kfpbench's own is published nowhere.
TEST_F(PreflightTest, ARemoteTargetIsToldWhenStepsNameTheUnpublishedImage) {
  std::string file = Write("s.json", R"([
    {"mode": "PIPELINE_RUN", "runTime": "1s", "numTimes": 2,
     "pipelineFileName": "sleep_chain.yaml", "params": {"duration": "50ms"}},
    {"mode": "PIPELINE_RUN", "runTime": "1s", "pipelineFileName": "sleep_chain.yaml"}])");
  LoadOptions load;
  load.pipeline_dirs = {kPipelines};
  auto loaded = LoadScenarioFile(file, load);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  auto unpullable = [](const Preflight& p) {
    int n = 0;
    for (const auto& note : p.notes) n += note.find("no registry publishes") != std::string::npos;
    return n;
  };
  Preflight remote = CheckScenarioFile(*loaded, {.remote_target = true});
  EXPECT_TRUE(remote.problems.empty());
  ASSERT_EQ(unpullable(remote), 1) << "once for the file, not once a scenario";
  for (const auto& note : remote.notes) {
    if (note.find("no registry publishes") == std::string::npos) continue;
    EXPECT_THAT(note, HasSubstr("the steps of sleep_chain.yaml run ghcr.io/kfpbench/kfpbench"))
        << note;
    EXPECT_THAT(note, HasSubstr("kube loadgen --image")) << note;
  }
  // The embedded backend runs the steps itself; kube loadgen points them at --image.
  EXPECT_EQ(unpullable(CheckScenarioFile(*loaded, {.executor = "stub"})), 0);
  PreflightOptions pointed;
  pointed.remote_target = true;
  pointed.image = "registry.example/kfpbench:0.1.0";
  EXPECT_EQ(unpullable(CheckScenarioFile(*loaded, pointed)), 0);
}

// Issue 39: perf-tests' "is minutes" note came once per scenario (four
// times), and a ten-minute load started without saying how long it takes.
TEST_F(PreflightTest, SaysOnceThatNumbersAreMinutesAndHowLongTheLoadRuns) {
  std::string file = Write("s.json", R"([
    {"mode": "RANDOM_GETS", "runTime": 10}, {"mode": "RANDOM_GETS", "runTime": 10},
    {"mode": "RANDOM_GETS", "runTime": 10}, {"mode": "RANDOM_GETS", "startTime": 2, "runTime": 8}])");
  auto loaded = LoadScenarioFile(file, {});
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  auto preflight = CheckScenarioFile(*loaded, {});
  int minutes = 0, estimate = 0;
  for (const auto& note : preflight.notes) {
    minutes += note.find("minutes (perf-tests' unit)") != std::string::npos;
    if (note.find("the load runs for about 10m") != std::string::npos) {
      ++estimate;
      EXPECT_THAT(note, HasSubstr("--time-scale 0.1")) << note;
    }
  }
  EXPECT_EQ(minutes, 1);
  EXPECT_EQ(estimate, 1);
  LoadOptions scaled;
  scaled.time_scale = 0.5;
  loaded = LoadScenarioFile(file, scaled);
  ASSERT_TRUE(loaded.ok());
  bool said = false;
  for (const auto& note : CheckScenarioFile(*loaded, {}).notes) {
    said |= note.find("about 5m") != std::string::npos &&
            note.find("times x0.5 already applied") != std::string::npos;
  }
  EXPECT_TRUE(said);
}

}  // namespace
}  // namespace kfpbench::harness
