#include "engine/engine.h"

#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <regex>

#include <gtest/gtest.h>

#include "engine/engine_test_util.h"

namespace kfpbench::engine {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using namespace testing;  // the part's test helpers

// producer -> consumer, plus an independent side task; typed inputs.
constexpr const char* kPipeline = R"(
pipelineInfo: {name: my-pipeline}
components:
  comp-producer:
    executorLabel: exec-producer
    inputDefinitions:
      parameters:
        text: {parameterType: STRING}
        n: {parameterType: NUMBER_INTEGER}
    outputDefinitions:
      parameters:
        out: {parameterType: STRING}
        count: {parameterType: NUMBER_INTEGER}
  comp-consumer:
    executorLabel: exec-consumer
    inputDefinitions:
      parameters:
        msg: {parameterType: STRING}
        count: {parameterType: NUMBER_INTEGER}
        ratio: {parameterType: NUMBER_DOUBLE, defaultValue: 0.5, isOptional: true}
  comp-side:
    executorLabel: exec-side
deploymentSpec:
  executors:
    exec-producer:
      container:
        image: alpine
        command: [produce, '{{$.inputs.parameters[''text'']}}', '{{$.inputs.parameters[''n'']}}']
        args: [--out, '{{$.outputs.parameters[''out''].output_file}}', --executor_input, '{{$}}']
    exec-consumer:
      container:
        image: alpine
        command: [consume]
        args: ['{{$.inputs.parameters[''msg'']}}', '{{$.inputs.parameters[''count'']}}', '{{$.inputs.parameters[''ratio'']}}']
    exec-side:
      container: {image: alpine, command: [side]}
root:
  inputDefinitions:
    parameters:
      text: {parameterType: STRING}
      n: {parameterType: NUMBER_INTEGER, defaultValue: 7, isOptional: true}
  dag:
    tasks:
      producer:
        componentRef: {name: comp-producer}
        inputs:
          parameters:
            text: {componentInputParameter: text}
            n: {componentInputParameter: n}
        taskInfo: {name: producer}
      consumer:
        componentRef: {name: comp-consumer}
        dependentTasks: [producer]
        inputs:
          parameters:
            msg: {taskOutputParameter: {producerTask: producer, outputParameterKey: out}}
            count: {taskOutputParameter: {producerTask: producer, outputParameterKey: count}}
        taskInfo: {name: consumer}
      side:
        componentRef: {name: comp-side}
        taskInfo: {name: side}
schemaVersion: 2.1.0
)";

class EngineTest : public ::testing::Test {
 protected:
  EngineTest() : executor_(loop_) {}

  Engine& MakeEngine(EngineOptions options = {}) {
    if (options.nodes.empty()) options.nodes = {{"node-a", 4, int64_t{8} << 30}};
    options.random_seed = 42;
    engine_ = std::make_unique<Engine>(loop_, executor_, observer_, std::move(options));
    return *engine_;
  }

  Status Submit(const std::string& yaml, json params, const std::string& run_id = "run-1") {
    if (!engine_) MakeEngine();
    RunRequest req;
    req.run_id = run_id;
    req.spec = MustParse(yaml);
    req.parameters = std::move(params);
    return engine_->Submit(std::move(req));
  }

  const TaskLaunch* Launched(const std::string& label) {
    for (const auto& l : executor_.launched) {
      if (l.executor_label == label) return &l;
    }
    return nullptr;
  }

  WallTime EventTime(const std::string& what) {
    for (const auto& e : executor_.events) {
      if (e.what == what) return e.time;
    }
    ADD_FAILURE() << "no event " << what;
    return {};
  }

  VirtualLoop loop_;
  FakeExecutor executor_;
  RecordingObserver observer_;
  std::unique_ptr<Engine> engine_;
};

TEST_F(EngineTest, RunsTasksInDependencyOrderAndPassesParameters) {
  executor_.behave = [](const TaskLaunch& l) {
    Behavior b;
    if (l.executor_label == "exec-producer") b.outputs = {{"out", "hello"}, {"count", "3\n"}};
    return b;
  };
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

  const TaskLaunch* producer = Launched("exec-producer");
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

  const TaskLaunch* consumer = Launched("exec-consumer");
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

TEST_F(EngineTest, RejectsBadRunParameters) {
  auto missing = Submit(kPipeline, json::object());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, 400);
  EXPECT_EQ(missing.error().message, "missing required parameter 'text' (STRING)");
  auto wrong = Submit(kPipeline, {{"text", "x"}, {"n", "seven"}});
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().message, "parameter 'n': expected NUMBER_INTEGER, got string \"seven\"");
  auto unknown = Submit(kPipeline, {{"text", "x"}, {"zz", 1}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message, "unknown parameter 'zz' (pipeline inputs: n, text)");
  // An integral double is an integer (protobuf Values carry numbers as doubles).
  EXPECT_TRUE(Submit(kPipeline, {{"text", "x"}, {"n", 3.0}}).ok());
  RunRequest no_spec;
  no_spec.run_id = "r";
  EXPECT_FALSE(engine_->Submit(no_spec).ok());
  loop_.Run();
  EXPECT_EQ(observer_.Of("run-1").state, RuntimeState::kSucceeded);
}

// One-CPU node, three independent one-CPU tasks of 10 s: they run one at a
// time and the wait shows up as scheduling delay.
constexpr const char* kThreeCpuTasks = R"(
pipelineInfo: {name: capacity}
components:
  comp-a: {executorLabel: exec-a}
deploymentSpec:
  executors:
    exec-a:
      container:
        image: alpine
        command: [work]
        resources: {resourceCpuRequest: '1', resourceMemoryRequest: 1Gi}
root:
  dag:
    tasks:
      t1: {componentRef: {name: comp-a}}
      t2: {componentRef: {name: comp-a}}
      t3: {componentRef: {name: comp-a}}
)";

TEST_F(EngineTest, WaitsForCapacityAndRecordsSchedulingDelay) {
  EngineOptions options;
  options.nodes = {{"small", 1, int64_t{4} << 30}};
  MakeEngine(options);
  executor_.behave = [](const TaskLaunch&) { return Takes(10s); };
  ASSERT_TRUE(Submit(kThreeCpuTasks, json::object()).ok());
  loop_.Run();
  const RunSnapshot& snap = observer_.Of("run-1");
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
  EngineOptions options;
  options.nodes = {{"n1", 1, int64_t{4} << 30}, {"n2", 2, int64_t{4} << 30}};
  MakeEngine(options);
  ASSERT_TRUE(Submit(kThreeCpuTasks, json::object()).ok());
  loop_.Run();
  const RunSnapshot& snap = observer_.Of("run-1");
  EXPECT_EQ(executor_.max_running, 3);
  std::map<std::string, int> per_node;
  for (const auto& t : snap.tasks) {
    if (!t.node.empty()) ++per_node[t.node];
  }
  EXPECT_EQ(per_node, (std::map<std::string, int>{{"n1", 1}, {"n2", 2}}));
}

TEST_F(EngineTest, FailsTaskThatCanNeverFit) {
  EngineOptions options;
  options.nodes = {{"tiny", 0.5, int64_t{4} << 30}};
  MakeEngine(options);
  ASSERT_TRUE(Submit(kThreeCpuTasks, json::object()).ok());
  loop_.Run();
  const RunSnapshot& snap = observer_.Of("run-1");
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
  options.default_task_resources = {0.1, 0, 64 << 20, 0};
  MakeEngine(options);
  ASSERT_TRUE(Submit(kPipeline, {{"text", "x"}}).ok());
  loop_.Run();
  EXPECT_EQ(executor_.max_running, 2);  // 0.25 CPU holds two 0.1 CPU tasks
  EXPECT_DOUBLE_EQ(executor_.launched[0].resources.cpu_request, 0.1);
}

TEST_F(EngineTest, FailureStopsNewTasksButLetsRunningOnesFinish) {
  executor_.behave = [](const TaskLaunch& l) {
    Behavior b;
    if (l.executor_label == "exec-producer") b.fail = true;
    if (l.executor_label == "exec-side") b.duration = 5s;
    return b;
  };
  ASSERT_TRUE(Submit(kPipeline, {{"text", "x"}}).ok());
  loop_.Run();
  const RunSnapshot& snap = observer_.Of("run-1");
  EXPECT_EQ(snap.state, RuntimeState::kFailed);
  EXPECT_EQ(snap.error, "task 'producer' failed: boom");
  EXPECT_EQ(snap.finished_at, VirtualLoop::Epoch() + 5s);  // waited for side
  EXPECT_EQ(FindTask(snap, "consumer"), nullptr);          // never started
  EXPECT_EQ(FindTask(snap, "side")->state, RuntimeState::kSucceeded);
  EXPECT_EQ(FindTask(snap, "producer")->state, RuntimeState::kFailed);
  EXPECT_EQ(FindTask(snap, "producer")->error, "boom");
  EXPECT_EQ(snap.tasks[0].state, RuntimeState::kFailed);
}

TEST_F(EngineTest, MissingOrMalformedOutputFailsTheTask) {
  executor_.behave = [](const TaskLaunch& l) {
    Behavior b;
    if (l.executor_label == "exec-producer") b.outputs = {{"count", "many"}};
    return b;
  };
  ASSERT_TRUE(Submit(kPipeline, {{"text", "x"}}).ok());
  loop_.Run();
  const RunSnapshot& snap = observer_.Of("run-1");
  EXPECT_EQ(snap.state, RuntimeState::kFailed);
  EXPECT_EQ(FindTask(snap, "producer")->error,
            "output parameter 'count': expected NUMBER_INTEGER, got text 'many'");
}

TEST_F(EngineTest, TerminateCancelsRunningAndQueuedTasks) {
  EngineOptions options;
  options.nodes = {{"small", 1, int64_t{4} << 30}};
  MakeEngine(options);
  executor_.behave = [](const TaskLaunch&) { return Takes(100s); };
  ASSERT_TRUE(Submit(kThreeCpuTasks, json::object()).ok());
  loop_.RunUntil(VirtualLoop::Epoch() + 5s);
  EXPECT_EQ(observer_.Of("run-1").state, RuntimeState::kRunning);
  engine_->Terminate("run-1");
  loop_.Run();
  const RunSnapshot& snap = observer_.Of("run-1");
  EXPECT_EQ(snap.state, RuntimeState::kCanceled);
  EXPECT_EQ(States(snap.history),
            (std::vector<RuntimeState>{RuntimeState::kPending, RuntimeState::kRunning,
                                       RuntimeState::kCanceling, RuntimeState::kCanceled}));
  EXPECT_EQ(snap.finished_at, VirtualLoop::Epoch() + 5s);
  EXPECT_EQ(executor_.canceled.size(), 1u);
  EXPECT_EQ(executor_.launched.size(), 1u);
  for (const char* name : {"t1", "t2", "t3"}) {
    EXPECT_EQ(FindTask(snap, name)->state, RuntimeState::kCanceled) << name;
  }
  EXPECT_EQ(snap.tasks[0].state, RuntimeState::kCanceled);
  // A second terminate, or one for an unknown run, is harmless.
  engine_->Terminate("run-1");
  engine_->Terminate("nope");
  loop_.Run();
}

TEST_F(EngineTest, ManyRunsShareTheNodes) {
  EngineOptions options;
  options.nodes = {{"n", 2, int64_t{8} << 30}};
  MakeEngine(options);
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

TEST_F(EngineTest, CreatesWorkDirectories) {
  auto root = std::filesystem::temp_directory_path() /
              ("kfpbench-engine-test-" + std::to_string(::getpid()));
  EngineOptions options;
  options.work_root = root;
  MakeEngine(options);
  ASSERT_TRUE(Submit(kPipeline, {{"text", "x"}}).ok());
  loop_.Run();
  const TaskLaunch* producer = Launched("exec-producer");
  ASSERT_NE(producer, nullptr);
  EXPECT_EQ(producer->work_dir, root / "run-1" / "producer");
  EXPECT_TRUE(
      std::filesystem::is_directory(producer->output_parameter_files.at("out").parent_path()));
  std::filesystem::remove_all(root);
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
  executor.behave = [](const TaskLaunch&) { return Takes(5ms); };
  WaitingObserver observer;
  EngineOptions options;
  options.nodes = {{"n", 4, int64_t{8} << 30}};
  {
    Engine engine(loop, executor, observer, options);
    loop.Start();
    RunRequest req;
    req.run_id = "rt";
    req.spec = MustParse(kPipeline);
    req.parameters = {{"text", "x"}};
    ASSERT_TRUE(engine.Submit(req).ok());
    std::unique_lock lock(observer.mu);
    ASSERT_TRUE(observer.cv.wait_for(lock, 30s, [&] { return observer.final_state.has_value(); }));
    EXPECT_EQ(*observer.final_state, RuntimeState::kSucceeded);
    lock.unlock();
    loop.Stop();  // before the engine goes away
  }
}

}  // namespace
}  // namespace kfpbench::engine
