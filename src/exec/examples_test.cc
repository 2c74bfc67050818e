// The example pipelines are only useful if they parse as KFP IR and their
// steps' command lines, once placeholders are resolved, are valid
// `kfpbench step` invocations whose outputs feed the next steps. This runs
// each example's root DAG in-process (RunStep instead of a process), in
// dependency order, with short durations.
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "exec/step_workload.h"
#include "exec/test_support.h"
#include "ir/pipeline_spec.h"
#include "ir/placeholders.h"

namespace kfpbench::exec {
namespace {

using ::testing::ElementsAre;
namespace fs = std::filesystem;

const fs::path kExamples = fs::path(KFPBENCH_SOURCE_DIR) / "examples" / "pipelines";

ir::PipelineSpec Load(const std::string& file) {
  std::ifstream in(kExamples / file);
  std::stringstream text;
  text << in.rdbuf();
  auto spec = ir::ParsePipelineSpec(text.str());
  if (!spec.ok()) ADD_FAILURE() << file << ": " << spec.error().message;
  return spec.ok() ? std::move(*spec) : ir::PipelineSpec{};
}

struct LocalRun {
  std::vector<std::string> ran;                                       // task names, in order
  std::map<std::string, int> exit_codes;                              // by task
  std::map<std::string, std::map<std::string, std::string>> outputs;  // task -> name -> value
};

// A minimal stand-in for the engine: root DAG only, no conditions or loops.
LocalRun RunLocally(const ir::PipelineSpec& spec, const nlohmann::json& overrides,
                    const fs::path& dir) {
  LocalRun run;
  nlohmann::json pipeline_inputs = nlohmann::json::object();
  for (const auto& [name, param] : spec.root.inputs.parameters) {
    if (param.default_value) pipeline_inputs[name] = *param.default_value;
  }
  pipeline_inputs.update(overrides);

  const ir::DagSpec& dag = *spec.root.dag;
  for (const std::string& name : dag.topo_order) {
    const ir::TaskSpec& task = dag.tasks.at(name);
    bool blocked = false;
    for (const auto& up : task.upstream)
      blocked |= run.exit_codes.count(up) == 0 || run.exit_codes[up] != 0;
    if (blocked) continue;

    const ir::ComponentSpec* component = spec.FindComponent(task.component_ref);
    const ir::ExecutorSpec* executor = spec.FindExecutor(component->executor_label);
    nlohmann::json inputs = nlohmann::json::object();
    for (const auto& [input, binding] : task.parameters) {
      switch (binding.kind) {
        case ir::ParameterBinding::Kind::kComponentInput:
          inputs[input] = pipeline_inputs.at(binding.component_input);
          break;
        case ir::ParameterBinding::Kind::kConstant:
          inputs[input] = binding.constant;
          break;
        case ir::ParameterBinding::Kind::kTaskOutput:
          inputs[input] = run.outputs.at(binding.producer_task).at(binding.output_key);
          break;
        default:
          ADD_FAILURE() << name << ": unsupported binding for " << input;
      }
    }
    std::map<std::string, std::string> output_files;
    for (const auto& [output, param] : component->outputs.parameters) {
      output_files[output] = (dir / name / "outputs" / output / "data").string();
    }
    ir::PlaceholderContext ctx;
    ctx.parameters = &inputs;
    ctx.output_parameter_files = &output_files;
    auto command = ir::ResolveCommandLine(executor->container.command, ctx);
    auto args = ir::ResolveCommandLine(executor->container.args, ctx);
    if (!command.ok() || !args.ok()) {
      ADD_FAILURE() << name << ": " << (command.ok() ? args.error() : command.error()).message;
      continue;
    }
    EXPECT_THAT(*command, ElementsAre("kfpbench", "step")) << name;
    auto options = ParseStepArgs(*args);
    if (!options.ok()) {
      ADD_FAILURE() << name << ": " << options.error().message;
      continue;
    }
    run.ran.push_back(name);
    run.exit_codes[name] = RunStep(*options);
    for (const auto& [output, file] : output_files) {
      std::ifstream in(file);
      std::stringstream value;
      value << in.rdbuf();
      if (in) run.outputs[name][output] = value.str();
    }
  }
  return run;
}

// What every example shares: SDK-shaped IR, kfpbench steps, short defaults,
// and no caching (a benchmark must actually run its steps).
void CheckCommon(const ir::PipelineSpec& spec) {
  EXPECT_EQ(spec.schema_version, "2.1.0");
  EXPECT_THAT(spec.sdk_version, ::testing::StartsWith("kfp-2."));
  EXPECT_TRUE(spec.warnings.empty()) << fmt::format("{}", fmt::join(spec.warnings, "; "));
  for (const auto& [label, executor] : spec.executors) {
    EXPECT_EQ(executor.container.image, "ghcr.io/kfpbench/kfpbench:latest") << label;
  }
  for (const auto& [name, task] : spec.root.dag->tasks) EXPECT_FALSE(task.enable_cache) << name;
  const auto& duration = spec.root.inputs.parameters.at("duration");
  ASSERT_TRUE(duration.default_value.has_value());
  auto d = ParseDuration(duration.default_value->get<std::string>());
  ASSERT_TRUE(d.ok());
  EXPECT_LE(*d, std::chrono::seconds(1));
}

TEST(ExamplesTest, SleepChainPassesItsTokenDownThreeSteps) {
  ir::PipelineSpec spec = Load("sleep_chain.yaml");
  ASSERT_EQ(spec.name, "sleep-chain");
  CheckCommon(spec);
  EXPECT_EQ(spec.root.inputs.parameters.at("duration").default_value, "1s");
  testing::TempDir tmp;
  LocalRun run = RunLocally(spec, {{"duration", "10ms"}}, tmp.path());
  EXPECT_THAT(run.ran, ElementsAre("sleep", "sleep-2", "sleep-3"));
  EXPECT_EQ(run.outputs["sleep-3"]["Output"], "start/sleep/sleep/sleep");
  ASSERT_EQ(spec.root.dag->output_parameters.at("Output").size(), 1u);
  EXPECT_EQ(spec.root.dag->output_parameters.at("Output")[0].producer_task, "sleep-3");
}

TEST(ExamplesTest, FanOutRunsFourLimitedWorkersBetweenSplitAndJoin) {
  ir::PipelineSpec spec = Load("fan_out.yaml");
  ASSERT_EQ(spec.name, "fan-out");
  CheckCommon(spec);
  const auto& tasks = spec.root.dag->tasks;
  EXPECT_THAT(tasks.at("join").upstream, ElementsAre("work", "work-2", "work-3", "work-4"));
  for (const char* worker : {"work", "work-2", "work-3", "work-4"}) {
    EXPECT_THAT(tasks.at(worker).upstream, ElementsAre("split")) << worker;
    const auto* component = spec.FindComponent(tasks.at(worker).component_ref);
    const auto& res = spec.FindExecutor(component->executor_label)->container.resources;
    EXPECT_DOUBLE_EQ(res.cpu_limit, 0.5) << worker;
    EXPECT_DOUBLE_EQ(res.cpu_request, 0.25) << worker;
    EXPECT_EQ(res.memory_limit, 128 << 20) << worker;
    EXPECT_EQ(res.memory_request, 64 << 20) << worker;
  }
  testing::TempDir tmp;
  LocalRun run = RunLocally(spec, {{"duration", "10ms"}}, tmp.path());
  EXPECT_EQ(run.ran.size(), 6u);
  EXPECT_EQ(run.outputs["join"]["Output"],
            "split:shard-1,split:shard-2,split:shard-3,split:shard-4");
}

TEST(ExamplesTest, FailStepFailsAndStopsItsDownstream) {
  ir::PipelineSpec spec = Load("fail_step.yaml");
  ASSERT_EQ(spec.name, "fail-step");
  CheckCommon(spec);
  testing::TempDir tmp;
  LocalRun run = RunLocally(spec, {{"duration", "10ms"}}, tmp.path());
  EXPECT_THAT(run.ran, ElementsAre("fail"));
  EXPECT_EQ(run.exit_codes["fail"], 1);
}

}  // namespace
}  // namespace kfpbench::exec
