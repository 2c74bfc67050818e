#include "plan/profile.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/pipeline_spec.h"
#include "plan/profile_run.h"
#include "util/units.h"

namespace kfpbench::plan {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(ProfileTest, CpuRoundsUpTo100mAndMemoryTo64Mi) {
  EXPECT_DOUBLE_EQ(RoundCpuUp(0), 0.1);
  EXPECT_DOUBLE_EQ(RoundCpuUp(0.01), 0.1);
  EXPECT_DOUBLE_EQ(RoundCpuUp(0.1), 0.1);
  EXPECT_DOUBLE_EQ(RoundCpuUp(0.30000000001), 0.3);  // floating noise is not a step
  EXPECT_DOUBLE_EQ(RoundCpuUp(0.31), 0.4);
  EXPECT_DOUBLE_EQ(RoundCpuUp(1.95), 2.0);
  EXPECT_EQ(RoundMemoryUp(0), 64 * kMi);
  EXPECT_EQ(RoundMemoryUp(1), 64 * kMi);
  EXPECT_EQ(RoundMemoryUp(64 * kMi), 64 * kMi);
  EXPECT_EQ(RoundMemoryUp(64 * kMi + 1), 128 * kMi);
  EXPECT_EQ(RoundMemoryUp(1000 * kMi), 1024 * kMi);
  EXPECT_EQ(FormatCpu(0.1), "100m");
  EXPECT_EQ(FormatCpu(1.5), "1500m");
  EXPECT_EQ(FormatCpu(2.0), "2");
  EXPECT_EQ(FormatMemory(192 * kMi), "192Mi");
  EXPECT_EQ(FormatMemory(3 * kGi), "3Gi");
}

TEST(ProfileTest, RequestFromP95AndLimitFromPeakWithHeadroom) {
  // p95 0.5 cores x 1.2 = 0.6 -> 600m; peak 0.9 x 1.2 = 1.08 -> 1100m.
  // p95 300Mi x 1.2 = 360Mi -> 384Mi; peak 500Mi x 1.2 = 600Mi -> 640Mi.
  Recommendation r = Recommend({0.9, 0.5}, {500.0 * kMi, 300.0 * kMi}, 0.2);
  EXPECT_DOUBLE_EQ(r.cpu_request, 0.6);
  EXPECT_DOUBLE_EQ(r.cpu_limit, 1.1);
  EXPECT_EQ(r.memory_request, 384 * kMi);
  EXPECT_EQ(r.memory_limit, 640 * kMi);
  // No headroom: a step idle at p95 still asks for the minimum, and a limit
  // never drops below its request.
  Recommendation idle = Recommend({0.02, 0.0}, {10.0 * kMi, 10.0 * kMi}, 0);
  EXPECT_DOUBLE_EQ(idle.cpu_request, 0.1);
  EXPECT_DOUBLE_EQ(idle.cpu_limit, 0.1);
  EXPECT_EQ(idle.memory_request, 64 * kMi);
  EXPECT_EQ(idle.memory_limit, 64 * kMi);
}

TEST(ProfileTest, NodeSizeParsesAndBadOnesSayWhatIsExpected) {
  auto n = ParseNodeSize("16cpu,56Gi");
  ASSERT_TRUE(n.ok()) << n.error().message;
  EXPECT_DOUBLE_EQ(n->cpu, 16);
  EXPECT_EQ(n->memory, 56 * kGi);
  auto m = ParseNodeSize("15500m, 60G");
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_DOUBLE_EQ(m->cpu, 15.5);
  EXPECT_EQ(m->memory, 60'000'000'000);
  for (const char* bad : {"16cpu", "abc,56Gi", "16cpu,lots", "0,56Gi", "16,0", "-2,1Gi", ","}) {
    auto r = ParseNodeSize(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_THAT(r.error().message, HasSubstr("--node-size"));
    EXPECT_THAT(r.error().message, HasSubstr("16cpu,56Gi"));
  }
}

TEST(ProfileTest, JobsPerNodeCountsByRequestsAndNamesTheScarceResource) {
  NodeSize node{16, 56 * kGi};
  Fit cpu_bound = JobsPerNode({1.5, 2, 1 * kGi, 2 * kGi}, node);
  EXPECT_EQ(cpu_bound.jobs, 10);  // 16 / 1.5
  EXPECT_EQ(cpu_bound.limited_by, "cpu");
  Fit memory_bound = JobsPerNode({0.5, 1, 7 * kGi, 8 * kGi}, node);
  EXPECT_EQ(memory_bound.jobs, 8);  // 56Gi / 7Gi
  EXPECT_EQ(memory_bound.limited_by, "memory");
  EXPECT_EQ(JobsPerNode({0.1, 0.1, 64 * kMi, 64 * kMi}, {1.6, 64 * kGi}).jobs, 16);
}

TEST(ProfileTest, BuildProfileGroupsExecutionsAndFindsTheBottleneck) {
  std::vector<StepExecution> e;
  auto exec = [](std::string step, std::string label, double seconds, std::vector<double> cpu,
                 std::vector<double> mem) {
    StepExecution x;
    x.step = std::move(step);
    x.executor_label = std::move(label);
    x.duration = std::chrono::duration_cast<Duration>(std::chrono::duration<double>(seconds));
    x.cpu_cores = std::move(cpu);
    x.memory_bytes = std::move(mem);
    x.cpu_seconds = seconds;
    return x;
  };
  e.push_back(exec("prep", "exec-step", 1, {0.1, 0.2}, {50.0 * kMi, 60.0 * kMi}));
  e.push_back(exec("train", "exec-train", 4, {1.0, 2.0, 1.0}, {3.0 * kGi, 4.0 * kGi, 3.0 * kGi}));
  e.push_back(exec("prep", "exec-step", 3, {0.1}, {40.0 * kMi}));
  ProfileOptions options;
  options.headroom = 0.25;
  options.node = NodeSize{16, 56 * kGi};
  options.node_text = "16cpu,56Gi";
  ProfileReport r = BuildProfile(e, options);
  ASSERT_EQ(r.steps.size(), 2u);
  const StepProfile& prep = r.steps[0];
  EXPECT_EQ(prep.step, "prep");
  EXPECT_EQ(prep.executions, 2);
  EXPECT_EQ(prep.samples, 3u);
  EXPECT_DOUBLE_EQ(prep.cpu_cores.peak, 0.2);
  EXPECT_EQ(prep.duration_p50, std::chrono::seconds(1));
  EXPECT_EQ(prep.duration_max, std::chrono::seconds(3));
  EXPECT_DOUBLE_EQ(prep.cpu_seconds_mean, 2);
  const StepProfile& train = r.steps[1];
  EXPECT_DOUBLE_EQ(train.cpu_cores.peak, 2.0);
  EXPECT_DOUBLE_EQ(train.cpu_cores.p95, 2.0);  // nearest rank of 3 samples
  // request 2 x 1.25 = 2.5 cores; 4Gi x 1.25 = 5Gi: 6 by cpu, 11 by memory.
  EXPECT_DOUBLE_EQ(train.recommended.cpu_request, 2.5);
  EXPECT_EQ(train.recommended.memory_request, 5 * kGi);
  ASSERT_TRUE(train.fit.has_value());
  EXPECT_EQ(train.fit->jobs, 6);
  EXPECT_EQ(r.bottleneck_step, "train");
  EXPECT_EQ(r.bottleneck_jobs, 6);

  std::string text = Describe(r);
  EXPECT_THAT(text, HasSubstr("Rule: request = p95 x 1.25, limit = peak x 1.25 (25% headroom)"))
      << text;
  EXPECT_THAT(text, HasSubstr("the bottleneck step is train: 6 fit on one node by their requests"))
      << text;
  nlohmann::json j = ToJson(r);
  EXPECT_EQ(j["steps"][1]["recommended"]["cpu_request"], "2500m");
  EXPECT_EQ(j["steps"][1]["recommended"]["memory_request"], "5Gi");
  EXPECT_EQ(j["bottleneck"]["step"], "train");
  EXPECT_EQ(j["steps"][1]["jobs_per_node"]["jobs"], 6);
  EXPECT_THAT(text, Not(HasSubstr("before its first sample")));

  // A step that ended before the first sample is kept, and said to be unknown.
  StepExecution quick;
  quick.step = "quick";
  ProfileReport q = BuildProfile({quick}, {});
  ASSERT_EQ(q.steps.size(), 1u);
  EXPECT_TRUE(q.steps[0].no_data);
  EXPECT_DOUBLE_EQ(q.steps[0].recommended.cpu_request, 0.1);
  EXPECT_THAT(Describe(q), HasSubstr("Step quick ended before its first sample"));
}

TEST(ProfileTest, SizedPipelineCarriesTheRecommendationsAndStillCompiles) {
  auto spec = ir::ParsePipelineSpec(R"(
components:
  comp-a: {executorLabel: exec-a}
deploymentSpec:
  executors:
    exec-a:
      container:
        image: x
        command: [kfpbench, step]
        resources: {cpuRequest: 4, memoryRequest: 8}
pipelineInfo: {name: sized}
root:
  dag:
    tasks:
      a1: {componentRef: {name: comp-a}, taskInfo: {name: a1}}
      a2: {componentRef: {name: comp-a}, taskInfo: {name: a2}}
schemaVersion: 2.1.0
)");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_FALSE(
      WithoutResources(spec->json)["deploymentSpec"]["executors"]["exec-a"]["container"].contains(
          "resources"));
  auto labels = spec->TaskExecutorLabels();
  EXPECT_EQ(labels["a1"], "exec-a");
  ProfileReport r;
  StepProfile a1, a2;
  a1.step = "a1";
  a1.executor_label = "exec-a";
  a1.recommended = {0.5, 1, 128 * kMi, 256 * kMi};
  a2 = a1;
  a2.step = "a2";
  a2.recommended = {0.2, 2, 64 * kMi, 512 * kMi};
  r.steps = {a1, a2};
  auto sized = ir::ParsePipelineSpecJson(ApplyRecommendations(spec->json, r));
  ASSERT_TRUE(sized.ok()) << sized.error().message;
  const auto& res = sized->FindExecutor("exec-a")->container.resources;
  EXPECT_DOUBLE_EQ(res.cpu_request, 0.5);  // the larger of the two steps
  EXPECT_DOUBLE_EQ(res.cpu_limit, 2);
  EXPECT_EQ(res.memory_request, 128 * kMi);
  EXPECT_EQ(res.memory_limit, 512 * kMi);
}

}  // namespace
}  // namespace kfpbench::plan
