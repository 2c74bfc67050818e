// The fixture of the DAG tests (dag_progress_test, parallel_for_test,
// launch_queue_test): an engine on a virtual loop with a fake executor, and
// pipelines of echo steps.
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "engine/engine.h"
#include "engine/engine_test_util.h"

namespace kfpbench::engine::testing {

class DagTest : public EngineFixture {
 protected:
  DagTest() : DagTest(Options()) {}
  explicit DagTest(EngineOptions options) { NewEngine(std::move(options)); }

  // One node of 16 CPU and 64Gi.
  static EngineOptions Options() {
    EngineOptions options;
    options.nodes = {{"node", 16, int64_t{64} << 30}};
    options.random_seed = 7;
    return options;
  }

  const RunSnapshot& RunToEnd(const std::string& yaml,
                              nlohmann::json params = nlohmann::json::object(),
                              RunRequest req = {}) {
    return SubmitAndRun(Request("run", yaml, std::move(params), std::move(req)));
  }
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

// One echo per item of the pipeline input `list`.
inline constexpr const char* kLoopOverListInput = R"(
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

inline std::string Spec(const std::string& body) {
  return std::string("pipelineInfo: {name: nested}\nschemaVersion: 2.1.0\ncomponents:") + kEcho +
         body + kEchoExecutor;
}

}  // namespace kfpbench::engine::testing
