// Runtime node changes through the engine (the simulator's autoscaler), and
// kfp-kubernetes' scheduling rules honoured by placement.
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/engine.h"
#include "engine/engine_test_fixture.h"
#include "engine/engine_test_util.h"
#include "util/test_support.h"
#include "util/units.h"

namespace kfpbench::engine {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;
using nlohmann::json;
using namespace testing;  // the part's test helpers

TEST_F(EngineNodesTest, ShapesLetTasksWaitForNodesAddedLater) {
  EngineOptions options;
  options.node_shapes = {{"pool", 1, 2 * kGi}};
  Engine& engine = Make(options);
  EXPECT_EQ(engine.placement().node_count(), 0u);  // not this machine
  executor_.behave = Always(Takes(10s));
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

// A training step pinned by kfp-kubernetes to a tainted GPU pool, beside an
// ordinary step, as the platform spec document says it.
const std::string kPinnedPipeline =
    kfpbench::testing::TestData("engine/testdata/pinned_pipeline.yaml");

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
  EXPECT_THAT(snap.error,
              HasSubstr("task cannot be scheduled: 0/1 nodes are available: 1 node(s) didn't "
                        "match Pod's node affinity/selector"))
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
