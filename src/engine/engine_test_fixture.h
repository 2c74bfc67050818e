// The fixture of the engine's tests of one pipeline at a time (engine_test,
// runs_test, launch_queue_test, container_launch_test): an engine on a
// virtual loop with a fake executor, and the pipelines they share.
#pragma once

#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "engine/engine.h"
#include "engine/engine_test_util.h"
#include "util/test_support.h"

namespace kfpbench::engine::testing {

// producer -> consumer, plus an independent side task; typed inputs.
inline const std::string kPipeline =
    kfpbench::testing::TestData("engine/testdata/producer_consumer.yaml");

class EngineTest : public EngineFixture {
 protected:
  Engine& MakeEngine(EngineOptions options = {}) {
    if (options.nodes.empty()) options.nodes = {{"node-a", 4, int64_t{8} << 30}};
    options.random_seed = 42;
    return NewEngine(std::move(options));
  }
  Engine& MakeEngineOn(std::vector<NodeSpec> nodes) {
    EngineOptions options;
    options.nodes = std::move(nodes);
    return MakeEngine(std::move(options));
  }

  Status Submit(const std::string& yaml, nlohmann::json params,
                const std::string& run_id = "run-1") {
    if (!engine_) MakeEngine();
    return engine_->Submit(Request(run_id, yaml, std::move(params)));
  }
  // Submits run-1 and runs the loop until nothing is left.
  const RunSnapshot& RunToEnd(const std::string& yaml, nlohmann::json params) {
    if (!engine_) MakeEngine();
    return SubmitAndRun(Request("run-1", yaml, std::move(params)));
  }

  WallTime EventTime(const std::string& what) {
    for (const auto& e : executor_.events) {
      if (e.what == what) return e.time;
    }
    ADD_FAILURE() << "no event " << what;
    return {};
  }
};

// One-CPU node, three independent one-CPU tasks of 10 s: they run one at a
// time and the wait shows up as scheduling delay.
inline const std::string kThreeCpuTasks =
    kfpbench::testing::TestData("engine/testdata/three_cpu_tasks.yaml");

// Two independent tasks of 1 CPU, 1Gi each.
inline const std::string kTwoTasks = kfpbench::testing::TestData("engine/testdata/two_tasks.yaml");

// An engine whose options each test sets (nodes, shapes, snapshots, details).
class EngineNodesTest : public EngineFixture {
 protected:
  Engine& Make(EngineOptions options) {
    options.random_seed = 7;
    return NewEngine(std::move(options));
  }
  void Submit(const std::string& id) { ASSERT_TRUE(engine_->Submit(Request(id, kTwoTasks)).ok()); }
};

}  // namespace kfpbench::engine::testing
