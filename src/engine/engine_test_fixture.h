// The fixture of the engine's tests of one pipeline at a time (engine_test,
// runs_test, launch_queue_test, container_launch_test): an engine on a
// virtual loop with a fake executor, and the pipelines they share.
#pragma once

#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "engine/engine.h"
#include "engine/engine_test_util.h"

namespace kfpbench::engine::testing {

// producer -> consumer, plus an independent side task; typed inputs.
constexpr const char* kPipeline = R"(
pipelineInfo: {name: my-pipeline}
components:
  comp-producer:
    executorLabel: exec-producer
    inputDefinitions:
      parameters:
        text: {parameterType: STRING}
        n: {parameterType: NUMBER_INTEGER}
    outputDefinitions:
      parameters:
        out: {parameterType: STRING}
        count: {parameterType: NUMBER_INTEGER}
  comp-consumer:
    executorLabel: exec-consumer
    inputDefinitions:
      parameters:
        msg: {parameterType: STRING}
        count: {parameterType: NUMBER_INTEGER}
        ratio: {parameterType: NUMBER_DOUBLE, defaultValue: 0.5, isOptional: true}
  comp-side:
    executorLabel: exec-side
deploymentSpec:
  executors:
    exec-producer:
      container:
        image: alpine
        command: [produce, '{{$.inputs.parameters[''text'']}}', '{{$.inputs.parameters[''n'']}}']
        args: [--out, '{{$.outputs.parameters[''out''].output_file}}', --executor_input, '{{$}}']
    exec-consumer:
      container:
        image: alpine
        command: [consume]
        args: ['{{$.inputs.parameters[''msg'']}}', '{{$.inputs.parameters[''count'']}}', '{{$.inputs.parameters[''ratio'']}}']
    exec-side:
      container: {image: alpine, command: [side]}
root:
  inputDefinitions:
    parameters:
      text: {parameterType: STRING}
      n: {parameterType: NUMBER_INTEGER, defaultValue: 7, isOptional: true}
  dag:
    tasks:
      producer:
        componentRef: {name: comp-producer}
        inputs:
          parameters:
            text: {componentInputParameter: text}
            n: {componentInputParameter: n}
        taskInfo: {name: producer}
      consumer:
        componentRef: {name: comp-consumer}
        dependentTasks: [producer]
        inputs:
          parameters:
            msg: {taskOutputParameter: {producerTask: producer, outputParameterKey: out}}
            count: {taskOutputParameter: {producerTask: producer, outputParameterKey: count}}
        taskInfo: {name: consumer}
      side:
        componentRef: {name: comp-side}
        taskInfo: {name: side}
schemaVersion: 2.1.0
)";

class EngineTest : public EngineFixture {
 protected:
  Engine& MakeEngine(EngineOptions options = {}) {
    if (options.nodes.empty()) options.nodes = {{"node-a", 4, int64_t{8} << 30}};
    options.random_seed = 42;
    return NewEngine(std::move(options));
  }
  Engine& MakeEngineOn(std::vector<NodeSpec> nodes) {
    EngineOptions options;
    options.nodes = std::move(nodes);
    return MakeEngine(std::move(options));
  }

  Status Submit(const std::string& yaml, nlohmann::json params,
                const std::string& run_id = "run-1") {
    if (!engine_) MakeEngine();
    return engine_->Submit(Request(run_id, yaml, std::move(params)));
  }
  // Submits run-1 and runs the loop until nothing is left.
  const RunSnapshot& RunToEnd(const std::string& yaml, nlohmann::json params) {
    if (!engine_) MakeEngine();
    return SubmitAndRun(Request("run-1", yaml, std::move(params)));
  }

  WallTime EventTime(const std::string& what) {
    for (const auto& e : executor_.events) {
      if (e.what == what) return e.time;
    }
    ADD_FAILURE() << "no event " << what;
    return {};
  }
};

// One-CPU node, three independent one-CPU tasks of 10 s: they run one at a
// time and the wait shows up as scheduling delay.
constexpr const char* kThreeCpuTasks = R"(
pipelineInfo: {name: capacity}
components:
  comp-a: {executorLabel: exec-a}
deploymentSpec:
  executors:
    exec-a:
      container:
        image: alpine
        command: [work]
        resources: {resourceCpuRequest: '1', resourceMemoryRequest: 1Gi}
root:
  dag:
    tasks:
      t1: {componentRef: {name: comp-a}}
      t2: {componentRef: {name: comp-a}}
      t3: {componentRef: {name: comp-a}}
)";

// Two independent tasks of 1 CPU, 1Gi each.
constexpr const char* kTwoTasks = R"(
pipelineInfo: {name: two}
components:
  comp-t: {executorLabel: exec-t}
deploymentSpec:
  executors:
    exec-t:
      container:
        image: alpine
        command: [t]
        resources: {resourceCpuRequest: '1', resourceMemoryRequest: 1Gi}
root:
  dag:
    tasks:
      a: {componentRef: {name: comp-t}, taskInfo: {name: a}}
      b: {componentRef: {name: comp-t}, taskInfo: {name: b}}
)";

// An engine whose options each test sets (nodes, shapes, snapshots, details).
class EngineNodesTest : public EngineFixture {
 protected:
  Engine& Make(EngineOptions options) {
    options.random_seed = 7;
    return NewEngine(std::move(options));
  }
  void Submit(const std::string& id) { ASSERT_TRUE(engine_->Submit(Request(id, kTwoTasks)).ok()); }
};

}  // namespace kfpbench::engine::testing
