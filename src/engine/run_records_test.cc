// Records and snapshots of runs: a large run is snapshotted at intervals and
// ends complete; light snapshots carry task states only at the end; records
// without details carry counter ids, names, times and links.
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "engine/dag_test_fixture.h"
#include "engine/engine.h"
#include "engine/engine_test_fixture.h"
#include "engine/engine_test_util.h"
#include "util/units.h"

namespace kfpbench::engine {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using namespace testing;  // the part's test helpers

TEST(DagSnapshots, LargeRunsAreSnapshottedAtIntervalsAndEndComplete) {
  std::string spec = Spec(kLoopOverListInput);
  json items = json::array();
  for (int i = 0; i < 400; ++i) items.push_back(std::to_string(i));
  auto run_with = [&](size_t large_run_records) {
    VirtualLoop loop;
    FakeExecutor executor(loop);
    RecordingObserver observer;
    EngineOptions options;
    options.nodes = {{"node", 4, int64_t{64} << 30}};
    options.random_seed = 7;
    options.large_run_records = large_run_records;
    Engine engine(loop, executor, observer, options);
    EXPECT_TRUE(engine.Submit(Request("wide", spec, {{"list", items}})).ok());
    loop.Run();
    const RunSnapshot& last = observer.Of("wide");
    EXPECT_EQ(last.state, RuntimeState::kSucceeded);
    size_t succeeded = 0;
    for (const auto& t : last.tasks) succeeded += t.state == RuntimeState::kSucceeded;
    EXPECT_GE(succeeded, 800u);  // 400 iterations and their 400 steps, at least
    EXPECT_EQ(States(last.history),
              (std::vector<RuntimeState>{RuntimeState::kPending, RuntimeState::kRunning,
                                         RuntimeState::kSucceeded}));
    return observer.count;
  };
  int every_change = run_with(std::numeric_limits<size_t>::max());
  int throttled = run_with(256);
  EXPECT_GE(every_change, 400);  // at least one per iteration
  EXPECT_LT(throttled * 4, every_change) << throttled << " of " << every_change;
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
  executor_.behave = Always(Takes(10s));
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

}  // namespace
}  // namespace kfpbench::engine
