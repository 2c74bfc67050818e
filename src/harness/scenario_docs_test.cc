// Every scenario file the docs show (a ```json block in README.md or
// docs/SCENARIOS.md that holds scenarios) and every example file must pass
// both the JSON Schema users validate against and the reader `run` uses, so
// the two can never disagree on a documented example.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "harness/scenario.h"
#include "kube/json_schema.h"

namespace kfpbench::harness {
namespace {

const std::filesystem::path kSource = KFPBENCH_SOURCE_DIR;

std::string Read(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Example {
  std::string where;  // file:line
  std::string text;
};

// The ```json blocks of a Markdown file that hold scenario files.
std::vector<Example> ScenarioBlocks(const std::filesystem::path& markdown) {
  std::vector<Example> out;
  std::istringstream in(Read(markdown));
  std::string line, block;
  int number = 0, start = 0;
  bool inside = false;
  while (std::getline(in, line)) {
    ++number;
    if (!inside && line.rfind("```json", 0) == 0) {
      inside = true;
      start = number;
      block.clear();
    } else if (inside && line.rfind("```", 0) == 0) {
      inside = false;
      auto json = nlohmann::json::parse(block, nullptr, false);
      bool scenarios = (json.is_array() && !json.empty() && json[0].contains("mode")) ||
                       (json.is_object() && (json.contains("scenarios") || json.contains("mode")));
      if (scenarios)
        out.push_back({markdown.filename().string() + ":" + std::to_string(start), block});
    } else if (inside) {
      block += line + "\n";
    }
  }
  return out;
}

void ExpectValid(const nlohmann::json& schema, const Example& example) {
  auto json = nlohmann::json::parse(example.text, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << example.where << ": not JSON";
  auto violations = kube::ValidateJson(schema, json);
  std::string all;
  for (const auto& v : violations) all += "\n  " + v;
  EXPECT_TRUE(violations.empty()) << example.where << " fails the schema:" << all;

  LoadOptions options;
  options.pipeline_dirs = {kSource / "examples/pipelines", kSource / "../shared/kfp/pipelines"};
  auto parsed = ParseScenarios(example.text, kSource / "examples/docs-example.json", options);
  if (!parsed.ok() && parsed.error().message.find("not found") != std::string::npos &&
      !std::filesystem::exists(kSource / "../shared/kfp/pipelines")) {
    return;  // the example names a KFP pipeline from ../shared, absent here
  }
  EXPECT_TRUE(parsed.ok()) << example.where
                           << " is refused by the reader: " << parsed.error().message;
}

TEST(ScenarioDocs, EveryDocumentedScenarioPassesSchemaAndReader) {
  auto schema = nlohmann::json::parse(Read(kSource / "docs/scenario.schema.json"));
  std::vector<Example> examples;
  for (const char* doc : {"README.md", "docs/SCENARIOS.md"}) {
    auto blocks = ScenarioBlocks(kSource / doc);
    examples.insert(examples.end(), blocks.begin(), blocks.end());
  }
  ASSERT_GE(examples.size(), 3u);  // the perf-tests form, a stress shape, the object form
  for (const auto& e : examples) ExpectValid(schema, e);
  for (const auto& entry : std::filesystem::directory_iterator(kSource / "examples")) {
    if (entry.path().extension() == ".json") {
      ExpectValid(schema, {entry.path().filename().string(), Read(entry.path())});
    }
  }
}

TEST(ScenarioDocs, SchemaRefusesWhatTheReaderRefuses) {
  auto schema = nlohmann::json::parse(Read(kSource / "docs/scenario.schema.json"));
  const char* refused[] = {
      R"([{"mode": "RUN", "runTime": 1}])",
      R"([{"mode": "RANDOM_GETS", "runTime": 1, "shape": "spike"}])",
      R"([{"mode": "RANDOM_GETS", "runTime": 1, "rate": 10, "shape": "stress",
           "stress": {"stepTime": "1m", "slo": {"p95": "1s"}}}])",
      R"([{"mode": "PIPELINE_RUN", "runTime": 1, "pipelineFileName": "sleep_chain.yaml",
           "shape": "stress", "stress": {"stepTime": "1m", "slo": {"p95": "1s"}}}])",
      R"([{"mode": "PIPELINE_RUN", "runTime": 1, "pipelineFileName": "sleep_chain.yaml",
           "rate": 10, "shape": "stress", "stress": {"stepTime": "1m"}}])",
      R"([{"mode": "PIPELINE_RUN", "runTime": 1, "pipelineFileName": "sleep_chain.yaml",
           "rate": 10, "shape": "stress",
           "stress": {"stepTime": "1m", "rateFactor": 1, "slo": {"p95": "1s"}}}])",
      R"([{"mode": "PIPELINE_RUN", "runTime": 1, "pipelineFileName": "sleep_chain.yaml",
           "rate": 10, "stress": {"stepTime": "1m", "slo": {"p95": "1s"}}}])",
      R"([{"mode": "PIPELINE_RUN", "runTime": 1, "pipelineFileName": "sleep_chain.yaml",
           "rate": 10, "shape": "stress",
           "stress": {"stepTime": "1m", "slo": {"p95": "1s", "p99": "2s"}}}])",
      R"([{"mode": "PIPELINE_RUN", "runTime": 1, "pipelineFileName": "sleep_chain.yaml",
           "shape": "growth"}])",
      R"([{"mode": "EXPERIMENT", "runTime": 1, "pipelineFileName": "sleep_chain.yaml",
           "shape": "growth", "growth": {"levels": [10], "measureTime": "1s"}}])",
      R"([{"mode": "PIPELINE_RUN", "runTime": 1, "pipelineFileName": "sleep_chain.yaml",
           "rate": 5, "shape": "growth", "growth": {"levels": [10], "measureTime": "1s"}}])",
      R"([{"mode": "PIPELINE_RUN", "runTime": 1, "pipelineFileName": "sleep_chain.yaml",
           "shape": "growth", "growth": {"levels": [0, 10], "measureTime": "1s"}}])",
      R"([{"mode": "PIPELINE_RUN", "runTime": 1, "pipelineFileName": "sleep_chain.yaml",
           "shape": "growth", "growth": {"levels": [10, 20.5], "measureTime": "1s"}}])",
      R"([{"mode": "PIPELINE_RUN", "runTime": 1, "pipelineFileName": "sleep_chain.yaml",
           "shape": "growth", "growth": {"levels": [10]}}])",
      R"([{"mode": "PIPELINE_RUN", "runTime": 1, "pipelineFileName": "sleep_chain.yaml",
           "growth": {"levels": [10], "measureTime": "1s"}}])",
  };
  LoadOptions options;
  options.pipeline_dirs = {kSource / "examples/pipelines"};
  for (const char* text : refused) {
    auto json = nlohmann::json::parse(text);
    EXPECT_FALSE(kube::ValidateJson(schema, json).empty()) << "the schema passes " << text;
    EXPECT_FALSE(ParseScenarios(text, kSource / "examples/x.json", options).ok())
        << "the reader passes " << text;
  }
}

}  // namespace
}  // namespace kfpbench::harness
