#include "sim/workload_plan.h"

#include <algorithm>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/test_support.h"

namespace kfpbench::sim {
namespace {

using namespace std::chrono_literals;
using namespace testing;  // the part's test helpers
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const PlannedTask* Find(const PlannedRun& run, const std::string& name) {
  for (const auto& t : run.tasks) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

// A loop over three items, each iteration one step (`num`), then `sum`.
constexpr const char* kLoop = R"(
components:
  comp-num: {executorLabel: exec-num}
  comp-sum: {executorLabel: exec-sum}
  comp-for-loop-1:
    inputDefinitions:
      parameters:
        pipelinechannel--item: {parameterType: NUMBER_INTEGER}
    dag:
      tasks:
        num:
          componentRef: {name: comp-num}
          taskInfo: {name: num}
deploymentSpec:
  executors:
    exec-num:
      container:
        image: example/step:1
        command: [kfpbench, step]
        resources: {resourceCpuRequest: '2', resourceMemoryRequest: 1Gi}
    exec-sum:
      container: {image: example/step:1, command: [kfpbench, step]}
pipelineInfo: {name: loop}
root:
  dag:
    tasks:
      for-loop-1:
        componentRef: {name: comp-for-loop-1}
        parameterIterator:
          itemInput: pipelinechannel--item
          items: {raw: '[1, 2, 3]'}
        taskInfo: {name: for-loop-1}
      sum:
        componentRef: {name: comp-sum}
        dependentTasks: [for-loop-1]
        taskInfo: {name: sum}
schemaVersion: 2.1.0
sdkVersion: kfp-2.7.0
)";

// The six-step pipeline, three runs 60 s apart: each run's six steps with
// their dependencies, requests and the durations the simulation drew.
TEST(WorkloadPlan, HoldsEveryRunAsTheSimulationRanIt) {
  WorkloadSpec w = SixStepWorkload(3, 10s, 30s);
  w.arrival_kind = WorkloadSpec::ArrivalKind::kRate;
  w.rate_per_second = 1.0 / 60;
  w.steps.by_label["exec-train"].duration =
      exec::DurationDist{exec::DurationDist::Kind::kLognormal, 30s, Duration{0}, 0.5};
  w.steps.fallback.overhead = 2s;
  SimResult result;
  auto plan = PlanWorkload(FixedCluster(2, 4), w, &result);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(result.runs, 3);
  ASSERT_EQ(plan->runs.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const PlannedRun& run = plan->runs[i];
    EXPECT_EQ(run.name, "run-" + std::to_string(i));
    EXPECT_DOUBLE_EQ(run.arrival_seconds, 60.0 * static_cast<double>(i));
    ASSERT_EQ(run.tasks.size(), 6u);
    for (const auto& t : run.tasks) {
      EXPECT_TRUE(t.container);
      EXPECT_EQ(t.parent, -1);
      EXPECT_EQ(t.cpu_millis, 1000);
      EXPECT_EQ(t.memory_bytes, int64_t{2} << 30);
    }
    const PlannedTask* evaluate = Find(run, "evaluate");
    ASSERT_NE(evaluate, nullptr);
    EXPECT_THAT(evaluate->dependencies, ElementsAre("train-a", "train-b", "train-c"));
    EXPECT_DOUBLE_EQ(evaluate->seconds, 12.0);  // overhead + constant
    EXPECT_EQ(evaluate->label, "exec-step");
    EXPECT_THAT(Find(run, "prepare")->dependencies, IsEmpty());
  }
  // The trainers' times are draws, different per run and task, with the overhead.
  std::vector<double> trains;
  for (const auto& run : plan->runs) {
    for (const auto& t : run.tasks) {
      if (t.label == "exec-train") trains.push_back(t.seconds);
    }
  }
  ASSERT_EQ(trains.size(), 9u);
  std::sort(trains.begin(), trains.end());
  EXPECT_GT(trains.back() - trains.front(), 1.0);
  EXPECT_GT(trains.front(), 2.0);
}

TEST(WorkloadPlan, UnfoldsLoopsIntoIterationDags) {
  auto spec = ir::ParsePipelineSpec(kLoop);
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  WorkloadSpec w;
  w.pipeline = std::make_shared<const ir::PipelineSpec>(std::move(*spec));
  w.steps.fallback.duration = exec::DurationDist::Constant(5s);
  ClusterSpec cluster = FixedCluster(1, 8);
  cluster.default_task_cpu = 0.5;
  auto plan = PlanWorkload(cluster, w);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_EQ(plan->runs.size(), 1u);
  const PlannedRun& run = plan->runs[0];
  const PlannedTask* loop = Find(run, "for-loop-1");
  ASSERT_NE(loop, nullptr);
  EXPECT_FALSE(loop->container);
  EXPECT_EQ(loop->parent, -1);
  int iterations = 0, nums = 0;
  std::map<int, const PlannedTask*> by_id;
  for (const auto& t : run.tasks) by_id[t.id] = &t;
  for (const auto& t : run.tasks) {
    if (t.name.starts_with("for-loop-1-iteration-")) {
      ++iterations;
      EXPECT_FALSE(t.container);
      EXPECT_EQ(t.parent, loop->id);
    }
    if (t.name == "num") {
      ++nums;
      ASSERT_TRUE(by_id.contains(t.parent));
      EXPECT_EQ(by_id[t.parent]->parent, loop->id);  // inside an iteration
      EXPECT_EQ(t.cpu_millis, 2000);
      EXPECT_DOUBLE_EQ(t.seconds, 5.0);
    }
  }
  EXPECT_EQ(iterations, 3);
  EXPECT_EQ(nums, 3);
  const PlannedTask* sum = Find(run, "sum");
  ASSERT_NE(sum, nullptr);
  EXPECT_THAT(sum->dependencies, ElementsAre("for-loop-1"));
  EXPECT_EQ(sum->cpu_millis, 500);  // the cluster's default task
  EXPECT_EQ(sum->memory_bytes, int64_t{64} << 20);
}

TEST(WorkloadPlan, RoundTripsThroughJson) {
  auto plan = PlanWorkload(FixedCluster(2, 4), SixStepWorkload(2, 10s, 30s));
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  auto back = ParseWorkloadPlan(ToJson(*plan).dump());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(ToJson(*back), ToJson(*plan));
}

TEST(WorkloadPlan, RefusesAClosedLoop) {
  WorkloadSpec w = SixStepWorkload(4, 10s, 30s);
  w.arrival_kind = WorkloadSpec::ArrivalKind::kClosed;
  w.concurrency = 2;
  auto plan = PlanWorkload(FixedCluster(2, 4), w);
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.error().message, HasSubstr("closed loop"));
}

TEST(WorkloadPlan, RefusesMalformedPlans) {
  const std::string ok_task =
      R"({"id": 1, "parent": -1, "name": "a", "kind": "container", "seconds": 1, "cpu_millis": 100, "memory_bytes": 10})";
  auto plan = [](const std::string& runs) {
    return R"({"format": "kfpbench-workload-plan/1", "runs": )" + runs + "}";
  };
  ASSERT_TRUE(ParseWorkloadPlan(plan(R"([{"name": "r", "tasks": [)" + ok_task + "]}]")).ok());
  const std::pair<std::string, std::string> cases[] = {
      {"not json", "workload plan"},
      {R"({"format": "other", "runs": []})", "format"},
      {plan("[]"), "no runs"},
      {plan(R"([{"name": "r", "arrival_seconds": -1}])"), "arrival_seconds"},
      {plan(R"([{"name": "r", "tasks": [{"id": 1, "parent": 7, "name": "a", "kind": "dag"}]}])"),
       "parent"},
      {plan(R"([{"name": "r", "tasks": [)" + ok_task + "," + ok_task + "]}]"), "unique"},
      {plan(R"([{"name": "r", "tasks": [{"id": 1, "name": "a", "kind": "container"}]}])"),
       "positive cpu_millis"},
      {plan(R"([{"name": "r", "tasks": [{"id": 1, "name": "a", "kind": "pod"}]}])"), "kind"},
      {plan(R"([{"name": "r", "tasks": [{"id": "1", "name": "a", "kind": "dag"}]}])"), "id"},
  };
  for (const auto& [text, why] : cases) {
    auto p = ParseWorkloadPlan(text);
    ASSERT_FALSE(p.ok()) << text;
    EXPECT_THAT(p.error().message, HasSubstr(why)) << text;
  }
}

}  // namespace
}  // namespace kfpbench::sim
