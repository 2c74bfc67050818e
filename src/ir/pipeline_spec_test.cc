#include "ir/pipeline_spec.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace kfpbench::ir {
namespace {

using nlohmann::json;

// A two-step pipeline in the shape the KFP compiler emits.
constexpr const char* kTwoStep = R"(# PIPELINE DEFINITION
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

TEST(YamlToJson, KeepsScalarTypes) {
  auto docs = YamlToJson(R"(
int: 42
neg: -7
hex: 0x1f
float: 200.0
exp: 1.0e-05
bool: true
null1: ~
null2:
quoted_int: '42'
dquoted: "true"
version: 2.1.0
dotted: 20231101.en
block: |
  123
tagged: !!str 5
list: [1, 'a', 2.5]
big: 123456789012345678901234
)");
  ASSERT_TRUE(docs.ok()) << docs.error().message;
  const json& j = (*docs)[0];
  EXPECT_TRUE(j["int"].is_number_integer());
  EXPECT_EQ(j["int"], 42);
  EXPECT_EQ(j["neg"], -7);
  EXPECT_EQ(j["hex"], 31);
  EXPECT_TRUE(j["float"].is_number_float());
  EXPECT_DOUBLE_EQ(j["exp"].get<double>(), 1e-5);
  EXPECT_EQ(j["bool"], true);
  EXPECT_TRUE(j["null1"].is_null());
  EXPECT_TRUE(j["null2"].is_null());
  EXPECT_EQ(j["quoted_int"], "42");
  EXPECT_EQ(j["dquoted"], "true");
  EXPECT_EQ(j["version"], "2.1.0");
  EXPECT_EQ(j["dotted"], "20231101.en");
  EXPECT_EQ(j["block"], "123\n");
  EXPECT_EQ(j["tagged"], "5");
  EXPECT_EQ(j["list"], json::parse(R"([1, "a", 2.5])"));
  EXPECT_TRUE(j["big"].is_number_float());
}

TEST(YamlToJson, ReportsLineOfSyntaxError) {
  auto docs = YamlToJson("a: 1\nb: [1,\nc: 2\n");
  ASSERT_FALSE(docs.ok());
  EXPECT_NE(docs.error().message.find("invalid YAML at line"), std::string::npos)
      << docs.error().message;
  auto spec = ParsePipelineSpec("pipelineInfo:\n  name: x\n   bad: indent\n");
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.error().message.find("line 3"), std::string::npos) << spec.error().message;
  EXPECT_EQ(spec.error().code, 400);
}

// Applies `edit` to the two-step spec and returns the parse error.
std::string ErrorAfter(const std::function<void(json&)>& edit) {
  json doc = (*YamlToJson(kTwoStep))[0];
  edit(doc);
  auto spec = ParsePipelineSpecJson(doc);
  if (spec.ok()) return "<parsed>";
  return spec.error().message;
}

TEST(PipelineSpec, NamesUnknownComponent) {
  EXPECT_EQ(ErrorAfter([](json& d) {
              d["root"]["dag"]["tasks"]["print"]["componentRef"]["name"] = "comp-x";
            }),
            "root.dag.tasks.print.componentRef.name: unknown component 'comp-x'");
}

TEST(PipelineSpec, DetectsCycles) {
  std::string err =
      ErrorAfter([](json& d) { d["root"]["dag"]["tasks"]["add"]["dependentTasks"] = {"print"}; });
  EXPECT_EQ(err, "root.dag: dependency cycle: add -> print -> add");
}

TEST(PipelineSpec, DetectsSelfDependencyAndUnknownTasks) {
  EXPECT_EQ(
      ErrorAfter([](json& d) { d["root"]["dag"]["tasks"]["add"]["dependentTasks"] = {"add"}; }),
      "root.dag: dependency cycle: add -> add");
  EXPECT_EQ(
      ErrorAfter([](json& d) { d["root"]["dag"]["tasks"]["add"]["dependentTasks"] = {"zz"}; }),
      "root.dag.tasks.add.dependentTasks: unknown task 'zz'");
}

TEST(PipelineSpec, NamesMissingExecutor) {
  EXPECT_EQ(ErrorAfter([](json& d) { d["deploymentSpec"]["executors"].erase("exec-print"); }),
            "components.comp-print.executorLabel: unknown executor 'exec-print' (not in "
            "deploymentSpec.executors)");
}

TEST(PipelineSpec, ChecksDataReferences) {
  EXPECT_EQ(ErrorAfter([](json& d) {
              d["root"]["dag"]["tasks"]["print"]["inputs"]["parameters"]["msg"]
               ["taskOutputParameter"]["outputParameterKey"] = "Nope";
            }),
            "root.dag.tasks.print.inputs.parameters.msg.taskOutputParameter.outputParameterKey: "
            "task 'add' has no output parameter 'Nope'");
  EXPECT_EQ(
      ErrorAfter([](json& d) {
        d["root"]["dag"]["tasks"]["add"]["inputs"]["parameters"]["a"]["componentInputParameter"] =
            "zz";
      }),
      "root.dag.tasks.add.inputs.parameters.a.componentInputParameter: 'zz' is not an input "
      "of root");
  EXPECT_EQ(ErrorAfter([](json& d) {
              d["root"]["dag"]["tasks"]["add"]["inputs"]["parameters"].erase("a");
            }),
            "root.dag.tasks.add.inputs.parameters: required input parameter 'a' of comp-add is "
            "not bound");
  EXPECT_EQ(ErrorAfter([](json& d) {
              d["components"]["comp-add"]["inputDefinitions"]["parameters"]["a"]["parameterType"] =
                  "FLOAT";
            }),
            "components.comp-add.inputDefinitions.parameters.a.parameterType: unknown parameter "
            "type 'FLOAT'");
}

TEST(PipelineSpec, DataDependenciesCountAsUpstream) {
  json doc = (*YamlToJson(kTwoStep))[0];
  doc["root"]["dag"]["tasks"]["print"].erase("dependentTasks");
  auto spec = ParsePipelineSpecJson(doc);
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->root.dag->tasks.at("print").upstream, (std::vector<std::string>{"add"}));
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
}

TEST(PipelineSpec, DetectsComponentRecursion) {
  json doc = (*YamlToJson(kTwoStep))[0];
  doc["components"]["comp-loop"] = {
      {"dag", {{"tasks", {{"inner", {{"componentRef", {{"name", "comp-loop"}}}}}}}}}};
  doc["root"]["dag"]["tasks"]["loop"] = {{"componentRef", {{"name", "comp-loop"}}}};
  auto spec = ParsePipelineSpecJson(doc);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.error().message,
            "components.comp-loop: component recursion: root -> comp-loop -> comp-loop");
}

// A chain of DAG components `depth` deep below the root, ending in the two-step
// pipeline's add component.
json NestedChain(int depth) {
  json doc = (*YamlToJson(kTwoStep))[0];
  for (int k = 1; k <= depth; ++k) {
    std::string inner = k == depth ? "comp-add" : "comp-dag-" + std::to_string(k + 1);
    json task = {{"componentRef", {{"name", inner}}}};
    if (k == depth) {
      task["inputs"] = {{"parameters", {{"a", {{"runtimeValue", {{"constant", 1}}}}}}}};
    }
    doc["components"]["comp-dag-" + std::to_string(k)] = {{"dag", {{"tasks", {{"t", task}}}}}};
  }
  doc["root"]["dag"]["tasks"]["deep"] = {{"componentRef", {{"name", "comp-dag-1"}}}};
  return doc;
}

// Argo refuses templates nested more than 100 deep; so does the parser, and
// a 20,000-deep chain (once 3.2 GB and a bad_alloc) is refused in bounded
// memory with the same message.
TEST(PipelineSpec, RefusesDagsNestedDeeperThanArgoAllows) {
  auto ok = ParsePipelineSpecJson(NestedChain(kMaxDagNesting - 1));  // the root is a level too
  EXPECT_TRUE(ok.ok()) << ok.error().message;
  for (int depth : {static_cast<int>(kMaxDagNesting), 20'000}) {
    auto deep = ParsePipelineSpecJson(NestedChain(depth));
    ASSERT_FALSE(deep.ok()) << depth;
    EXPECT_NE(deep.error().message.find("DAGs nested more than 100 deep"), std::string::npos)
        << deep.error().message;
    EXPECT_EQ(deep.error().code, kHttpBadRequest);
  }
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
  EXPECT_NE(spec.error().message.find("10001 items; a ParallelFor iterates at most 10000 times"),
            std::string::npos)
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

TEST(Quantity, ParsesCpuAndMemory) {
  EXPECT_DOUBLE_EQ(*ParseQuantityCpu("500m"), 0.5);
  EXPECT_DOUBLE_EQ(*ParseQuantityCpu("2"), 2.0);
  EXPECT_DOUBLE_EQ(*ParseQuantityCpu("1.5"), 1.5);
  EXPECT_EQ(*ParseQuantityMemory("1Gi"), int64_t{1} << 30);
  EXPECT_EQ(*ParseQuantityMemory("2G"), 2000000000);
  EXPECT_EQ(*ParseQuantityMemory("128Mi"), 128 << 20);
  EXPECT_EQ(*ParseQuantityMemory("1.5Ki"), 1536);
  EXPECT_EQ(*ParseQuantityMemory("129e6"), 129000000);
  EXPECT_EQ(*ParseQuantityMemory("100"), 100);
  EXPECT_FALSE(ParseQuantityCpu("").ok());
  EXPECT_FALSE(ParseQuantityCpu("-1").ok());
  EXPECT_FALSE(ParseQuantityMemory("1Zi").ok());
  EXPECT_FALSE(ParseQuantityMemory("abc").ok());
  EXPECT_EQ(*ParseProtoDuration("3600s"), std::chrono::seconds(3600));
  EXPECT_EQ(*ParseProtoDuration("0.5s"), std::chrono::milliseconds(500));
  EXPECT_FALSE(ParseProtoDuration("5m").ok());
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

}  // namespace
}  // namespace kfpbench::ir

namespace kfpbench::ir {
namespace {

// Issue #13, item 1: a 307-byte upload of nested aliases aborted the server
// with bad_alloc; ten levels grew it to 24 GB.
TEST(YamlLimits, AliasBombsAndDeepNestingAreRefusedNotExpanded) {
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n";
  std::string previous = "a";
  for (char level = 'b'; level <= 'j'; ++level) {
    std::string name(1, level);
    bomb += name + ": &" + name + " [";
    for (int i = 0; i < 9; ++i) bomb += (i ? ", *" : "*") + previous;
    bomb += "]\n";
    previous = name;
  }
  auto docs = YamlToJson(bomb);
  ASSERT_FALSE(docs.ok());
  EXPECT_NE(docs.error().message.find("alias"), std::string::npos) << docs.error().message;
  EXPECT_EQ(docs.error().code, 400);

  std::string deep = std::string(300, '[') + std::string(300, ']');
  auto nested = YamlToJson(deep);
  ASSERT_FALSE(nested.ok());
  EXPECT_NE(nested.error().message.find("deep"), std::string::npos) << nested.error().message;

  std::string deeper = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_FALSE(YamlToJson(deeper).ok());  // an error, not a stack overflow

  auto fine = YamlToJson("a: &a [1, 2]\nb: [*a, *a]\n");  // aliases within reason still work
  ASSERT_TRUE(fine.ok()) << fine.error().message;
  EXPECT_EQ((*fine)[0]["b"], nlohmann::json::parse("[[1, 2], [1, 2]]"));
}

// Found by the ir_pipeline fuzz target: yaml-cpp's LoadAll never returns, and
// allocates an empty document per turn, when a document starts with ','.
TEST(YamlLimits, ADocumentThatCannotStartIsAnErrorNotAnEndlessLoop) {
  for (const char* text : {",", ",# Outputs:", "---\n,", "a: 1\n---\n&x , b"}) {
    auto docs = YamlToJson(text);
    ASSERT_FALSE(docs.ok()) << text;
    EXPECT_NE(docs.error().message.find("unexpected ','"), std::string::npos)
        << docs.error().message;
    EXPECT_EQ(docs.error().code, 400);
  }
  auto at = YamlToJson("a: 1\n---\n,");
  ASSERT_FALSE(at.ok());
  EXPECT_NE(at.error().message.find("line 3, column 1"), std::string::npos) << at.error().message;

  // Empty documents, each consuming its marker, are not mistaken for a stall.
  auto empties = YamlToJson("---\n---\n---\na: 1\n...\n");
  ASSERT_TRUE(empties.ok()) << empties.error().message;
  EXPECT_EQ(empties->size(), 3u);
  EXPECT_EQ(empties->back()["a"], 1);
}

TEST(YamlToJson, KeysAnchorsAndAliases) {
  auto docs = YamlToJson(R"(
&k 5: first
b: *k
c: &m {x: 1}
d: *m
*k : again
a: 1
a: 2
)");
  ASSERT_TRUE(docs.ok()) << docs.error().message;
  const json& j = (*docs)[0];
  EXPECT_EQ(j["5"], "again");  // an alias of a scalar is a key; the last duplicate wins
  EXPECT_EQ(j["b"], 5);        // the anchored key keeps its type where it is a value
  EXPECT_EQ(j["d"], json::parse(R"({"x": 1})"));
  EXPECT_EQ(j["a"], 2);

  for (const char* bad : {"[1]: x", "{a: 1}: x", "a: &m {x: 1}\n*m : y", "~: x"}) {
    auto refused = YamlToJson(bad);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_NE(refused.error().message.find("keys must be scalars"), std::string::npos)
        << refused.error().message;
  }
  // Anchors belong to their document.
  EXPECT_FALSE(YamlToJson("a: &x 1\n---\nb: *x\n").ok());
}

}  // namespace
}  // namespace kfpbench::ir
