// Test support for the harness's runners and session: kfpbench's embedded
// backend over loopback HTTP, its steps stubs, opened as a command opens its
// target (Session), and one pass of a scenario file through it (RunScenarios).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "harness/e2e_support.h"
#include "harness/harness.h"
#include "harness/scenario.h"
#include "harness/session.h"
#include "http/client.h"
#include "http/server.h"
#include "http/url.h"
#include "kfp/client.h"

namespace kfpbench::harness::testing {

// A KFP-shaped target on a loopback port whose every answer `answer` writes
// (a target that answers as an attacker would), and kfpbench's KFP client
// to it.
class ScriptedTarget {
 public:
  explicit ScriptedTarget(std::function<http::Response(const http::Request&)> answer) {
    http::ServerOptions o;
    o.handler = std::move(answer);
    server_ = std::make_unique<http::Server>(std::move(o));
    started_ = server_->Start().ok();
    http::ClientOptions c;
    c.base = *http::ParseUrl("http://127.0.0.1:" + std::to_string(server_->port()));
    http_ = std::make_unique<http::Client>(std::move(c));
    client_ = std::make_unique<kfp::Client>(*http_, kfp::ClientConfig{}, nullptr);
  }
  bool started() const { return started_; }
  kfp::Client& client() { return *client_; }

 private:
  std::unique_ptr<http::Server> server_;
  std::unique_ptr<http::Client> http_;
  std::unique_ptr<kfp::Client> client_;
  bool started_ = false;
};

class EmbeddedTargetTest : public kfpbench::testing::ScratchDirTest {
 protected:
  void SetUp() override {
    ScratchDirTest::SetUp();
    auto session = Session::Open(EmbeddedTarget());
    ASSERT_TRUE(session.ok()) << session.error().message;
    session_ = std::move(*session);
  }
  void TearDown() override {
    session_.reset();
    ScratchDirTest::TearDown();
  }

  // The embedded backend on a free port, every step a 20 ms stub.
  static TargetOptions EmbeddedTarget() {
    TargetOptions target;
    target.embedded.port = 0;
    target.embedded.backend.executor = "stub";
    target.embedded.backend.stub_durations = {"constant:20ms"};
    return target;
  }

  // The scenario file `text` read as `run` reads it, pipelines named from
  // examples/pipelines.
  ScenarioFile Load(const std::string& text) {
    LoadOptions load;
    load.pipeline_dirs = {std::filesystem::path(KFPBENCH_SOURCE_DIR) / "examples/pipelines"};
    auto file = ParseScenarios(text, dir_ / "s.json", load);
    EXPECT_TRUE(file.ok()) << file.error().message;
    return file.ok() ? std::move(*file) : ScenarioFile{};
  }

  HarnessOptions Options() const {
    HarnessOptions options;
    options.poll_interval = std::chrono::milliseconds(50);
    options.embedded_target = true;
    options.benchmark_id = "kfpbench-test";
    return options;
  }

  // One pass of the scenario file `text` against the embedded backend.
  results::BenchmarkResults Run(const std::string& text) {
    return RunScenarios(Load(text), session_->client(), session_->recorder(), Options());
  }

  // How many calls of `operation` the workload made (failed ones included).
  static uint64_t Calls(const results::BenchmarkResults& results, const std::string& operation) {
    auto it = results.operations.find(operation);
    return it == results.operations.end() ? 0 : it->second.latency_us.count();
  }
  static uint64_t Errors(const results::BenchmarkResults& results) {
    uint64_t errors = 0;
    for (const auto& [name, stats] : results.operations) errors += stats.errors;
    return errors;
  }

  std::unique_ptr<Session> session_;
};

}  // namespace kfpbench::harness::testing
