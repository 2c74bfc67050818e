// Snapshots of runs: a large run is snapshotted at intervals, and ends
// complete.
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

TEST(DagSnapshots, LargeRunsAreSnapshottedAtIntervalsAndEndComplete) {
  std::string spec = Spec(R"(
  comp-for-loop-1:
    inputDefinitions:
      parameters:
        pipelinechannel--list-loop-item: {parameterType: STRING}
    dag:
      tasks:
        print:
          componentRef: {name: comp-echo}
          inputs: {parameters: {msg: {componentInputParameter: pipelinechannel--list-loop-item}}}
root:
  dag:
    tasks:
      for-loop-1:
        componentRef: {name: comp-for-loop-1}
        parameterIterator:
          itemInput: pipelinechannel--list-loop-item
          items: {raw: 'ITEMS'}
)");
  json items = json::array();
  for (int i = 0; i < 400; ++i) items.push_back(std::to_string(i));
  spec.replace(spec.find("ITEMS"), 5, items.dump());
  auto run_with = [&](size_t large_run_records) {
    VirtualLoop loop;
    FakeExecutor executor(loop);
    RecordingObserver observer;
    EngineOptions options;
    options.nodes = {{"node", 4, int64_t{64} << 30}};
    options.random_seed = 7;
    options.large_run_records = large_run_records;
    Engine engine(loop, executor, observer, options);
    RunRequest req;
    req.run_id = "wide";
    req.spec = MustParse(spec);
    EXPECT_TRUE(engine.Submit(std::move(req)).ok());
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

}  // namespace
}  // namespace kfpbench::engine
