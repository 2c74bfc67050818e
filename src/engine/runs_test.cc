// A run's start and cancellation: its parameters checked at submission, and
// a terminate that cancels running and queued tasks.
#include <gtest/gtest.h>

#include "engine/engine.h"
#include "engine/engine_test_fixture.h"
#include "engine/engine_test_util.h"

namespace kfpbench::engine {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using namespace testing;  // the part's test helpers

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

TEST_F(EngineTest, TerminateCancelsRunningAndQueuedTasks) {
  MakeEngineOn({{"small", 1, int64_t{4} << 30}});
  executor_.behave = Always(Takes(100s));
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

}  // namespace
}  // namespace kfpbench::engine
