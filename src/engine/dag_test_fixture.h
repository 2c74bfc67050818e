// The fixture of the DAG tests (dag_progress_test, parallel_for_test,
// launch_queue_test): an engine on a virtual loop with a fake executor, and
// pipelines of echo steps.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/engine.h"
#include "engine/engine_test_util.h"

namespace kfpbench::engine::testing {

class DagTest : public ::testing::Test {
 protected:
  DagTest() : executor_(loop_) {
    EngineOptions options;
    options.nodes = {{"node", 16, int64_t{64} << 30}};
    options.random_seed = 7;
    engine_ = std::make_unique<Engine>(loop_, executor_, observer_, options);
  }

  const RunSnapshot& RunToEnd(const std::string& yaml,
                              nlohmann::json params = nlohmann::json::object()) {
    RunRequest req;
    req.run_id = "run";
    req.spec = MustParse(yaml);
    req.parameters = std::move(params);
    auto s = engine_->Submit(std::move(req));
    EXPECT_TRUE(s.ok()) << s.error().message;
    loop_.Run();
    return observer_.Of("run");
  }

  std::vector<const TaskLaunch*> LaunchesOf(const std::string& label) {
    std::vector<const TaskLaunch*> out;
    for (const auto& l : executor_.launched) {
      if (l.executor_label == label) out.push_back(&l);
    }
    return out;
  }

  VirtualLoop loop_;
  FakeExecutor executor_;
  RecordingObserver observer_;
  std::unique_ptr<Engine> engine_;
};

constexpr const char* kEcho = R"(
  comp-echo:
    executorLabel: exec-echo
    inputDefinitions:
      parameters:
        msg: {parameterType: STRING}
    outputDefinitions:
      parameters:
        Output: {parameterType: STRING}
)";
constexpr const char* kEchoExecutor = R"(
deploymentSpec:
  executors:
    exec-echo:
      container: {image: alpine, command: [echo, '{{$.inputs.parameters[''msg'']}}']}
    exec-flip:
      container: {image: alpine, command: [flip]}
    exec-num:
      container: {image: alpine, command: [num, '{{$.inputs.parameters[''x'']}}']}
)";

inline std::string Spec(const std::string& body) {
  return std::string("pipelineInfo: {name: nested}\nschemaVersion: 2.1.0\ncomponents:") + kEcho +
         body + kEchoExecutor;
}

}  // namespace kfpbench::engine::testing
