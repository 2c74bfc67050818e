// Runtime node changes (the simulator's autoscaler) and light snapshots.
#include <set>

#include <gtest/gtest.h>

#include "engine/engine.h"
#include "engine/engine_test_util.h"
#include "util/units.h"

namespace kfpbench::engine {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using namespace testing;  // the part's test helpers

// Two independent tasks of 1 CPU, 1Gi each.
constexpr const char* kTwoTasks = R"(
pipelineInfo: {name: two}
components:
  comp-t: {executorLabel: exec-t}
deploymentSpec:
  executors:
    exec-t:
      container:
        image: alpine
        command: [t]
        resources: {resourceCpuRequest: '1', resourceMemoryRequest: 1Gi}
root:
  dag:
    tasks:
      a: {componentRef: {name: comp-t}, taskInfo: {name: a}}
      b: {componentRef: {name: comp-t}, taskInfo: {name: b}}
)";

TEST(PlacementNodes, AddRemoveAndReuseSlots) {
  Placement p({{"a", 1, kGi}});
  EXPECT_FALSE(p.FitsSomeNode({2000, kGi}));
  p.AllowShape({"shape", 2, 2 * kGi});
  EXPECT_TRUE(p.FitsSomeNode({2000, kGi}));
  EXPECT_EQ(p.LargestNode().cpu_millis, 2000);

  p.Enqueue(1, {2000, kGi});
  EXPECT_TRUE(p.Schedule().empty());
  size_t b = p.AddNode({"b", 2, 2 * kGi});
  EXPECT_EQ(b, 1u);
  auto placed = p.Schedule();
  ASSERT_EQ(placed.size(), 1u);
  EXPECT_EQ(placed[0].node, 1u);
  EXPECT_EQ(p.used(1).cpu_millis, 2000);
  EXPECT_FALSE(p.RemoveNode(1));  // busy
  p.Release(1, {2000, kGi});
  EXPECT_TRUE(p.RemoveNode(1));
  EXPECT_TRUE(p.removed(1));
  EXPECT_FALSE(p.RemoveNode(1));  // already gone
  EXPECT_FALSE(p.RemoveNode(7));  // never existed
  // A removed node takes nothing; its slot comes back with the next node.
  p.Enqueue(2, {500, kGi / 2});
  placed = p.Schedule();
  ASSERT_EQ(placed.size(), 1u);
  EXPECT_EQ(placed[0].node, 0u);
  EXPECT_EQ(p.AddNode({"c", 4, 4 * kGi}), 1u);
  EXPECT_EQ(p.node(1).name, "c");
  EXPECT_EQ(p.node_count(), 2u);
}

TEST(PlacementNodes, AddedNodesTakeTheLowestRemovedIndexFirst) {
  Placement p({});
  for (int i = 0; i < 6; ++i) EXPECT_EQ(p.AddNode({"n", 1, kGi}), static_cast<size_t>(i));
  EXPECT_TRUE(p.RemoveNode(4));
  EXPECT_TRUE(p.RemoveNode(1));
  EXPECT_TRUE(p.RemoveNode(3));
  EXPECT_EQ(p.AddNode({"x", 1, kGi}), 1u);
  EXPECT_TRUE(p.RemoveNode(0));  // below the one just reused
  EXPECT_EQ(p.AddNode({"x", 1, kGi}), 0u);
  EXPECT_EQ(p.AddNode({"x", 1, kGi}), 3u);
  EXPECT_EQ(p.AddNode({"x", 1, kGi}), 4u);
  EXPECT_EQ(p.AddNode({"x", 1, kGi}), 6u);  // none removed: a new index
  EXPECT_EQ(p.node_count(), 7u);
}

TEST(PlacementNodes, SkipsTicketsThatCannotFitAfterALargerOneFailed) {
  Placement p({{"a", 2, 4 * kGi}});
  p.Enqueue(1, {3000, kGi});  // never fits now
  p.Enqueue(2, {3000, 2 * kGi});
  p.Enqueue(3, {1000, kGi});  // smaller: still placed (FIFO scan, not head-of-line)
  auto placed = p.Schedule();
  ASSERT_EQ(placed.size(), 1u);
  EXPECT_EQ(placed[0].ticket, 3u);
  EXPECT_EQ(p.queued(), 2u);
}

class EngineNodesTest : public ::testing::Test {
 protected:
  Engine& Make(EngineOptions options) {
    options.random_seed = 7;
    engine_ = std::make_unique<Engine>(loop_, executor_, observer_, std::move(options));
    return *engine_;
  }
  void Submit(const std::string& id) {
    RunRequest req;
    req.run_id = id;
    req.spec = MustParse(kTwoTasks);
    ASSERT_TRUE(engine_->Submit(std::move(req)).ok());
  }

  VirtualLoop loop_;
  FakeExecutor executor_{loop_};
  RecordingObserver observer_;
  std::unique_ptr<Engine> engine_;
};

TEST_F(EngineNodesTest, ShapesLetTasksWaitForNodesAddedLater) {
  EngineOptions options;
  options.node_shapes = {{"pool", 1, 2 * kGi}};
  Engine& engine = Make(options);
  EXPECT_EQ(engine.placement().node_count(), 0u);  // not this machine
  executor_.behave = [](const TaskLaunch&) { return Takes(10s); };
  Submit("run-1");
  loop_.RunUntil(VirtualLoop::Epoch() + 5s);
  EXPECT_EQ(engine.placement().queued(), 2u);
  EXPECT_TRUE(executor_.launched.empty());
  EXPECT_EQ(engine.AddNode({"n1", 1, 2 * kGi}), 0u);  // places one task now
  EXPECT_EQ(executor_.launched.size(), 1u);
  EXPECT_EQ(engine.placement().queued(), 1u);
  EXPECT_FALSE(engine.RemoveNode(0));  // busy
  loop_.Run();
  const RunSnapshot& snap = observer_.Of("run-1");
  EXPECT_EQ(snap.state, RuntimeState::kSucceeded);
  EXPECT_EQ(snap.finished_at, VirtualLoop::Epoch() + 25s);
  EXPECT_TRUE(engine.RemoveNode(0));
}

TEST_F(EngineNodesTest, TaskLargerThanEveryShapeStillFails) {
  EngineOptions options;
  options.node_shapes = {{"pool", 0.5, 2 * kGi}};
  Make(options);
  Submit("run-1");
  loop_.Run();
  EXPECT_EQ(observer_.Of("run-1").state, RuntimeState::kFailed);
}

TEST_F(EngineNodesTest, LightSnapshotsCarryTaskStatesOnlyAtTheEnd) {
  EngineOptions options;
  options.nodes = {{"n", 4, 8 * kGi}};
  options.light_snapshots = true;
  Make(options);
  struct Counting : RunObserver {
    int with_tasks = 0, without = 0;
    RunSnapshot last;
    std::vector<std::string> names, labels;  // valid only during the call: copied
    void OnRunChanged(const RunSnapshot& s) override {
      EXPECT_TRUE(s.tasks.empty());
      (s.task_states.empty() ? without : with_tasks)++;
      last = s;
      for (const auto& t : s.task_states) {
        names.push_back(*t.name);
        labels.push_back(*t.executor_label);
        EXPECT_EQ(t.state, RuntimeState::kSucceeded);
        EXPECT_LE(t.start_time, t.end_time);
      }
    }
  } counting;
  engine_ = std::make_unique<Engine>(loop_, executor_, counting, options);
  Submit("run-1");
  loop_.Run();
  EXPECT_EQ(counting.with_tasks, 1);
  EXPECT_GE(counting.without, 1);
  EXPECT_EQ(counting.last.state, RuntimeState::kSucceeded);
  EXPECT_FALSE(counting.last.history.empty());
  // The root, then a and b, each with its DAG's record as parent.
  ASSERT_EQ(counting.names.size(), 3u);
  EXPECT_EQ(counting.labels[0], "");
  EXPECT_NE(counting.labels[1], "");
}

TEST_F(EngineNodesTest, WithoutDetailsRecordsCarryCounterIdsNamesTimesAndLinks) {
  EngineOptions options;
  options.nodes = {{"n", 4, 8 * kGi}};
  options.task_details = false;
  Make(options);
  executor_.behave = [](const TaskLaunch&) { return Takes(10s); };
  Submit("run-1");
  Submit("run-2");
  loop_.Run();
  const RunSnapshot& one = observer_.Of("run-1");
  const RunSnapshot& two = observer_.Of("run-2");
  ASSERT_EQ(one.tasks.size(), 3u);  // the root, a, b
  ASSERT_EQ(two.tasks.size(), 3u);
  std::set<std::string> ids;
  for (const auto* run : {&one, &two}) {
    const TaskRecord& root = run->tasks[0];
    EXPECT_EQ(root.name, "two");
    EXPECT_EQ(root.executor_label, "");
    EXPECT_EQ(root.parent_task_id, "");
    ASSERT_EQ(root.child_task_ids.size(), 2u);
    for (size_t i = 1; i < 3; ++i) {
      const TaskRecord& t = run->tasks[i];
      EXPECT_EQ(t.parent_task_id, root.task_id);
      EXPECT_EQ(root.child_task_ids[i - 1], t.task_id);
      EXPECT_EQ(t.executor_label, "exec-t");
      EXPECT_EQ(t.state, RuntimeState::kSucceeded);
      EXPECT_EQ(t.end_time - t.start_time, 10s);
      EXPECT_TRUE(t.history.empty());  // a detail
    }
    for (const auto& t : run->tasks) {
      EXPECT_EQ(t.task_id.front(), 't') << t.task_id;
      ids.insert(t.task_id);
    }
  }
  EXPECT_EQ(ids.size(), 6u);  // unique across runs
  EXPECT_EQ(one.tasks[1].name, "a");
  EXPECT_EQ(one.tasks[2].name, "b");
}

// A training step pinned by kfp-kubernetes to a tainted GPU pool, beside an
// ordinary step, as the platform spec document says it.
constexpr const char* kPinnedPipeline = R"(
pipelineInfo: {name: pinned}
components:
  comp-train: {executorLabel: exec-train}
  comp-prep: {executorLabel: exec-prep}
deploymentSpec:
  executors:
    exec-train:
      container: {image: trainer, command: [train]}
    exec-prep:
      container: {image: prep, command: [prep]}
root:
  dag:
    tasks:
      prep: {componentRef: {name: comp-prep}, taskInfo: {name: prep}}
      train: {componentRef: {name: comp-train}, dependentTasks: [prep], taskInfo: {name: train}}
---
platforms:
  kubernetes:
    deploymentSpec:
      executors:
        exec-train:
          nodeSelector:
            labels: {pool: gpu}
          tolerations:
          - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
          nodeAffinity:
          - matchExpressions:
            - {key: zone, operator: In, values: [z1]}
          - weight: 10
            matchExpressions:
            - {key: zone, operator: In, values: [z2]}
          secretAsEnv:
          - {secretName: token}
)";

// One run of `spec` on `nodes`, to its end.
RunSnapshot RunOn(std::shared_ptr<const ir::PipelineSpec> spec, std::vector<NodeSpec> nodes) {
  VirtualLoop loop;
  FakeExecutor executor(loop);
  RecordingObserver observer;
  EngineOptions options;
  options.nodes = std::move(nodes);
  Engine engine(loop, executor, observer, options);
  RunRequest req;
  req.run_id = "run";
  req.spec = std::move(spec);
  EXPECT_TRUE(engine.Submit(std::move(req)).ok());
  loop.Run();
  return observer.Of("run");
}

TEST(EngineScheduling, PlatformSpecRulesAreParsedAndHonouredByPlacement) {
  auto spec = MustParse(kPinnedPipeline);
  ASSERT_NE(spec, nullptr);
  const ir::NodeScheduling& rules = spec->FindExecutor("exec-train")->scheduling;
  EXPECT_EQ(rules.node_selector.at("pool"), "gpu");
  ASSERT_EQ(rules.tolerations.size(), 1u);
  EXPECT_EQ(rules.tolerations[0].op, "Exists");
  ASSERT_EQ(rules.required_terms.size(), 1u);  // the weighted term only steers
  EXPECT_TRUE(spec->FindExecutor("exec-prep")->scheduling.empty());
  ASSERT_EQ(spec->warnings.size(), 1u);
  EXPECT_EQ(spec->warnings[0], "platform spec: secretAsEnv not applied by the embedded backend");

  NodeSpec gpu("gpu-0", 8, 32 * kGi);
  gpu.labels = {{"pool", "gpu"}, {"zone", "z1"}};
  gpu.taints = {{"nvidia.com/gpu", "present", "NoSchedule"}};
  NodeSpec cpu("cpu-0", 8, 32 * kGi);
  cpu.labels = {{"pool", "cpu"}, {"zone", "z1"}};
  RunSnapshot snap = RunOn(spec, {gpu, cpu});
  ASSERT_EQ(snap.state, RuntimeState::kSucceeded) << snap.error;
  EXPECT_EQ(FindTask(snap, "prep")->node, "cpu-0");  // untolerated taint on gpu-0
  EXPECT_EQ(FindTask(snap, "train")->node, "gpu-0");
}

TEST(EngineScheduling, AStepNoNodeMayTakeFailsWithTheSchedulersReason) {
  auto spec = MustParse(kPinnedPipeline);
  ASSERT_NE(spec, nullptr);
  RunSnapshot snap = RunOn(spec, {NodeSpec("cpu-0", 8, 32 * kGi)});
  EXPECT_EQ(snap.state, RuntimeState::kFailed);
  EXPECT_NE(snap.error.find("task cannot be scheduled: 0/1 nodes are available: 1 node(s) didn't "
                            "match Pod's node affinity/selector"),
            std::string::npos)
      << snap.error;
}

TEST(EngineScheduling, PlatformSpecErrorsNameTheField) {
  std::string yaml = kPinnedPipeline;
  yaml.replace(yaml.find("operator: In"), std::string("operator: In").size(), "operator: Near");
  auto spec = ir::ParsePipelineSpec(yaml);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(
      spec.error().message,
      "platforms.kubernetes.deploymentSpec.executors.exec-train.nodeAffinity[0]."
      "matchExpressions[0].operator: 'Near' is not In, NotIn, Exists, DoesNotExist, Gt or Lt");
  yaml = kPinnedPipeline;
  yaml.replace(yaml.find("        exec-train:\n          nodeSelector"),
               std::string("        exec-train").size(), "        exec-trian");
  spec = ir::ParsePipelineSpec(yaml);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.error().message,
            "platforms.kubernetes.deploymentSpec.executors.exec-trian: no such executor in "
            "deploymentSpec");
}

}  // namespace
}  // namespace kfpbench::engine
