// Attempts: retries with backoff, launch counts per executor, and a
// terminate during a retry's backoff.
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "engine/dag_test_fixture.h"
#include "engine/engine.h"
#include "engine/engine_test_util.h"

namespace kfpbench::engine {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using namespace testing;  // the part's test helpers

constexpr const char* kRetry = R"(
root:
  dag:
    tasks:
      flaky:
        componentRef: {name: comp-echo}
        inputs: {parameters: {msg: {runtimeValue: {constant: x}}}}
        retryPolicy: {maxRetryCount: 2, backoffDuration: 2s, backoffFactor: 2.0, backoffMaxDuration: 3600s}
)";

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
  EXPECT_NE(flaky->history[2].error.find("attempt 1 failed: boom"), std::string::npos);
  // Each attempt is a launch of its executor (what the simulator keys a step's draw by).
  for (uint32_t k = 0; k < 3; ++k) EXPECT_EQ(executor_.launched[k].label_launches_before, k);
}

TEST_F(DagTest, LaunchesAreCountedPerExecutorWithinTheRun) {
  const RunSnapshot& snap = RunToEnd(Spec(R"(
  comp-flip:
    executorLabel: exec-flip
    outputDefinitions:
      parameters:
        Output: {parameterType: STRING}
root:
  dag:
    tasks:
      first:
        componentRef: {name: comp-echo}
        inputs: {parameters: {msg: {runtimeValue: {constant: x}}}}
      flip:
        componentRef: {name: comp-flip}
        dependentTasks: [first]
      second:
        componentRef: {name: comp-echo}
        dependentTasks: [flip]
        inputs: {parameters: {msg: {runtimeValue: {constant: y}}}}
)"));
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
  executor_.behave = [](const TaskLaunch&) {
    Behavior b;
    b.fail = true;
    return b;
  };
  const RunSnapshot& snap = RunToEnd(Spec(kRetry));
  EXPECT_EQ(snap.state, RuntimeState::kFailed);
  EXPECT_EQ(executor_.launched.size(), 3u);
  EXPECT_EQ(FindTask(snap, "flaky")->error, "boom");
}

TEST_F(DagTest, TerminateDuringRetryBackoff) {
  executor_.behave = [](const TaskLaunch&) {
    Behavior b;
    b.fail = true;
    return b;
  };
  RunRequest req;
  req.run_id = "run";
  req.spec = MustParse(Spec(kRetry));
  ASSERT_TRUE(engine_->Submit(req).ok());
  loop_.RunUntil(VirtualLoop::Epoch() + 2s);  // in the first backoff
  engine_->Terminate("run");
  loop_.Run();
  const RunSnapshot& snap = observer_.Of("run");
  EXPECT_EQ(snap.state, RuntimeState::kCanceled);
  EXPECT_EQ(executor_.launched.size(), 1u);
  EXPECT_EQ(FindTask(snap, "flaky")->state, RuntimeState::kCanceled);
}

}  // namespace
}  // namespace kfpbench::engine
