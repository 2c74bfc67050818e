// What the ir tests share: a two-step pipeline in the shape KFP's compiler
// emits, and the error of parsing it after an edit.
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "ir/pipeline_spec.h"

namespace kfpbench::ir::testing {

// A two-step pipeline in the shape the KFP compiler emits.
inline constexpr const char* kTwoStep = R"(# PIPELINE DEFINITION
components:
  comp-add:
    executorLabel: exec-add
    inputDefinitions:
      parameters:
        a: {parameterType: NUMBER_INTEGER}
        b: {parameterType: NUMBER_INTEGER, defaultValue: 2, isOptional: true}
    outputDefinitions:
      parameters:
        Output: {parameterType: NUMBER_INTEGER}
  comp-print:
    executorLabel: exec-print
    inputDefinitions:
      parameters:
        msg: {parameterType: STRING}
deploymentSpec:
  executors:
    exec-add:
      container:
        image: python:3.11
        command: [sh, -c, 'echo $0']
        args: ['{{$.inputs.parameters[''a'']}}', '{{$}}']
        env:
        - {name: FOO, value: bar}
        resources:
          cpuLimit: 4.0
          memoryLimit: 15.032385536
          resourceCpuRequest: 500m
          resourceMemoryRequest: 1Gi
    exec-print:
      container:
        image: alpine
        command: [echo]
        args: ['{{$.inputs.parameters[''msg'']}}']
        resources:
          cpuRequest: 2.0
          memoryRequest: 4.294967296
pipelineInfo:
  name: two-step
  description: adds then prints
root:
  dag:
    outputs:
      parameters:
        Output:
          valueFromParameter: {producerSubtask: add, outputParameterKey: Output}
    tasks:
      add:
        componentRef: {name: comp-add}
        cachingOptions: {enableCache: true}
        inputs:
          parameters:
            a: {componentInputParameter: a}
            b: {runtimeValue: {constant: 5}}
        retryPolicy: {maxRetryCount: 3, backoffDuration: 2s, backoffFactor: 2.0, backoffMaxDuration: 3600s}
        taskInfo: {name: add}
      print:
        componentRef: {name: comp-print}
        dependentTasks: [add]
        inputs:
          parameters:
            msg:
              taskOutputParameter: {producerTask: add, outputParameterKey: Output}
        taskInfo: {name: print-display}
  inputDefinitions:
    parameters:
      a: {parameterType: NUMBER_INTEGER}
      version: {parameterType: STRING, defaultValue: '1.0', isOptional: true}
  outputDefinitions:
    parameters:
      Output: {parameterType: NUMBER_INTEGER}
schemaVersion: 2.1.0
sdkVersion: kfp-2.13.0
---
platforms:
  kubernetes: {}
)";

// Applies `edit` to the two-step spec and returns the parse error.
inline std::string ErrorAfter(const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json doc = (*YamlToJson(kTwoStep))[0];
  edit(doc);
  auto spec = ParsePipelineSpecJson(doc);
  if (spec.ok()) return "<parsed>";
  return spec.error().message;
}

}  // namespace kfpbench::ir::testing
