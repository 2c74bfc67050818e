#include "ir/placeholders.h"

#include <gtest/gtest.h>

namespace kfpbench::ir {
namespace {

using nlohmann::json;

class PlaceholdersTest : public ::testing::Test {
 protected:
  PlaceholdersTest() {
    params_ = {{"text", "hi there"},         {"n", 3},         {"f", 2.5}, {"b", false},
               {"l", json::array({1, "a"})}, {"s", {{"k", 1}}}};
    outputs_ = {{"Output", "/w/Output"}};
    in_artifacts_["examples"] = {ArtifactValue{"examples", "gs://b/x", "/gcs/b/x", "system.Dataset",
                                               "0.0.1", json::object()}};
    out_artifacts_["model"] =
        ArtifactValue{"model", "/w/model", "/w/model", "system.Model", "0.0.1", json::object()};
    ctx_.parameters = &params_;
    ctx_.output_parameter_files = &outputs_;
    ctx_.input_artifacts = &in_artifacts_;
    ctx_.output_artifacts = &out_artifacts_;
    ctx_.executor_output_file = "/w/executor_output.json";
    ctx_.pipeline_job_name = "run-1";
    ctx_.pipeline_task_name = "train";
  }

  std::string Resolve(const std::string& text) {
    auto r = ResolvePlaceholders(text, ctx_);
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() ? *r : "";
  }

  json params_;
  std::map<std::string, std::string> outputs_;
  std::map<std::string, std::vector<ArtifactValue>> in_artifacts_;
  std::map<std::string, ArtifactValue> out_artifacts_;
  PlaceholderContext ctx_;
};

TEST_F(PlaceholdersTest, InputParameters) {
  EXPECT_EQ(Resolve("{{$.inputs.parameters['text']}}"), "hi there");
  EXPECT_EQ(Resolve("n={{$.inputs.parameters['n']}} f={{$.inputs.parameters[\"f\"]}}"),
            "n=3 f=2.5");
  EXPECT_EQ(Resolve("{{$.inputs.parameters['b']}}"), "false");
  EXPECT_EQ(Resolve("{{$.inputs.parameters['l']}}"), R"([1,"a"])");
  EXPECT_EQ(Resolve("{{$.inputs.parameters['s']}}"), R"({"k":1})");
  EXPECT_EQ(Resolve("no placeholders {{ here"), "no placeholders {{ here");
}

TEST_F(PlaceholdersTest, OutputsAndArtifacts) {
  EXPECT_EQ(Resolve("--out={{$.outputs.parameters['Output'].output_file}}"), "--out=/w/Output");
  EXPECT_EQ(Resolve("{{$.inputs.artifacts['examples'].uri}}"), "gs://b/x");
  EXPECT_EQ(Resolve("{{$.inputs.artifacts['examples'].path}}"), "/gcs/b/x");
  EXPECT_EQ(Resolve("{{$.outputs.artifacts['model'].path}}"), "/w/model");
  EXPECT_EQ(Resolve("{{$.pipeline_job_name}}/{{$.pipeline_task_name}}"), "run-1/train");
}

TEST_F(PlaceholdersTest, ExecutorInput) {
  json input = json::parse(Resolve("{{$}}"));
  EXPECT_EQ(input["inputs"]["parameterValues"]["n"], 3);
  EXPECT_EQ(input["inputs"]["parameterValues"]["text"], "hi there");
  EXPECT_EQ(input["outputs"]["parameters"]["Output"]["outputFile"], "/w/Output");
  EXPECT_EQ(input["outputs"]["outputFile"], "/w/executor_output.json");
  EXPECT_EQ(input["inputs"]["artifacts"]["examples"]["artifacts"][0]["uri"], "gs://b/x");
  EXPECT_EQ(input["outputs"]["artifacts"]["model"]["artifacts"][0]["type"]["schemaTitle"],
            "system.Model");
}

TEST_F(PlaceholdersTest, Errors) {
  auto unknown = ResolvePlaceholders("{{$.foo}}", ctx_);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message, "placeholder '{{$.foo}}': unknown placeholder");
  auto missing = ResolvePlaceholders("{{$.inputs.parameters['nope']}}", ctx_);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message,
            "placeholder '{{$.inputs.parameters['nope']}}': input parameter 'nope' has no value");
  EXPECT_FALSE(ResolvePlaceholders("{{$.outputs.parameters['x'].output_file}}", ctx_).ok());
  EXPECT_FALSE(ResolvePlaceholders("{{$.outputs.parameters['Output'].uri}}", ctx_).ok());
  EXPECT_FALSE(ResolvePlaceholders("{{$.inputs.artifacts['none'].uri}}", ctx_).ok());
}

TEST_F(PlaceholdersTest, StructuredPlaceholders) {
  std::vector<std::string> args = {
      "--a",
      R"({"Concat": ["--n=", "{{$.inputs.parameters['n']}}", "!"]})",
      R"({"IfPresent": {"InputName": "text", "Then": ["--text", "{{$.inputs.parameters['text']}}"]}})",
      R"({"IfPresent": {"InputName": "absent", "Then": ["--x"], "Else": ["--no-x"]}})",
      R"({"IfPresent": {"InputName": "absent", "Then": ["--y"]}})",
      R"({"IfPresent": {"InputName": "n", "Then": [{"Concat": ["-", "{{$.inputs.parameters['n']}}"]}]}})",
  };
  auto out = ResolveCommandLine(args, ctx_);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(*out,
            (std::vector<std::string>{"--a", "--n=3!", "--text", "hi there", "--no-x", "-3"}));
  // A JSON arg that is not a structured placeholder stays as it is.
  auto plain = ResolveCommandLine({R"({"key": "value"})"}, ctx_);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ((*plain)[0], R"({"key": "value"})");
}

TEST(ExecutorOutput, ReadsParameterValues) {
  auto out = OutputParametersFromExecutorOutput(
      R"({"parameterValues": {"Output": 3, "s": "hi", "l": [1, 2]}, "artifacts": {}})");
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(*out,
            (std::map<std::string, std::string>{{"Output", "3"}, {"l", "[1,2]"}, {"s", "hi"}}));
  EXPECT_TRUE(OutputParametersFromExecutorOutput("{}")->empty());
  EXPECT_FALSE(OutputParametersFromExecutorOutput("not json").ok());
}

}  // namespace
}  // namespace kfpbench::ir
