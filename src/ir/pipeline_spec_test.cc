#include "ir/pipeline_spec.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/test_support.h"

namespace kfpbench::ir {
namespace {

using nlohmann::json;
using testing::ErrorAfter;
using ::testing::HasSubstr;
using testing::kTwoStep;

TEST(PipelineSpec, ParsesTypedStructure) {
  auto spec = ParsePipelineSpec(kTwoStep);
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->name, "two-step");
  EXPECT_EQ(spec->description, "adds then prints");
  EXPECT_EQ(spec->schema_version, "2.1.0");
  EXPECT_EQ(spec->json["pipelineInfo"]["name"], "two-step");
  EXPECT_TRUE(spec->warnings.empty());  // an empty platform spec asks for nothing

  const ComponentSpec* add = spec->FindComponent("comp-add");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->executor_label, "exec-add");
  EXPECT_FALSE(add->is_dag());
  EXPECT_EQ(add->inputs.parameters.at("a").type, ParameterType::kNumberInteger);
  EXPECT_TRUE(add->inputs.parameters.at("b").is_optional);
  EXPECT_EQ(*add->inputs.parameters.at("b").default_value, json(2));

  const ExecutorSpec* exec = spec->FindExecutor("exec-add");
  ASSERT_NE(exec, nullptr);
  EXPECT_EQ(exec->container.image, "python:3.11");
  EXPECT_EQ(exec->container.command, (std::vector<std::string>{"sh", "-c", "echo $0"}));
  EXPECT_EQ(exec->container.args[0], "{{$.inputs.parameters['a']}}");
  ASSERT_EQ(exec->container.env.size(), 1u);
  EXPECT_EQ(exec->container.env[0], (std::pair<std::string, std::string>{"FOO", "bar"}));
  const auto& res = exec->container.resources;
  EXPECT_DOUBLE_EQ(res.cpu_limit, 4.0);
  EXPECT_DOUBLE_EQ(res.cpu_request, 0.5);
  EXPECT_EQ(res.memory_limit, 15032385536);
  EXPECT_EQ(res.memory_request, int64_t{1} << 30);
  const auto& legacy = spec->FindExecutor("exec-print")->container.resources;
  EXPECT_DOUBLE_EQ(legacy.cpu_request, 2.0);
  EXPECT_EQ(legacy.memory_request, 4294967296);

  ASSERT_TRUE(spec->root.is_dag());
  const DagSpec& dag = *spec->root.dag;
  EXPECT_EQ(dag.topo_order, (std::vector<std::string>{"add", "print"}));
  const TaskSpec& t_add = dag.tasks.at("add");
  EXPECT_TRUE(t_add.enable_cache);
  EXPECT_EQ(t_add.parameters.at("a").kind, ParameterBinding::Kind::kComponentInput);
  EXPECT_EQ(t_add.parameters.at("b").constant, json(5));
  ASSERT_TRUE(t_add.retry);
  EXPECT_EQ(t_add.retry->max_retry_count, 3);
  EXPECT_EQ(t_add.retry->backoff, std::chrono::seconds(2));
  EXPECT_EQ(t_add.retry->backoff_max, std::chrono::seconds(3600));
  const TaskSpec& t_print = dag.tasks.at("print");
  EXPECT_EQ(t_print.display_name, "print-display");
  EXPECT_EQ(t_print.upstream, (std::vector<std::string>{"add"}));
  EXPECT_EQ(t_print.parameters.at("msg").producer_task, "add");
  EXPECT_EQ(dag.output_parameters.at("Output")[0].producer_task, "add");
  // Quoted scalars stay strings.
  EXPECT_EQ(*spec->root.inputs.parameters.at("version").default_value, json("1.0"));
}

TEST(PipelineSpec, ParsesJson) {
  auto docs = YamlToJson(kTwoStep);
  ASSERT_TRUE(docs.ok());
  auto spec = ParsePipelineSpec((*docs)[0].dump(2));
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->name, "two-step");
  EXPECT_TRUE(spec->warnings.empty());
  // A PipelineJob-like wrapper is unwrapped, and its platform spec read.
  json wrapped = {{"pipelineSpec", (*docs)[0]}, {"platformSpec", json::object()}};
  auto spec2 = ParsePipelineSpecJson(wrapped);
  ASSERT_TRUE(spec2.ok()) << spec2.error().message;
  EXPECT_EQ(spec2->name, "two-step");
  EXPECT_TRUE(spec2->warnings.empty());  // an empty platform spec asks for nothing
  wrapped["platformSpec"] = {
      {"platforms",
       {{"kubernetes",
         {{"deploymentSpec",
           {{"executors", {{"exec-add", {{"secretAsEnv", json::array()}}}}}}}}}}}};
  auto spec3 = ParsePipelineSpecJson(wrapped);
  ASSERT_TRUE(spec3.ok()) << spec3.error().message;
  ASSERT_EQ(spec3->warnings.size(), 1u);
  EXPECT_EQ(spec3->warnings[0], "platform spec: secretAsEnv not applied by the embedded backend");
}

TEST(PipelineSpec, NamesMissingExecutor) {
  EXPECT_EQ(ErrorAfter([](json& d) { d["deploymentSpec"]["executors"].erase("exec-print"); }),
            "components.comp-print.executorLabel: unknown executor 'exec-print' (not in "
            "deploymentSpec.executors)");
}

// KFP's legacy numeric resources (cores, GB) within what a quantity holds:
// 45,294,967,296 GB overflowed the byte count (undefined, found by the
// ir_pipeline fuzz target), and a negative or NaN request placed anywhere.
TEST(PipelineSpec, LegacyNumericResourcesAreSizes) {
  auto with = [](const char* key, json value) {
    return ErrorAfter([&](json& d) {
      d["deploymentSpec"]["executors"]["exec-add"]["container"]["resources"][key] = value;
    });
  };
  const std::string at = "deploymentSpec.executors.exec-add.container.resources.";
  EXPECT_EQ(with("memoryRequest", 45294967296.0),
            at + "memoryRequest: 45294967296 is not a size (0 up to 9.223e+09)");
  EXPECT_EQ(with("cpuLimit", 1e300), at + "cpuLimit: 1e+300 is not a size (0 up to 9.223e+15)");
  EXPECT_EQ(with("cpuRequest", -2), at + "cpuRequest: -2 is not a size (0 up to 9.223e+15)");
  EXPECT_EQ(with("memoryLimit", "nan"), at + "memoryLimit: nan is not a size (0 up to 9.223e+09)");
  // Protobuf counts likewise: whole numbers of int32.
  EXPECT_EQ(ErrorAfter([](json& d) {
              d["root"]["dag"]["tasks"]["add"]["retryPolicy"]["maxRetryCount"] = 1e20;
            }),
            "root.dag.tasks.add.retryPolicy.maxRetryCount: expected a whole number of int32, got "
            "1e+20");
  EXPECT_EQ(ErrorAfter([](json& d) {
              d["root"]["dag"]["tasks"]["add"]["retryPolicy"]["maxRetryCount"] = 2.5;
            }),
            "root.dag.tasks.add.retryPolicy.maxRetryCount: expected a whole number of int32, got "
            "2.5");
  auto docs = YamlToJson(kTwoStep);
  ASSERT_TRUE(docs.ok());
  (*docs)[0]["deploymentSpec"]["executors"]["exec-add"]["container"]["resources"] = {
      {"cpuLimit", 4.0}, {"memoryRequest", 15.032385536}};
  auto spec = ParsePipelineSpecJson((*docs)[0]);
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  const ResourceSpec& r = spec->executors.at("exec-add").container.resources;
  EXPECT_EQ(r.cpu_limit, 4.0);
  EXPECT_EQ(r.memory_request, 15032385536);
}

TEST(PipelineSpec, RejectsBadFields) {
  EXPECT_EQ(ErrorAfter([](json& d) { d.erase("pipelineInfo"); }),
            "pipelineInfo: required field is missing");
  EXPECT_EQ(
      ErrorAfter([](json& d) {
        d["deploymentSpec"]["executors"]["exec-add"]["container"]["resources"]["resourceCpuLimit"] =
            "lots";
      }),
      "deploymentSpec.executors.exec-add.container.resources.resourceCpuLimit: invalid CPU "
      "quantity 'lots': expected a number such as 500m, 0.5, 256Mi or 2G");
  EXPECT_EQ(ErrorAfter([](json& d) {
              d["root"]["dag"]["tasks"]["print"]["triggerPolicy"]["condition"] = "a ==";
            }).rfind("root.dag.tasks.print.triggerPolicy.condition: CEL expression", 0),
            0u);
  EXPECT_EQ(ErrorAfter([](json& d) {
              d["deploymentSpec"]["executors"]["exec-add"] = {{"importer", json::object()}};
            }),
            "deploymentSpec.executors.exec-add.importer.artifactUri: required field is missing");
  EXPECT_EQ(ErrorAfter([](json& d) {
              d["deploymentSpec"]["executors"]["exec-add"] = {
                  {"importer", {{"artifactUri", json::object()}}}};
            }),
            "deploymentSpec.executors.exec-add.importer.artifactUri: neither constant nor "
            "runtimeParameter is set");
  EXPECT_EQ(ErrorAfter([](json& d) {
              d["deploymentSpec"]["executors"]["exec-add"] = {{"customJob", json::object()}};
            }),
            "deploymentSpec.executors.exec-add: customJob executors are not supported (only "
            "containers and importers)");
  EXPECT_EQ(ErrorAfter([](json& d) { d["schemaVersion"] = "1.0.0"; }),
            "schemaVersion: unsupported schema version '1.0.0' (want 2.x)");
  EXPECT_EQ(ErrorAfter([](json& d) { d["components"]["comp-add"]["inputDefinitions"] = 3; }),
            "components.comp-add.inputDefinitions: expected a mapping, got a number");
  EXPECT_EQ(ErrorAfter([](json& d) {
              d["components"]["comp-add"]["inputDefinitions"]["parameters"]["a"]["parameterType"] =
                  "FLOAT";
            }),
            "components.comp-add.inputDefinitions.parameters.a.parameterType: unknown parameter "
            "type 'FLOAT'");
}

TEST(PipelineSpec, RefusesRawLoopItemsPastTheLimit) {
  json doc = (*YamlToJson(kTwoStep))[0];
  doc["components"]["comp-loop"] = {
      {"inputDefinitions", {{"parameters", {{"item", {{"parameterType", "STRING"}}}}}}},
      {"dag",
       {{"tasks",
         {{"add",
           {{"componentRef", {{"name", "comp-add"}}},
            {"inputs", {{"parameters", {{"a", {{"runtimeValue", {{"constant", 1}}}}}}}}}}}}}}}};
  json items = json::array();
  for (size_t i = 0; i <= kMaxLoopItems; ++i) items.push_back(i);
  doc["root"]["dag"]["tasks"]["loop"] = {
      {"componentRef", {{"name", "comp-loop"}}},
      {"parameterIterator", {{"itemInput", "item"}, {"items", {{"raw", items.dump()}}}}}};
  auto spec = ParsePipelineSpecJson(doc);
  ASSERT_FALSE(spec.ok());
  EXPECT_THAT(spec.error().message,
              HasSubstr("10001 items; a ParallelFor iterates at most 10000 times"))
      << spec.error().message;
  items.erase(items.size() - 1);
  doc["root"]["dag"]["tasks"]["loop"]["parameterIterator"]["items"]["raw"] = items.dump();
  auto at_limit = ParsePipelineSpecJson(doc);
  EXPECT_TRUE(at_limit.ok()) << at_limit.error().message;
}

TEST(PipelineSpec, ParsesLoopsConditionsAndExitHandlers) {
  auto spec = ParsePipelineSpec(R"(
pipelineInfo: {name: nested}
components:
  comp-echo:
    executorLabel: exec-echo
    inputDefinitions:
      parameters:
        msg: {parameterType: STRING}
        status: {parameterType: TASK_FINAL_STATUS, isOptional: true}
  comp-for-loop-1:
    inputDefinitions:
      parameters:
        pipelinechannel--item: {parameterType: STRING}
    dag:
      tasks:
        echo:
          componentRef: {name: comp-echo}
          inputs:
            parameters:
              msg: {componentInputParameter: pipelinechannel--item, parameterExpressionSelector: 'parseJson(string_value)["a"]'}
deploymentSpec:
  executors:
    exec-echo: {container: {image: alpine, command: [echo]}}
root:
  dag:
    tasks:
      for-loop-1:
        componentRef: {name: comp-for-loop-1}
        parameterIterator:
          itemInput: pipelinechannel--item
          items: {raw: '[{"a": 1}, {"a": 2}]'}
        iteratorPolicy: {parallelismLimit: 1}
        triggerPolicy:
          condition: inputs.parameter_values['x'] == 'heads'
      exit:
        componentRef: {name: comp-echo}
        dependentTasks: [for-loop-1]
        inputs:
          parameters:
            msg: {runtimeValue: {constant: bye}}
            status: {taskFinalStatus: {producerTask: for-loop-1}}
        triggerPolicy: {strategy: ALL_UPSTREAM_TASKS_COMPLETED}
)");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  const auto& loop = spec->root.dag->tasks.at("for-loop-1");
  ASSERT_TRUE(loop.iterator);
  EXPECT_TRUE(loop.iterator->raw);
  EXPECT_EQ(loop.iterator->raw_items.size(), 2u);
  EXPECT_EQ(loop.iterator->parallelism_limit, 1);
  EXPECT_EQ(loop.condition, "inputs.parameter_values['x'] == 'heads'");
  const auto& exit = spec->root.dag->tasks.at("exit");
  EXPECT_TRUE(exit.run_when_upstream_done);
  EXPECT_EQ(exit.parameters.at("status").kind, ParameterBinding::Kind::kTaskFinalStatus);
  EXPECT_EQ(spec->FindComponent("comp-for-loop-1")
                ->dag->tasks.at("echo")
                .parameters.at("msg")
                .expression_selector,
            "parseJson(string_value)[\"a\"]");
}

// Every compiled pipeline in the shared reference set parses.
TEST(PipelineSpec, ParsesReferencePipelines) {
  std::filesystem::path dir = KFPBENCH_SOURCE_DIR "/../shared/kfp/pipelines";
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << "no reference pipelines at " << dir;
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    auto spec = ParsePipelineSpec(text.str());
    ++count;
    ASSERT_TRUE(spec.ok()) << entry.path().filename() << ": " << spec.error().message;
    EXPECT_FALSE(spec->name.empty());
    EXPECT_TRUE(spec->root.is_dag());
    EXPECT_EQ(spec->root.dag->topo_order.size(), spec->root.dag->tasks.size());
  }
  EXPECT_GT(count, 0);
}

// As KFP's SDK does for enable_caching=False: every task's caching off,
// and the rewritten file parses to the same pipeline otherwise.
TEST(PipelineSpec, WithCachingTurnsEveryTasksCachingOff) {
  auto before = ParsePipelineSpec(kTwoStep);
  ASSERT_TRUE(before.ok()) << before.error().message;
  bool any_cached = false;
  for (const auto& [name, task] : before->root.dag->tasks) any_cached |= task.enable_cache;
  ASSERT_TRUE(any_cached);
  auto off = WithCaching(kTwoStep, false);
  ASSERT_TRUE(off.ok()) << off.error().message;
  auto after = ParsePipelineSpec(*off);
  ASSERT_TRUE(after.ok()) << after.error().message;
  EXPECT_EQ(after->root.dag->tasks.size(), before->root.dag->tasks.size());
  for (const auto& [name, task] : after->root.dag->tasks) EXPECT_FALSE(task.enable_cache) << name;
  EXPECT_EQ(after->executors.size(), before->executors.size());
  auto on = WithCaching(*off, true);
  ASSERT_TRUE(on.ok());
  auto again = ParsePipelineSpec(*on);
  ASSERT_TRUE(again.ok()) << again.error().message;
  for (const auto& [name, task] : again->root.dag->tasks) EXPECT_TRUE(task.enable_cache) << name;
  EXPECT_FALSE(WithCaching("[1, 2]", false).ok());
  EXPECT_FALSE(WithCaching("a: [", false).ok());
}

}  // namespace
}  // namespace kfpbench::ir
