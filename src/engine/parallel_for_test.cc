// ParallelFor: items from raw lists, inputs and artifacts, parallelism
// limits, collected outputs, and failed iterations.
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "engine/dag_test_fixture.h"
#include "engine/engine.h"
#include "engine/engine_test_util.h"
#include "util/test_support.h"

namespace kfpbench::engine {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using namespace testing;  // the part's test helpers

const std::string kLoop = kfpbench::testing::TestData("engine/testdata/loop.yaml");

std::string LoopSpec(int limit) {
  // Not std::string::replace: GCC 12 at -O3 sees a bogus overlap in it
  // (-Wrestrict, its bug 105329) when this file is compiled in a batch.
  const std::string_view loop = kLoop;
  const size_t at = loop.find("LIMIT");
  return Spec(std::string(loop.substr(0, at)) + std::to_string(limit) +
              std::string(loop.substr(at + 5)));
}

Behavior DoubleIt(const TaskLaunch& l) {
  Behavior b;
  if (l.executor_label == "exec-num")
    b.outputs = {{"Output", std::to_string(2 * std::stoi(l.argv[1]))}};
  return b;
}

TEST_F(DagTest, ParallelForRunsEachItemAndCollectsOutputs) {
  executor_.behave = DoubleIt;
  const RunSnapshot& snap = RunToEnd(LoopSpec(0));
  EXPECT_EQ(snap.state, RuntimeState::kSucceeded) << snap.error;
  EXPECT_EQ(executor_.max_running, 3);
  const TaskRecord* loop = FindTask(snap, "for-loop-1");
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->child_task_ids.size(), 3u);
  EXPECT_EQ(loop->outputs["parameters"]["pipelinechannel--num-Output"], json::array({2, 4, 6}));
  const TaskRecord* iteration = FindTask(snap, "for-loop-1-iteration-1");
  ASSERT_NE(iteration, nullptr);
  EXPECT_EQ(iteration->parent_task_id, loop->task_id);
  EXPECT_EQ(iteration->inputs["parameters"]["pipelinechannel--item"], json({{"a", 2}}));
  EXPECT_EQ(FindTask(snap, "sum")->inputs["parameters"]["msg"], json::array({2, 4, 6}));
  EXPECT_EQ(executor_.LaunchesOf("exec-num")[2]->work_dir,
            std::filesystem::path("run/for-loop-1/iteration-2/num"));
  EXPECT_EQ(snap.finished_at, VirtualLoop::Epoch() + 2s);
}

// ParallelFor over artifacts (artifactIterator): a loop's collected output
// artifacts, one iteration per artifact.
TEST_F(DagTest, ParallelForOverArtifactsGivesEachIterationOneArtifact) {
  const RunSnapshot& snap = RunToEnd(R"(
pipelineInfo: {name: artifact-loop}
components:
  comp-make:
    executorLabel: exec-make
    inputDefinitions: {parameters: {n: {parameterType: NUMBER_INTEGER}}}
    outputDefinitions:
      artifacts: {out: {artifactType: {schemaTitle: system.Artifact, schemaVersion: 0.0.1}}}
  comp-make-loop:
    dag:
      outputs:
        artifacts:
          out: {artifactSelectors: [{outputArtifactKey: out, producerSubtask: make}]}
      tasks:
        make:
          componentRef: {name: comp-make}
          inputs: {parameters: {n: {componentInputParameter: item}}}
          taskInfo: {name: make}
    inputDefinitions: {parameters: {item: {parameterType: NUMBER_INTEGER}}}
    outputDefinitions:
      artifacts:
        out:
          artifactType: {schemaTitle: system.Artifact, schemaVersion: 0.0.1}
          isArtifactList: true
  comp-show:
    executorLabel: exec-show
    inputDefinitions:
      artifacts: {a: {artifactType: {schemaTitle: system.Artifact, schemaVersion: 0.0.1}}}
  comp-show-loop:
    dag:
      tasks:
        show:
          componentRef: {name: comp-show}
          inputs: {artifacts: {a: {componentInputArtifact: each}}}
          taskInfo: {name: show}
    inputDefinitions:
      artifacts:
        all:
          artifactType: {schemaTitle: system.Artifact, schemaVersion: 0.0.1}
          isArtifactList: true
        each: {artifactType: {schemaTitle: system.Artifact, schemaVersion: 0.0.1}}
deploymentSpec:
  executors:
    exec-make: {container: {image: alpine, command: [make, "{{$.outputs.artifacts['out'].uri}}"]}}
    exec-show: {container: {image: alpine, command: [show, "{{$.inputs.artifacts['a'].uri}}"]}}
root:
  dag:
    tasks:
      make-loop:
        componentRef: {name: comp-make-loop}
        parameterIterator: {itemInput: item, items: {raw: "[1, 2, 3]"}}
        taskInfo: {name: make-loop}
      show-loop:
        componentRef: {name: comp-show-loop}
        dependentTasks: [make-loop]
        artifactIterator: {itemInput: each, items: {inputArtifact: all}}
        inputs:
          artifacts:
            all: {taskOutputArtifact: {producerTask: make-loop, outputArtifactKey: out}}
        taskInfo: {name: show-loop}
)");
  ASSERT_EQ(snap.state, RuntimeState::kSucceeded) << snap.error;
  std::set<std::string> made, shown;
  for (const auto* l : executor_.LaunchesOf("exec-make")) made.insert(l->argv.at(1));
  for (const auto* l : executor_.LaunchesOf("exec-show")) shown.insert(l->argv.at(1));
  EXPECT_EQ(made.size(), 3u);
  EXPECT_EQ(shown, made);
}

TEST_F(DagTest, ParallelismLimitRunsIterationsInTurn) {
  executor_.behave = DoubleIt;
  const RunSnapshot& snap = RunToEnd(LoopSpec(1));
  EXPECT_EQ(snap.state, RuntimeState::kSucceeded) << snap.error;
  EXPECT_EQ(executor_.max_running, 1);
  EXPECT_EQ(snap.finished_at, VirtualLoop::Epoch() + 4s);
  EXPECT_EQ(FindTask(snap, "sum")->inputs["parameters"]["msg"], json::array({2, 4, 6}));
}

TEST_F(DagTest, ParallelForOverAnInputListAndEmptyList) {
  std::string spec = Spec(kLoopOverListInput);
  const RunSnapshot& snap = RunToEnd(spec, {{"list", {"a", "b"}}});
  EXPECT_EQ(snap.state, RuntimeState::kSucceeded) << snap.error;
  auto launches = executor_.LaunchesOf("exec-echo");
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_EQ(launches[0]->argv[1], "a");
  EXPECT_EQ(launches[1]->argv[1], "b");

  const RunSnapshot& empty = SubmitAndRun(Request("empty", spec, {{"list", json::array()}}));
  EXPECT_EQ(empty.state, RuntimeState::kSucceeded);
  EXPECT_EQ(FindTask(empty, "for-loop-1")->state, RuntimeState::kSucceeded);
}

// A runtime list past ir::kMaxLoopItems fails its loop (and the run) with a
// clear error before any iteration starts; one million items once aborted
// the server.
TEST_F(DagTest, ParallelForPastTheItemLimitFailsTheRunClearly) {
  std::string spec = Spec(kLoopOverListInput);
  json items = json::array();
  for (size_t i = 0; i <= ir::kMaxLoopItems; ++i) items.push_back(std::to_string(i));
  const RunSnapshot& snap = RunToEnd(spec, {{"list", items}});
  EXPECT_EQ(snap.state, RuntimeState::kFailed);
  const auto* loop = FindTask(snap, "for-loop-1");
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->error, "ParallelFor over 10001 items: at most 10000 are allowed");
  EXPECT_TRUE(executor_.LaunchesOf("exec-echo").empty());
}

// A wide loop's run is snapshotted at most every 250 ms (virtual time here)
// while only its tasks change, yet ends with every task in its last snapshot
// and every run state seen; without the throttle each change is a snapshot.

TEST_F(DagTest, FailedIterationFailsTheLoop) {
  executor_.behave = [](const TaskLaunch& l) {
    Behavior b = DoubleIt(l);
    if (l.executor_label == "exec-num" && l.argv[1] == "2") b.fail = true;
    return b;
  };
  const RunSnapshot& snap = RunToEnd(LoopSpec(0));
  EXPECT_EQ(snap.state, RuntimeState::kFailed);
  EXPECT_EQ(FindTask(snap, "for-loop-1")->state, RuntimeState::kFailed);
  EXPECT_EQ(FindTask(snap, "sum"), nullptr);
  EXPECT_EQ(snap.error, "task 'num' failed: boom");
}

}  // namespace
}  // namespace kfpbench::engine
