// The checks that need every component known (pipeline_spec_check.cc), seen
// through ParsePipelineSpecJson: each error names the JSON path it is about.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/pipeline_spec.h"
#include "ir/test_support.h"

namespace kfpbench::ir {
namespace {

using nlohmann::json;
using testing::ErrorAfter;
using ::testing::HasSubstr;
using testing::kTwoStep;

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
}

TEST(PipelineSpec, DataDependenciesCountAsUpstream) {
  json doc = (*YamlToJson(kTwoStep))[0];
  doc["root"]["dag"]["tasks"]["print"].erase("dependentTasks");
  auto spec = ParsePipelineSpecJson(doc);
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->root.dag->tasks.at("print").upstream, (std::vector<std::string>{"add"}));
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
    EXPECT_THAT(deep.error().message, HasSubstr("DAGs nested more than 100 deep"))
        << deep.error().message;
    EXPECT_EQ(deep.error().code, kHttpBadRequest);
  }
}

}  // namespace
}  // namespace kfpbench::ir
