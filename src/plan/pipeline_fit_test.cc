#include "plan/pipeline_fit.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/test_support.h"
#include "util/units.h"

namespace kfpbench::plan {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

StepExecution Step(const std::string& name, double cpu, double memory_gi) {
  StepExecution e;
  e.step = name;
  e.duration = std::chrono::seconds(10);
  e.cpu_cores = {cpu};
  e.memory_bytes = {memory_gi * static_cast<double>(kGi)};
  return e;
}

// The six-step pipeline: prepare, then train-a/b/c together, evaluate,
// publish. Its widest level is the three trainers.
std::vector<StepExecution> SixSteps(double train_cpu, double train_memory_gi) {
  return {Step("prepare", 0.5, 1),
          Step("train-a", train_cpu, train_memory_gi),
          Step("train-b", train_cpu, train_memory_gi),
          Step("train-c", train_cpu, train_memory_gi),
          Step("evaluate", 0.5, 1),
          Step("publish", 0.2, 0.5)};
}

TEST(PipelineFit, WidestLevelDecidesHowManyRunsFitANode) {
  ProfileOptions options;
  options.headroom = 0;
  options.node = NodeSize{16, 56 * kGi};
  options.node_text = "16cpu,56Gi";
  ProfileReport r = BuildProfile(SixSteps(1.5, 2), options);
  AddPipelineFit(*sim::testing::SixSteps(), r);
  ASSERT_TRUE(r.pipeline_fit.has_value());
  // Three trainers of 1.5 CPU and 2Gi: 4.5 CPU, 6Gi a run. 16 / 4.5 = 3 by
  // CPU, 56 / 6 = 9 by memory: 3 whole runs, beside 10 trainers (jobs per step).
  EXPECT_EQ(r.pipeline_fit->pipelines, 3);
  EXPECT_EQ(r.pipeline_fit->limited_by, "cpu");
  EXPECT_EQ(r.pipeline_fit->tasks, (std::vector<std::string>{"train-a", "train-b", "train-c"}));
  EXPECT_EQ(r.bottleneck_jobs, 10);
  std::string text = Describe(r);
  EXPECT_THAT(text, HasSubstr("3 whole pipelines fit at once, limited by cpu at their widest level "
                              "(train-a, train-b, train-c: 4500m CPU, 6Gi requested together)"))
      << text;
  EXPECT_EQ(ToJson(r)["pipelines_per_node"]["pipelines"], 3);

  // Memory-bound trainers: 3 x 8Gi = 24Gi of 56Gi, 2 runs.
  ProfileReport m = BuildProfile(SixSteps(0.5, 8), options);
  AddPipelineFit(*sim::testing::SixSteps(), m);
  ASSERT_TRUE(m.pipeline_fit.has_value());
  EXPECT_EQ(m.pipeline_fit->pipelines, 2);
  EXPECT_EQ(m.pipeline_fit->limited_by, "memory");
}

// Known truth from KFP's own compiler: examples/capacity/eight_gpu_shards.yaml
// (eight_gpu_shards.py, set_accelerator_type("nvidia.com/gpu") and
// set_accelerator_limit(1) on each of eight trainers). The profile reports
// the GPU each step asks for, says it was asked for and not sampled, and the
// sized pipeline keeps it; a step that asks for none reports none.
TEST(PipelineFit, ReportsTheAcceleratorsTheCompiledPipelineRequests) {
  std::ifstream in(std::filesystem::path(KFPBENCH_SOURCE_DIR) /
                   "examples/capacity/eight_gpu_shards.yaml");
  std::stringstream text;
  text << in.rdbuf();
  auto spec = ir::ParsePipelineSpec(text.str());
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  std::vector<StepExecution> executions;
  for (const auto& [task, label] : spec->TaskExecutorLabels()) {
    executions.push_back(Step(task, 1, 1));
    executions.back().executor_label = label;
  }
  ASSERT_EQ(executions.size(), 8u);
  ProfileReport r = BuildProfile(executions, {});
  AddRequestedAccelerators(*spec, r);
  for (const auto& step : r.steps) {
    EXPECT_EQ(step.accelerator, "nvidia.com/gpu") << step.step;
    EXPECT_EQ(step.accelerator_count, 1) << step.step;
  }
  EXPECT_THAT(Describe(r), HasSubstr("Step train-8 asks for 1 nvidia.com/gpu (the pipeline's "
                                     "accelerator: requested, not sampled"));
  nlohmann::json json = ToJson(r);
  EXPECT_EQ(json["steps"][0]["accelerator"],
            (nlohmann::json{{"type", "nvidia.com/gpu"}, {"count", 1}}));
  auto sized = ir::ParsePipelineSpecJson(ApplyRecommendations(spec->json, r));
  ASSERT_TRUE(sized.ok()) << sized.error().message;
  const auto& res = sized->FindExecutor("exec-train-3")->container.resources;
  EXPECT_EQ(res.accelerator_type, "nvidia.com/gpu");
  EXPECT_EQ(res.accelerator_count, 1);

  ProfileReport plain = BuildProfile(SixSteps(1.5, 2), {});
  AddRequestedAccelerators(*sim::testing::SixSteps(), plain);
  for (const auto& step : plain.steps) EXPECT_TRUE(step.accelerator.empty()) << step.step;
  EXPECT_THAT(Describe(plain), Not(HasSubstr("asks for")));
  EXPECT_FALSE(ToJson(plain)["steps"][0].contains("accelerator"));
}

TEST(PipelineFit, NeedsANodeSize) {
  ProfileReport r = BuildProfile(SixSteps(1.5, 2), {});
  AddPipelineFit(*sim::testing::SixSteps(), r);
  EXPECT_FALSE(r.pipeline_fit.has_value());
  EXPECT_FALSE(ToJson(r).contains("pipelines_per_node"));
}

}  // namespace
}  // namespace kfpbench::plan
