// Attempts: queued until a node has room (first fit, scheduling delay,
// default resources), their results read, retries with backoff, launch counts
// per executor, and a terminate during a retry's backoff.
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <set>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/dag_test_fixture.h"
#include "engine/engine.h"
#include "engine/engine_test_fixture.h"
#include "engine/engine_test_util.h"
#include "util/test_support.h"

namespace kfpbench::engine {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;
using nlohmann::json;
using namespace testing;  // the part's test helpers

const std::string kRetry = kfpbench::testing::TestData("engine/testdata/retry.yaml");

TEST_F(DagTest, RetriesWithBackoffThenSucceeds) {
  int calls = 0;
  executor_.behave = [&calls](const TaskLaunch&) {
    Behavior b;
    b.fail = ++calls <= 2;
    return b;
  };
  const RunSnapshot& snap = RunToEnd(Spec(kRetry));
  EXPECT_EQ(snap.state, RuntimeState::kSucceeded) << snap.error;
  ASSERT_EQ(executor_.launched.size(), 3u);
  // Attempt 1 ends at 1s, retry after 2s; attempt 2 ends at 4s, retry after 4s.
  EXPECT_EQ(executor_.events[2].time, VirtualLoop::Epoch() + 3s);
  EXPECT_EQ(executor_.events[4].time, VirtualLoop::Epoch() + 8s);
  EXPECT_EQ(snap.finished_at, VirtualLoop::Epoch() + 9s);
  const TaskRecord* flaky = FindTask(snap, "flaky");
  EXPECT_EQ(flaky->state, RuntimeState::kSucceeded);
  EXPECT_EQ(flaky->pod_name, executor_.launched[2].pod_name);
  EXPECT_NE(executor_.launched[0].pod_name, executor_.launched[2].pod_name);
  EXPECT_THAT(flaky->history[2].error, HasSubstr("attempt 1 failed: boom"));
  // Each attempt is a launch of its executor (what the simulator keys a step's draw by).
  for (uint32_t k = 0; k < 3; ++k) EXPECT_EQ(executor_.launched[k].label_launches_before, k);
}

TEST_F(DagTest, LaunchesAreCountedPerExecutorWithinTheRun) {
  const RunSnapshot& snap =
      RunToEnd(Spec(kfpbench::testing::TestData("engine/testdata/launches_per_executor.yaml")));
  EXPECT_EQ(snap.state, RuntimeState::kSucceeded) << snap.error;
  ASSERT_EQ(executor_.launched.size(), 3u);
  EXPECT_EQ(executor_.launched[0].executor_label, "exec-echo");
  EXPECT_EQ(executor_.launched[0].label_launches_before, 0u);
  EXPECT_EQ(executor_.launched[1].executor_label, "exec-flip");
  EXPECT_EQ(executor_.launched[1].label_launches_before, 0u);
  EXPECT_EQ(executor_.launched[2].executor_label, "exec-echo");
  EXPECT_EQ(executor_.launched[2].label_launches_before, 1u);
}

TEST_F(DagTest, RetriesRunOut) {
  executor_.behave = Always(Fails());
  const RunSnapshot& snap = RunToEnd(Spec(kRetry));
  EXPECT_EQ(snap.state, RuntimeState::kFailed);
  EXPECT_EQ(executor_.launched.size(), 3u);
  EXPECT_EQ(FindTask(snap, "flaky")->error, "boom");
}

TEST_F(DagTest, TerminateDuringRetryBackoff) {
  executor_.behave = Always(Fails());
  ASSERT_TRUE(engine_->Submit(Request("run", Spec(kRetry))).ok());
  loop_.RunUntil(VirtualLoop::Epoch() + 2s);  // in the first backoff
  engine_->Terminate("run");
  loop_.Run();
  const RunSnapshot& snap = observer_.Of("run");
  EXPECT_EQ(snap.state, RuntimeState::kCanceled);
  EXPECT_EQ(executor_.launched.size(), 1u);
  EXPECT_EQ(FindTask(snap, "flaky")->state, RuntimeState::kCanceled);
}

TEST_F(EngineTest, WaitsForCapacityAndRecordsSchedulingDelay) {
  MakeEngineOn({{"small", 1, int64_t{4} << 30}});
  executor_.behave = Always(Takes(10s));
  const RunSnapshot& snap = RunToEnd(kThreeCpuTasks, json::object());
  EXPECT_EQ(snap.state, RuntimeState::kSucceeded);
  EXPECT_EQ(executor_.max_running, 1);
  std::vector<Duration> delays;
  for (const char* name : {"t1", "t2", "t3"})
    delays.push_back(FindTask(snap, name)->scheduling_delay);
  std::sort(delays.begin(), delays.end());
  EXPECT_EQ(delays, (std::vector<Duration>{0s, 10s, 20s}));
  EXPECT_EQ(snap.finished_at, VirtualLoop::Epoch() + 30s);
  EXPECT_DOUBLE_EQ(executor_.launched[0].resources.cpu_request, 1.0);
  EXPECT_EQ(executor_.launched[0].resources.memory_request, int64_t{1} << 30);
}

TEST_F(EngineTest, PlacesAcrossNodesFirstFit) {
  MakeEngineOn({{"n1", 1, int64_t{4} << 30}, {"n2", 2, int64_t{4} << 30}});
  const RunSnapshot& snap = RunToEnd(kThreeCpuTasks, json::object());
  EXPECT_EQ(executor_.max_running, 3);
  std::map<std::string, int> per_node;
  for (const auto& t : snap.tasks) {
    if (!t.node.empty()) ++per_node[t.node];
  }
  EXPECT_EQ(per_node, (std::map<std::string, int>{{"n1", 1}, {"n2", 2}}));
}

TEST_F(EngineTest, FailsTaskThatCanNeverFit) {
  MakeEngineOn({{"tiny", 0.5, int64_t{4} << 30}});
  const RunSnapshot& snap = RunToEnd(kThreeCpuTasks, json::object());
  EXPECT_EQ(snap.state, RuntimeState::kFailed);
  EXPECT_TRUE(executor_.launched.empty());
  const TaskRecord* t1 = FindTask(snap, "t1");
  ASSERT_NE(t1, nullptr);
  EXPECT_EQ(t1->state, RuntimeState::kFailed);
  EXPECT_EQ(t1->error,
            "task requests 1 CPU, 1Gi memory, more than any node offers (largest: 0.5 CPU, "
            "4Gi memory)");
  EXPECT_EQ(snap.error, "task 't1' failed: " + t1->error);
}

TEST_F(EngineTest, UsesDefaultResourcesWhenIrHasNone) {
  EngineOptions options;
  options.nodes = {{"n", 0.25, int64_t{1} << 30}};
  options.default_task_resources = {0.1, 0, 64 << 20, 0, {}};
  MakeEngine(options);
  ASSERT_TRUE(Submit(kPipeline, {{"text", "x"}}).ok());
  loop_.Run();
  EXPECT_EQ(executor_.max_running, 2);  // 0.25 CPU holds two 0.1 CPU tasks
  EXPECT_DOUBLE_EQ(executor_.launched[0].resources.cpu_request, 0.1);
}

TEST_F(EngineTest, MissingOrMalformedOutputFailsTheTask) {
  executor_.behave = ByLabel({{"exec-producer", Outputs({{"count", "many"}})}});
  const RunSnapshot& snap = RunToEnd(kPipeline, {{"text", "x"}});
  EXPECT_EQ(snap.state, RuntimeState::kFailed);
  EXPECT_EQ(FindTask(snap, "producer")->error,
            "output parameter 'count': expected NUMBER_INTEGER, got text 'many'");
}

TEST_F(EngineTest, ManyRunsShareTheNodes) {
  MakeEngineOn({{"n", 2, int64_t{8} << 30}});
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(Submit(kThreeCpuTasks, json::object(), "run-" + std::to_string(i)).ok());
  }
  loop_.Run();
  EXPECT_EQ(executor_.max_running, 2);
  EXPECT_EQ(executor_.launched.size(), 30u);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(observer_.Of("run-" + std::to_string(i)).state, RuntimeState::kSucceeded);
  }
  // FIFO: the first run's tasks all go before the last run's.
  EXPECT_EQ(executor_.launched.front().run_id, "run-0");
  EXPECT_EQ(executor_.launched.back().run_id, "run-9");
}

}  // namespace
}  // namespace kfpbench::engine
