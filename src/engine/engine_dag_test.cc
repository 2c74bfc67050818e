// Nested DAGs: sub-pipelines, conditions, ParallelFor, exit handlers, retries.
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "engine/engine.h"
#include "engine/engine_test_util.h"

namespace kfpbench::engine {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using namespace testing;  // the part's test helpers

class DagTest : public ::testing::Test {
 protected:
  DagTest() : executor_(loop_) {
    EngineOptions options;
    options.nodes = {{"node", 16, int64_t{64} << 30}};
    options.random_seed = 7;
    engine_ = std::make_unique<Engine>(loop_, executor_, observer_, options);
  }

  const RunSnapshot& RunToEnd(const std::string& yaml, json params = json::object()) {
    RunRequest req;
    req.run_id = "run";
    req.spec = MustParse(yaml);
    req.parameters = std::move(params);
    auto s = engine_->Submit(std::move(req));
    EXPECT_TRUE(s.ok()) << s.error().message;
    loop_.Run();
    return observer_.Of("run");
  }

  std::vector<const TaskLaunch*> LaunchesOf(const std::string& label) {
    std::vector<const TaskLaunch*> out;
    for (const auto& l : executor_.launched) {
      if (l.executor_label == label) out.push_back(&l);
    }
    return out;
  }

  VirtualLoop loop_;
  FakeExecutor executor_;
  RecordingObserver observer_;
  std::unique_ptr<Engine> engine_;
};

constexpr const char* kEcho = R"(
  comp-echo:
    executorLabel: exec-echo
    inputDefinitions:
      parameters:
        msg: {parameterType: STRING}
    outputDefinitions:
      parameters:
        Output: {parameterType: STRING}
)";
constexpr const char* kEchoExecutor = R"(
deploymentSpec:
  executors:
    exec-echo:
      container: {image: alpine, command: [echo, '{{$.inputs.parameters[''msg'']}}']}
    exec-flip:
      container: {image: alpine, command: [flip]}
    exec-num:
      container: {image: alpine, command: [num, '{{$.inputs.parameters[''x'']}}']}
)";

std::string Spec(const std::string& body) {
  return std::string("pipelineInfo: {name: nested}\nschemaVersion: 2.1.0\ncomponents:") + kEcho +
         body + kEchoExecutor;
}

TEST_F(DagTest, SubPipelineRunsWithItsOwnInputsAndOutputs) {
  const RunSnapshot& snap = RunToEnd(Spec(R"(
  comp-inner:
    inputDefinitions:
      parameters:
        msg: {parameterType: STRING}
    outputDefinitions:
      parameters:
        result: {parameterType: STRING}
    dag:
      outputs:
        parameters:
          result: {valueFromParameter: {producerSubtask: second, outputParameterKey: Output}}
      tasks:
        first:
          componentRef: {name: comp-echo}
          inputs: {parameters: {msg: {componentInputParameter: msg}}}
        second:
          componentRef: {name: comp-echo}
          dependentTasks: [first]
          inputs: {parameters: {msg: {taskOutputParameter: {producerTask: first, outputParameterKey: Output}}}}
root:
  dag:
    tasks:
      inner:
        componentRef: {name: comp-inner}
        inputs: {parameters: {msg: {runtimeValue: {constant: world}}}}
      after:
        componentRef: {name: comp-echo}
        dependentTasks: [inner]
        inputs: {parameters: {msg: {taskOutputParameter: {producerTask: inner, outputParameterKey: result}}}}
)"));
  EXPECT_EQ(snap.state, RuntimeState::kSucceeded) << snap.error;
  const TaskRecord* inner = FindTask(snap, "inner");
  ASSERT_NE(inner, nullptr);
  EXPECT_TRUE(inner->executor_label.empty());
  EXPECT_EQ(inner->child_task_ids.size(), 2u);
  EXPECT_EQ(inner->parent_task_id, snap.tasks[0].task_id);
  EXPECT_EQ(inner->outputs["parameters"]["result"], "text");
  const TaskRecord* first = FindTask(snap, "first");
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->parent_task_id, inner->task_id);
  EXPECT_EQ(first->inputs["parameters"]["msg"], "world");
  EXPECT_EQ(FindTask(snap, "after")->inputs["parameters"]["msg"], "text");
  EXPECT_EQ(LaunchesOf("exec-echo")[0]->work_dir, std::filesystem::path("run/inner/first"));
  EXPECT_EQ(snap.finished_at, VirtualLoop::Epoch() + 3s);
}

constexpr const char* kCondition = R"(
  comp-flip:
    executorLabel: exec-flip
    outputDefinitions:
      parameters:
        Output: {parameterType: STRING}
  comp-condition-1:
    inputDefinitions:
      parameters:
        pipelinechannel--flip-Output: {parameterType: STRING}
    dag:
      tasks:
        print:
          componentRef: {name: comp-echo}
          inputs:
            parameters:
              msg: {runtimeValue: {constant: 'got {{$.inputs.parameters[''pipelinechannel--flip-Output'']}}!'}}
              pipelinechannel--flip-Output: {componentInputParameter: pipelinechannel--flip-Output}
root:
  dag:
    tasks:
      flip:
        componentRef: {name: comp-flip}
      condition-1:
        componentRef: {name: comp-condition-1}
        dependentTasks: [flip]
        inputs:
          parameters:
            pipelinechannel--flip-Output: {taskOutputParameter: {producerTask: flip, outputParameterKey: Output}}
        triggerPolicy:
          condition: inputs.parameter_values['pipelinechannel--flip-Output'] == 'heads'
      downstream:
        componentRef: {name: comp-echo}
        dependentTasks: [condition-1]
        inputs: {parameters: {msg: {runtimeValue: {constant: done}}}}
)";

TEST_F(DagTest, ConditionTrueRunsTheBranch) {
  executor_.behave = [](const TaskLaunch& l) {
    Behavior b;
    if (l.executor_label == "exec-flip") b.outputs = {{"Output", "heads"}};
    return b;
  };
  const RunSnapshot& snap = RunToEnd(Spec(kCondition));
  EXPECT_EQ(snap.state, RuntimeState::kSucceeded) << snap.error;
  EXPECT_EQ(FindTask(snap, "condition-1")->state, RuntimeState::kSucceeded);
  const TaskRecord* print = FindTask(snap, "print");
  ASSERT_NE(print, nullptr);
  // Constants may embed the task's other inputs.
  EXPECT_EQ(print->inputs["parameters"]["msg"], "got heads!");
  EXPECT_EQ(LaunchesOf("exec-echo")[0]->argv[1], "got heads!");
}

TEST_F(DagTest, ConditionFalseSkipsTheBranchButNotDownstream) {
  executor_.behave = [](const TaskLaunch& l) {
    Behavior b;
    if (l.executor_label == "exec-flip") b.outputs = {{"Output", "tails"}};
    return b;
  };
  const RunSnapshot& snap = RunToEnd(Spec(kCondition));
  EXPECT_EQ(snap.state, RuntimeState::kSucceeded) << snap.error;
  const TaskRecord* cond = FindTask(snap, "condition-1");
  ASSERT_NE(cond, nullptr);
  EXPECT_EQ(cond->state, RuntimeState::kSkipped);
  EXPECT_TRUE(cond->child_task_ids.empty());
  EXPECT_EQ(FindTask(snap, "print"), nullptr);
  // A skipped upstream does not block a task that only waits for it.
  EXPECT_EQ(FindTask(snap, "downstream")->state, RuntimeState::kSucceeded);
}

TEST(DagDecideCondition, OverridesTheConditionByTaskNameAndDefersOtherwise) {
  // The flip says heads, so the condition alone would take the branch.
  for (std::optional<bool> decided : {std::optional<bool>(false), std::optional<bool>()}) {
    VirtualLoop loop;
    FakeExecutor executor(loop);
    executor.behave = [](const TaskLaunch& l) {
      Behavior b;
      if (l.executor_label == "exec-flip") b.outputs = {{"Output", "heads"}};
      return b;
    };
    RecordingObserver observer;
    EngineOptions options;
    options.nodes = {{"node", 16, int64_t{64} << 30}};
    options.random_seed = 7;
    std::vector<std::string> asked;
    options.decide_condition = [&](const std::string& name) {
      asked.push_back(name);
      return decided;
    };
    Engine engine(loop, executor, observer, options);
    RunRequest req;
    req.run_id = "run";
    req.spec = MustParse(Spec(kCondition));
    ASSERT_TRUE(engine.Submit(std::move(req)).ok());
    loop.Run();
    const RunSnapshot& snap = observer.Of("run");
    EXPECT_EQ(snap.state, RuntimeState::kSucceeded) << snap.error;
    EXPECT_EQ(asked, std::vector<std::string>{"condition-1"});
    EXPECT_EQ(FindTask(snap, "condition-1")->state,
              decided ? RuntimeState::kSkipped : RuntimeState::kSucceeded);
    EXPECT_EQ(FindTask(snap, "print") != nullptr, !decided.has_value());
  }
}

TEST_F(DagTest, ConsumerOfSkippedOutputIsSkipped) {
  executor_.behave = [](const TaskLaunch& l) {
    Behavior b;
    if (l.executor_label == "exec-flip") b.outputs = {{"Output", "tails"}};
    return b;
  };
  const RunSnapshot& snap = RunToEnd(Spec(R"(
  comp-flip:
    executorLabel: exec-flip
    outputDefinitions:
      parameters:
        Output: {parameterType: STRING}
root:
  dag:
    tasks:
      flip:
        componentRef: {name: comp-flip}
      maybe:
        componentRef: {name: comp-echo}
        dependentTasks: [flip]
        inputs:
          parameters:
            msg: {taskOutputParameter: {producerTask: flip, outputParameterKey: Output}}
        triggerPolicy: {condition: "inputs.parameter_values['msg'] == 'heads'"}
      uses-maybe:
        componentRef: {name: comp-echo}
        inputs:
          parameters:
            msg: {taskOutputParameter: {producerTask: maybe, outputParameterKey: Output}}
)"));
  EXPECT_EQ(snap.state, RuntimeState::kSucceeded) << snap.error;
  EXPECT_EQ(FindTask(snap, "maybe")->state, RuntimeState::kSkipped);
  EXPECT_EQ(FindTask(snap, "uses-maybe")->state, RuntimeState::kSkipped);
}

constexpr const char* kLoop = R"(
  comp-num:
    executorLabel: exec-num
    inputDefinitions:
      parameters:
        x: {parameterType: NUMBER_INTEGER}
    outputDefinitions:
      parameters:
        Output: {parameterType: NUMBER_INTEGER}
  comp-for-loop-1:
    inputDefinitions:
      parameters:
        pipelinechannel--item: {parameterType: STRUCT}
    outputDefinitions:
      parameters:
        pipelinechannel--num-Output: {parameterType: LIST}
    dag:
      outputs:
        parameters:
          pipelinechannel--num-Output: {valueFromParameter: {producerSubtask: num, outputParameterKey: Output}}
      tasks:
        num:
          componentRef: {name: comp-num}
          inputs:
            parameters:
              x: {componentInputParameter: pipelinechannel--item, parameterExpressionSelector: 'parseJson(string_value)["a"]'}
  comp-sum:
    executorLabel: exec-echo
    inputDefinitions:
      parameters:
        msg: {parameterType: LIST}
root:
  dag:
    tasks:
      for-loop-1:
        componentRef: {name: comp-for-loop-1}
        parameterIterator:
          itemInput: pipelinechannel--item
          items: {raw: '[{"a": 1}, {"a": 2}, {"a": 3}]'}
        iteratorPolicy: {parallelismLimit: LIMIT}
      sum:
        componentRef: {name: comp-sum}
        dependentTasks: [for-loop-1]
        inputs:
          parameters:
            msg: {taskOutputParameter: {producerTask: for-loop-1, outputParameterKey: pipelinechannel--num-Output}}
)";

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
  EXPECT_EQ(LaunchesOf("exec-num")[2]->work_dir,
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
  for (const auto* l : LaunchesOf("exec-make")) made.insert(l->argv.at(1));
  for (const auto* l : LaunchesOf("exec-show")) shown.insert(l->argv.at(1));
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

// One echo per item of the pipeline input `list`.
constexpr const char* kLoopOverListInput = R"(
  comp-for-loop-1:
    inputDefinitions:
      parameters:
        pipelinechannel--list: {parameterType: LIST}
        pipelinechannel--list-loop-item: {parameterType: STRING}
    dag:
      tasks:
        print:
          componentRef: {name: comp-echo}
          inputs: {parameters: {msg: {componentInputParameter: pipelinechannel--list-loop-item}}}
root:
  inputDefinitions:
    parameters:
      list: {parameterType: LIST}
  dag:
    tasks:
      for-loop-1:
        componentRef: {name: comp-for-loop-1}
        inputs: {parameters: {pipelinechannel--list: {componentInputParameter: list}}}
        parameterIterator:
          itemInput: pipelinechannel--list-loop-item
          items: {inputParameter: pipelinechannel--list}
)";

TEST_F(DagTest, ParallelForOverAnInputListAndEmptyList) {
  std::string spec = Spec(kLoopOverListInput);
  const RunSnapshot& snap = RunToEnd(spec, {{"list", {"a", "b"}}});
  EXPECT_EQ(snap.state, RuntimeState::kSucceeded) << snap.error;
  auto launches = LaunchesOf("exec-echo");
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_EQ(launches[0]->argv[1], "a");
  EXPECT_EQ(launches[1]->argv[1], "b");

  RunRequest req;
  req.run_id = "empty";
  req.spec = MustParse(spec);
  req.parameters = {{"list", json::array()}};
  ASSERT_TRUE(engine_->Submit(req).ok());
  loop_.Run();
  EXPECT_EQ(observer_.Of("empty").state, RuntimeState::kSucceeded);
  EXPECT_EQ(FindTask(observer_.Of("empty"), "for-loop-1")->state, RuntimeState::kSucceeded);
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
  EXPECT_TRUE(LaunchesOf("exec-echo").empty());
}

// A wide loop's run is snapshotted at most every 250 ms (virtual time here)
// while only its tasks change, yet ends with every task in its last snapshot
// and every run state seen; without the throttle each change is a snapshot.
TEST(DagSnapshots, LargeRunsAreSnapshottedAtIntervalsAndEndComplete) {
  std::string spec = Spec(R"(
  comp-for-loop-1:
    inputDefinitions:
      parameters:
        pipelinechannel--list-loop-item: {parameterType: STRING}
    dag:
      tasks:
        print:
          componentRef: {name: comp-echo}
          inputs: {parameters: {msg: {componentInputParameter: pipelinechannel--list-loop-item}}}
root:
  dag:
    tasks:
      for-loop-1:
        componentRef: {name: comp-for-loop-1}
        parameterIterator:
          itemInput: pipelinechannel--list-loop-item
          items: {raw: 'ITEMS'}
)");
  json items = json::array();
  for (int i = 0; i < 400; ++i) items.push_back(std::to_string(i));
  spec.replace(spec.find("ITEMS"), 5, items.dump());
  auto run_with = [&](size_t large_run_records) {
    VirtualLoop loop;
    FakeExecutor executor(loop);
    RecordingObserver observer;
    EngineOptions options;
    options.nodes = {{"node", 4, int64_t{64} << 30}};
    options.random_seed = 7;
    options.large_run_records = large_run_records;
    Engine engine(loop, executor, observer, options);
    RunRequest req;
    req.run_id = "wide";
    req.spec = MustParse(spec);
    EXPECT_TRUE(engine.Submit(std::move(req)).ok());
    loop.Run();
    const RunSnapshot& last = observer.Of("wide");
    EXPECT_EQ(last.state, RuntimeState::kSucceeded);
    size_t succeeded = 0;
    for (const auto& t : last.tasks) succeeded += t.state == RuntimeState::kSucceeded;
    EXPECT_GE(succeeded, 800u);  // 400 iterations and their 400 steps, at least
    EXPECT_EQ(States(last.history),
              (std::vector<RuntimeState>{RuntimeState::kPending, RuntimeState::kRunning,
                                         RuntimeState::kSucceeded}));
    return observer.count;
  };
  int every_change = run_with(std::numeric_limits<size_t>::max());
  int throttled = run_with(256);
  EXPECT_GE(every_change, 400);  // at least one per iteration
  EXPECT_LT(throttled * 4, every_change) << throttled << " of " << every_change;
}

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

constexpr const char* kExitHandler = R"(
  comp-fail:
    executorLabel: exec-flip
  comp-final:
    executorLabel: exec-echo
    inputDefinitions:
      parameters:
        msg: {parameterType: STRING}
        status: {parameterType: TASK_FINAL_STATUS}
  comp-exit-handler-1:
    dag:
      tasks:
        fail-op:
          componentRef: {name: comp-fail}
        print-op:
          componentRef: {name: comp-echo}
          inputs: {parameters: {msg: {runtimeValue: {constant: hi}}}}
root:
  dag:
    tasks:
      exit-handler-1:
        componentRef: {name: comp-exit-handler-1}
      final:
        componentRef: {name: comp-final}
        dependentTasks: [exit-handler-1]
        inputs:
          parameters:
            msg: {runtimeValue: {constant: bye}}
            status: {taskFinalStatus: {producerTask: exit-handler-1}}
        triggerPolicy: {strategy: ALL_UPSTREAM_TASKS_COMPLETED}
)";

TEST_F(DagTest, ExitHandlerRunsAfterFailure) {
  executor_.behave = [](const TaskLaunch& l) {
    Behavior b;
    if (l.executor_label == "exec-flip") b.fail = true;
    if (l.executor_label == "exec-echo") b.duration = 3s;
    return b;
  };
  const RunSnapshot& snap = RunToEnd(Spec(kExitHandler));
  EXPECT_EQ(snap.state, RuntimeState::kFailed);
  EXPECT_EQ(snap.error, "task 'fail-op' failed: boom");
  EXPECT_EQ(FindTask(snap, "exit-handler-1")->state, RuntimeState::kFailed);
  EXPECT_EQ(FindTask(snap, "print-op")->state, RuntimeState::kSucceeded);
  const TaskRecord* final = FindTask(snap, "final");
  ASSERT_NE(final, nullptr);
  EXPECT_EQ(final->state, RuntimeState::kSucceeded);
  EXPECT_EQ(final->start_time, VirtualLoop::Epoch() + 3s);
  const json& status = final->inputs["parameters"]["status"];
  EXPECT_EQ(status["state"], "FAILED");
  EXPECT_EQ(status["pipelineTaskName"], "exit-handler-1");
  EXPECT_NE(status["error"]["message"].get<std::string>().find("boom"), std::string::npos);
}

TEST_F(DagTest, ExitHandlerSeesSuccess) {
  const RunSnapshot& snap = RunToEnd(Spec(kExitHandler));
  EXPECT_EQ(snap.state, RuntimeState::kSucceeded) << snap.error;
  EXPECT_EQ(FindTask(snap, "final")->inputs["parameters"]["status"]["state"], "SUCCEEDED");
}

constexpr const char* kRetry = R"(
root:
  dag:
    tasks:
      flaky:
        componentRef: {name: comp-echo}
        inputs: {parameters: {msg: {runtimeValue: {constant: x}}}}
        retryPolicy: {maxRetryCount: 2, backoffDuration: 2s, backoffFactor: 2.0, backoffMaxDuration: 3600s}
)";

TEST_F(DagTest, RetriesWithBackoffThenSucceeds) {
  int calls = 0;
  executor_.behave = [&calls](const TaskLaunch&) {
    Behavior b;
    b.fail = ++calls <= 2;
    return b;
  };
  const RunSnapshot& snap = RunToEnd(Spec(kRetry));
  EXPECT_EQ(snap.state, RuntimeState::kSucceeded) << snap.error;
  ASSERT_EQ(executor_.launched.size(), 3u);
  // Attempt 1 ends at 1s, retry after 2s; attempt 2 ends at 4s, retry after 4s.
  EXPECT_EQ(executor_.events[2].time, VirtualLoop::Epoch() + 3s);
  EXPECT_EQ(executor_.events[4].time, VirtualLoop::Epoch() + 8s);
  EXPECT_EQ(snap.finished_at, VirtualLoop::Epoch() + 9s);
  const TaskRecord* flaky = FindTask(snap, "flaky");
  EXPECT_EQ(flaky->state, RuntimeState::kSucceeded);
  EXPECT_EQ(flaky->pod_name, executor_.launched[2].pod_name);
  EXPECT_NE(executor_.launched[0].pod_name, executor_.launched[2].pod_name);
  EXPECT_NE(flaky->history[2].error.find("attempt 1 failed: boom"), std::string::npos);
  // Each attempt is a launch of its executor (what the simulator keys a step's draw by).
  for (uint32_t k = 0; k < 3; ++k) EXPECT_EQ(executor_.launched[k].label_launches_before, k);
}

TEST_F(DagTest, LaunchesAreCountedPerExecutorWithinTheRun) {
  const RunSnapshot& snap = RunToEnd(Spec(R"(
  comp-flip:
    executorLabel: exec-flip
    outputDefinitions:
      parameters:
        Output: {parameterType: STRING}
root:
  dag:
    tasks:
      first:
        componentRef: {name: comp-echo}
        inputs: {parameters: {msg: {runtimeValue: {constant: x}}}}
      flip:
        componentRef: {name: comp-flip}
        dependentTasks: [first]
      second:
        componentRef: {name: comp-echo}
        dependentTasks: [flip]
        inputs: {parameters: {msg: {runtimeValue: {constant: y}}}}
)"));
  EXPECT_EQ(snap.state, RuntimeState::kSucceeded) << snap.error;
  ASSERT_EQ(executor_.launched.size(), 3u);
  EXPECT_EQ(executor_.launched[0].executor_label, "exec-echo");
  EXPECT_EQ(executor_.launched[0].label_launches_before, 0u);
  EXPECT_EQ(executor_.launched[1].executor_label, "exec-flip");
  EXPECT_EQ(executor_.launched[1].label_launches_before, 0u);
  EXPECT_EQ(executor_.launched[2].executor_label, "exec-echo");
  EXPECT_EQ(executor_.launched[2].label_launches_before, 1u);
}

TEST_F(DagTest, RetriesRunOut) {
  executor_.behave = [](const TaskLaunch&) {
    Behavior b;
    b.fail = true;
    return b;
  };
  const RunSnapshot& snap = RunToEnd(Spec(kRetry));
  EXPECT_EQ(snap.state, RuntimeState::kFailed);
  EXPECT_EQ(executor_.launched.size(), 3u);
  EXPECT_EQ(FindTask(snap, "flaky")->error, "boom");
}

TEST_F(DagTest, TerminateDuringRetryBackoff) {
  executor_.behave = [](const TaskLaunch&) {
    Behavior b;
    b.fail = true;
    return b;
  };
  RunRequest req;
  req.run_id = "run";
  req.spec = MustParse(Spec(kRetry));
  ASSERT_TRUE(engine_->Submit(req).ok());
  loop_.RunUntil(VirtualLoop::Epoch() + 2s);  // in the first backoff
  engine_->Terminate("run");
  loop_.Run();
  const RunSnapshot& snap = observer_.Of("run");
  EXPECT_EQ(snap.state, RuntimeState::kCanceled);
  EXPECT_EQ(executor_.launched.size(), 1u);
  EXPECT_EQ(FindTask(snap, "flaky")->state, RuntimeState::kCanceled);
}

TEST_F(DagTest, BadConditionValueFailsTheTask) {
  executor_.behave = [](const TaskLaunch& l) {
    Behavior b;
    if (l.executor_label == "exec-flip") b.outputs = {{"Output", "heads"}};
    return b;
  };
  std::string spec = Spec(kCondition);
  spec.replace(spec.find("== 'heads'"), 10, "> 3");
  const RunSnapshot& snap = RunToEnd(spec);
  EXPECT_EQ(snap.state, RuntimeState::kFailed);
  EXPECT_NE(FindTask(snap, "condition-1")->error.find("triggerPolicy.condition: cannot compare"),
            std::string::npos)
      << FindTask(snap, "condition-1")->error;
}

TEST_F(DagTest, OneOfTakesTheBranchThatRan) {
  executor_.behave = [](const TaskLaunch& l) {
    Behavior b;
    if (l.executor_label == "exec-echo") b.outputs = {{"Output", l.argv[1]}};
    return b;
  };
  const RunSnapshot& snap = RunToEnd(Spec(R"yaml(
  comp-branches:
    inputDefinitions:
      parameters:
        pipelinechannel--coin: {parameterType: STRING}
    outputDefinitions:
      parameters:
        Output: {parameterType: STRING}
    dag:
      outputs:
        parameters:
          Output:
            valueFromOneof:
              parameterSelectors:
              - {producerSubtask: heads-task, outputParameterKey: Output}
              - {producerSubtask: tails-task, outputParameterKey: Output}
      tasks:
        heads-task:
          componentRef: {name: comp-echo}
          inputs:
            parameters:
              msg: {runtimeValue: {constant: H}}
              pipelinechannel--coin: {componentInputParameter: pipelinechannel--coin}
          triggerPolicy: {condition: "inputs.parameter_values['pipelinechannel--coin'] == 'heads'"}
        tails-task:
          componentRef: {name: comp-echo}
          inputs:
            parameters:
              msg: {runtimeValue: {constant: T}}
              pipelinechannel--coin: {componentInputParameter: pipelinechannel--coin}
          triggerPolicy: {condition: "!(inputs.parameter_values['pipelinechannel--coin'] == 'heads')"}
root:
  inputDefinitions:
    parameters:
      coin: {parameterType: STRING}
  dag:
    tasks:
      branches:
        componentRef: {name: comp-branches}
        inputs: {parameters: {pipelinechannel--coin: {componentInputParameter: coin}}}
      after:
        componentRef: {name: comp-echo}
        inputs:
          parameters:
            msg: {taskOutputParameter: {producerTask: branches, outputParameterKey: Output}}
)yaml"),
                                     {{"coin", "tails"}});
  EXPECT_EQ(snap.state, RuntimeState::kSucceeded) << snap.error;
  EXPECT_EQ(FindTask(snap, "heads-task")->state, RuntimeState::kSkipped);
  EXPECT_EQ(FindTask(snap, "after")->inputs["parameters"]["msg"], "T");
}

// Every reference pipeline runs to its expected end with the fake executor.
TEST_F(DagTest, RunsReferencePipelines) {
  std::filesystem::path dir = KFPBENCH_SOURCE_DIR "/../shared/kfp/pipelines";
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << "no reference pipelines at " << dir;
  executor_.behave = [](const TaskLaunch& l) {
    Behavior b;
    b.fail = l.executor_label.find("fail") != std::string::npos;
    return b;
  };
  // A value of the right type for every required pipeline input.
  auto params_for = [](const ir::PipelineSpec& spec) {
    json params = json::object();
    for (const auto& [name, def] : spec.root.inputs.parameters) {
      if (def.default_value || def.is_optional) continue;
      switch (def.type) {
        case ir::ParameterType::kNumberInteger:
          params[name] = 2;
          break;
        case ir::ParameterType::kNumberDouble:
          params[name] = 2.5;
          break;
        case ir::ParameterType::kBoolean:
          params[name] = true;
          break;
        case ir::ParameterType::kList:
          params[name] = {"a", "b", "c"};
          break;
        case ir::ParameterType::kStruct:
          params[name] = {{"k", 1}};
          break;
        default:
          params[name] = "text";
          break;
      }
    }
    return params;
  };
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    std::string stem = entry.path().stem().string();
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    RunRequest req;
    req.run_id = stem;
    req.spec = MustParse(text.str());
    ASSERT_NE(req.spec, nullptr) << stem;
    req.parameters = params_for(*req.spec);
    auto s = engine_->Submit(req);
    ASSERT_TRUE(s.ok()) << stem << ": " << s.error().message;
    ++count;
  }
  loop_.Run();
  for (const auto& [run_id, snap] : observer_.last) {
    bool expect_fail = run_id == "fail_v2" || run_id == "pipeline_with_exit_handler";
    EXPECT_EQ(snap.state, expect_fail ? RuntimeState::kFailed : RuntimeState::kSucceeded)
        << run_id << ": " << snap.error;
    for (const auto& t : snap.tasks) {
      EXPECT_TRUE(IsTerminal(t.state)) << run_id << "/" << t.name;
    }
  }
  EXPECT_EQ(static_cast<int>(observer_.last.size()), count);
  const RunSnapshot& loops = observer_.Of("pipeline_with_parallelfor_parallelism");
  EXPECT_NE(FindTask(loops, "for-loop-1-iteration-2"), nullptr);
  const RunSnapshot& exit = observer_.Of("pipeline_with_exit_handler");
  EXPECT_EQ(FindTask(exit, "print-op")->state, RuntimeState::kSucceeded);
}

}  // namespace
}  // namespace kfpbench::engine
