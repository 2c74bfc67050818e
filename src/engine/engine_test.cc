// The engine through its public interface, end to end: parameters passed
// downstream, every change reported, a failure that stops new tasks, and the
// real-time loop.
#include "engine/engine.h"

#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <regex>

#include <gtest/gtest.h>

#include "engine/engine_test_fixture.h"
#include "engine/engine_test_util.h"

namespace kfpbench::engine {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using namespace testing;  // the part's test helpers

TEST_F(EngineTest, RunsTasksInDependencyOrderAndPassesParameters) {
  executor_.behave = ByLabel({{"exec-producer", Outputs({{"out", "hello"}, {"count", "3\n"}})}});
  ASSERT_TRUE(Submit(kPipeline, {{"text", "hi"}}).ok());
  loop_.Run();

  const RunSnapshot& snap = observer_.Of("run-1");
  EXPECT_EQ(snap.state, RuntimeState::kSucceeded) << snap.error;
  EXPECT_EQ(States(snap.history),
            (std::vector<RuntimeState>{RuntimeState::kPending, RuntimeState::kRunning,
                                       RuntimeState::kSucceeded}));
  EXPECT_EQ(snap.finished_at, VirtualLoop::Epoch() + 2s);
  ASSERT_EQ(snap.tasks.size(), 4u);
  EXPECT_GE(EventTime("start exec-consumer"), EventTime("end exec-producer"));

  const TaskLaunch* producer = executor_.FirstLaunchOf("exec-producer");
  ASSERT_NE(producer, nullptr);
  EXPECT_EQ(producer->argv[0], "produce");
  EXPECT_EQ(producer->argv[1], "hi");
  EXPECT_EQ(producer->argv[2], "7");  // the default
  EXPECT_EQ(producer->argv[4], producer->output_parameter_files.at("out").string());
  EXPECT_EQ(producer->output_parameter_types.at("count"), "NUMBER_INTEGER");
  json input = FakeExecutor::ExecutorInput(*producer);
  EXPECT_EQ(input["inputs"]["parameterValues"]["n"], 7);
  EXPECT_EQ(input["outputs"]["parameters"]["out"]["outputFile"],
            producer->output_parameter_files.at("out").string());
  EXPECT_EQ(input["outputs"]["outputFile"], (producer->work_dir / "executor_output.json").string());
  EXPECT_EQ(producer->work_dir, std::filesystem::path("run-1") / "producer");
  EXPECT_TRUE(std::regex_match(
      producer->pod_name, std::regex("my-pipeline-[a-z0-9]{5}-system-container-impl-[0-9]{10}")))
      << producer->pod_name;
  // Task ids are version-4 UUIDs (RFC 4122 variant), as KFP's are.
  EXPECT_TRUE(std::regex_match(
      producer->task_id,
      std::regex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")))
      << producer->task_id;

  const TaskLaunch* consumer = executor_.FirstLaunchOf("exec-consumer");
  ASSERT_NE(consumer, nullptr);
  EXPECT_EQ(consumer->argv, (std::vector<std::string>{"consume", "hello", "3", "0.5"}));

  const TaskRecord& root = snap.tasks[0];
  EXPECT_EQ(root.name, "my-pipeline");
  EXPECT_TRUE(root.parent_task_id.empty());
  EXPECT_EQ(root.child_task_ids.size(), 3u);
  EXPECT_EQ(root.state, RuntimeState::kSucceeded);
  const TaskRecord* c = FindTask(snap, "consumer");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->parent_task_id, root.task_id);
  EXPECT_EQ(c->executor_label, "exec-consumer");
  EXPECT_EQ(c->state, RuntimeState::kSucceeded);
  EXPECT_EQ(States(c->history),
            (std::vector<RuntimeState>{RuntimeState::kPending, RuntimeState::kRunning,
                                       RuntimeState::kSucceeded}));
  EXPECT_EQ(c->inputs["parameters"]["count"], json(3));  // parsed as NUMBER_INTEGER
  EXPECT_TRUE(c->inputs["parameters"]["ratio"].is_number_float());
  EXPECT_EQ(c->node, "node-a");
  EXPECT_EQ(c->start_time, VirtualLoop::Epoch() + 1s);
  EXPECT_EQ(c->end_time, VirtualLoop::Epoch() + 2s);
  EXPECT_DOUBLE_EQ(c->cpu_seconds, 0.25);
  const TaskRecord* p = FindTask(snap, "producer");
  EXPECT_EQ(p->outputs["parameters"]["out"], "hello");
  EXPECT_EQ(p->outputs["parameters"]["count"], 3);
  EXPECT_NE(p->pod_name, c->pod_name);
  EXPECT_NE(p->task_id, c->task_id);
}

TEST_F(EngineTest, ReportsEveryChange) {
  ASSERT_TRUE(Submit(kPipeline, {{"text", "hi"}}).ok());
  loop_.Run();
  // Start (pending), first launches, producer+side end, consumer end: at least four.
  EXPECT_GE(observer_.count, 4);
}

TEST_F(EngineTest, FailureStopsNewTasksButLetsRunningOnesFinish) {
  executor_.behave = ByLabel({{"exec-producer", Fails()}, {"exec-side", Takes(5s)}});
  const RunSnapshot& snap = RunToEnd(kPipeline, {{"text", "x"}});
  EXPECT_EQ(snap.state, RuntimeState::kFailed);
  EXPECT_EQ(snap.error, "task 'producer' failed: boom");
  EXPECT_EQ(snap.finished_at, VirtualLoop::Epoch() + 5s);  // waited for side
  EXPECT_EQ(FindTask(snap, "consumer"), nullptr);          // never started
  EXPECT_EQ(FindTask(snap, "side")->state, RuntimeState::kSucceeded);
  EXPECT_EQ(FindTask(snap, "producer")->state, RuntimeState::kFailed);
  EXPECT_EQ(FindTask(snap, "producer")->error, "boom");
  EXPECT_EQ(snap.tasks[0].state, RuntimeState::kFailed);
}

// The same engine on real time: a quick smoke test that nothing depends on
// the virtual loop.
class WaitingObserver : public RunObserver {
 public:
  void OnRunChanged(const RunSnapshot& s) override {
    std::lock_guard lock(mu);
    if (IsTerminal(s.state)) {
      final_state = s.state;
      cv.notify_all();
    }
  }
  std::mutex mu;
  std::condition_variable cv;
  std::optional<RuntimeState> final_state;
};

TEST(EngineRealTime, RunsOnRealTimeLoop) {
  RealTimeLoop loop;
  FakeExecutor executor(loop);
  executor.behave = Always(Takes(5ms));
  WaitingObserver observer;
  EngineOptions options;
  options.nodes = {{"n", 4, int64_t{8} << 30}};
  {
    Engine engine(loop, executor, observer, options);
    loop.Start();
    ASSERT_TRUE(engine.Submit(Request("rt", kPipeline, {{"text", "x"}})).ok());
    std::unique_lock lock(observer.mu);
    ASSERT_TRUE(observer.cv.wait_for(lock, 30s, [&] { return observer.final_state.has_value(); }));
    EXPECT_EQ(*observer.final_state, RuntimeState::kSucceeded);
    lock.unlock();
    loop.Stop();  // before the engine goes away
  }
}

}  // namespace
}  // namespace kfpbench::engine
