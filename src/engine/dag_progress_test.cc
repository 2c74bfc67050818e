// DAG progression: sub-pipelines, conditions, skipped consumers, exit
// handlers, oneOf outputs, and the pipelines KFP's SDK compiles.
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <set>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/dag_test_fixture.h"
#include "engine/engine.h"
#include "engine/engine_test_util.h"
#include "util/test_support.h"

namespace kfpbench::engine {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;
using nlohmann::json;
using namespace testing;  // the part's test helpers

TEST_F(DagTest, SubPipelineRunsWithItsOwnInputsAndOutputs) {
  const RunSnapshot& snap =
      RunToEnd(Spec(kfpbench::testing::TestData("engine/testdata/sub_pipeline.yaml")));
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
  EXPECT_EQ(executor_.LaunchesOf("exec-echo")[0]->work_dir,
            std::filesystem::path("run/inner/first"));
  EXPECT_EQ(snap.finished_at, VirtualLoop::Epoch() + 3s);
}

const std::string kCondition = kfpbench::testing::TestData("engine/testdata/condition.yaml");

TEST_F(DagTest, ConditionTrueRunsTheBranch) {
  executor_.behave = ByLabel({{"exec-flip", Outputs({{"Output", "heads"}})}});
  const RunSnapshot& snap = RunToEnd(Spec(kCondition));
  EXPECT_EQ(snap.state, RuntimeState::kSucceeded) << snap.error;
  EXPECT_EQ(FindTask(snap, "condition-1")->state, RuntimeState::kSucceeded);
  const TaskRecord* print = FindTask(snap, "print");
  ASSERT_NE(print, nullptr);
  // Constants may embed the task's other inputs.
  EXPECT_EQ(print->inputs["parameters"]["msg"], "got heads!");
  EXPECT_EQ(executor_.LaunchesOf("exec-echo")[0]->argv[1], "got heads!");
}

TEST_F(DagTest, ConditionFalseSkipsTheBranchButNotDownstream) {
  executor_.behave = ByLabel({{"exec-flip", Outputs({{"Output", "tails"}})}});
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
    executor.behave = ByLabel({{"exec-flip", Outputs({{"Output", "heads"}})}});
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
    ASSERT_TRUE(engine.Submit(Request("run", Spec(kCondition))).ok());
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
  executor_.behave = ByLabel({{"exec-flip", Outputs({{"Output", "tails"}})}});
  const RunSnapshot& snap = RunToEnd(
      Spec(kfpbench::testing::TestData("engine/testdata/consumer_of_skipped_output.yaml")));
  EXPECT_EQ(snap.state, RuntimeState::kSucceeded) << snap.error;
  EXPECT_EQ(FindTask(snap, "maybe")->state, RuntimeState::kSkipped);
  EXPECT_EQ(FindTask(snap, "uses-maybe")->state, RuntimeState::kSkipped);
}

const std::string kExitHandler = kfpbench::testing::TestData("engine/testdata/exit_handler.yaml");

TEST_F(DagTest, ExitHandlerRunsAfterFailure) {
  executor_.behave = ByLabel({{"exec-flip", Fails()}, {"exec-echo", Takes(3s)}});
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
  EXPECT_THAT(status["error"]["message"].get<std::string>(), HasSubstr("boom"));
}

TEST_F(DagTest, ExitHandlerSeesSuccess) {
  const RunSnapshot& snap = RunToEnd(Spec(kExitHandler));
  EXPECT_EQ(snap.state, RuntimeState::kSucceeded) << snap.error;
  EXPECT_EQ(FindTask(snap, "final")->inputs["parameters"]["status"]["state"], "SUCCEEDED");
}

// KFP terminates a run by setting the Argo workflow's activeDeadlineSeconds
// to 0, after which Argo starts no further node: the exit task does not run
// (kubeflow/pipelines#6101: "on termination the exit handler fails with
// ... Step exceeded its deadline"). Failures, unlike terminate, do run it.
TEST_F(DagTest, ExitHandlerDoesNotRunAfterTerminate) {
  executor_.behave = Always(Takes(1h));
  ASSERT_TRUE(engine_->Submit(Request("run", Spec(kExitHandler))).ok());
  loop_.RunUntil(loop_.Now() + 10s);
  ASSERT_EQ(executor_.LaunchesOf("exec-flip").size(), 1u);
  ASSERT_EQ(executor_.LaunchesOf("exec-echo").size(), 1u);  // print-op
  engine_->Terminate("run");
  loop_.Run();
  const RunSnapshot& snap = observer_.Of("run");
  EXPECT_EQ(snap.state, RuntimeState::kCanceled);
  EXPECT_EQ(FindTask(snap, "fail-op")->state, RuntimeState::kCanceled);
  EXPECT_EQ(executor_.LaunchesOf("exec-echo").size(), 1u);  // final never started
  EXPECT_EQ(FindTask(snap, "final"), nullptr);
}

TEST_F(DagTest, BadConditionValueFailsTheTask) {
  executor_.behave = ByLabel({{"exec-flip", Outputs({{"Output", "heads"}})}});
  std::string spec = Spec(kCondition);
  spec.replace(spec.find("== 'heads'"), 10, "> 3");
  const RunSnapshot& snap = RunToEnd(spec);
  EXPECT_EQ(snap.state, RuntimeState::kFailed);
  EXPECT_THAT(FindTask(snap, "condition-1")->error,
              HasSubstr("triggerPolicy.condition: cannot compare"))
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
    // pipeline_with_resource_spec asks for a TPU, which these nodes do not
    // offer: it fails saying so, where a cluster would leave it Pending.
    bool expect_fail = run_id == "fail_v2" || run_id == "pipeline_with_exit_handler" ||
                       run_id == "pipeline_with_resource_spec";
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
