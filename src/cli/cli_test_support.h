// What the CLI's end-to-end tests share beyond harness/e2e_support.h: the
// example pipelines' folder, and a KFP server of the test's own (the
// embedded backend on loopback, reached through --host as a real one would
// be).
#pragma once

#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "harness/e2e_support.h"
#include "server/backend.h"
#include "server/test_support.h"

namespace kfpbench::testing {

inline std::string ExamplePipelines() {
  return std::string(KFPBENCH_SOURCE_DIR) + "/examples/pipelines";
}

// A server on a free loopback port whose steps are timed stubs.
inline server::ServeOptions StubServer() {
  server::ServeOptions so;
  so.port = 0;
  so.backend.executor = "stub";
  return so;
}

// Starts `options` into `backend`; a server that does not start fails the test.
inline void Serve(const server::ServeOptions& options, server::testing::ServedBackend& backend) {
  auto served = server::testing::ServeWithClient(options);
  ASSERT_TRUE(served.ok()) << served.error().message;
  backend = std::move(*served);
}

// A scratch folder and a server running for the length of each test.
class ServedBackendTest : public ScratchDirTest {
 protected:
  explicit ServedBackendTest(server::ServeOptions options = StubServer())
      : options_(std::move(options)) {}
  void SetUp() override {
    ScratchDirTest::SetUp();
    Serve(options_, backend_);
  }
  void TearDown() override {
    backend_ = {};
    ScratchDirTest::TearDown();
  }

  server::ServeOptions options_;
  server::testing::ServedBackend backend_;
};

}  // namespace kfpbench::testing
