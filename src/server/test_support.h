// A backend behind real HTTP on a loopback port with the stub executor, and
// a small two-step pipeline, for the server's API tests.
#pragma once

#include <memory>
#include <string>
#include <thread>
#include <utility>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "http/client.h"
#include "http/multipart.h"
#include "http/url.h"
#include "kfp/client.h"
#include "server/backend.h"

namespace kfpbench::server::testing {

using nlohmann::json;

inline constexpr const char* kPipeline = R"(# PIPELINE DEFINITION
# Name: two-steps
components:
  comp-produce:
    executorLabel: exec-produce
    inputDefinitions:
      parameters:
        message:
          parameterType: STRING
    outputDefinitions:
      parameters:
        Output:
          parameterType: STRING
  comp-consume:
    executorLabel: exec-consume
    inputDefinitions:
      parameters:
        text:
          parameterType: STRING
deploymentSpec:
  executors:
    exec-produce:
      container:
        image: debian:12
        command: [sh, -c, 'printf "%s" "$0" > "$1"']
        args: ["{{$.inputs.parameters['message']}}", "{{$.outputs.parameters['Output'].output_file}}"]
    exec-consume:
      container:
        image: debian:12
        command: [sh, -c, 'echo "$0"']
        args: ["{{$.inputs.parameters['text']}}"]
pipelineInfo:
  name: two-steps
root:
  dag:
    tasks:
      produce:
        componentRef:
          name: comp-produce
        inputs:
          parameters:
            message:
              componentInputParameter: message
        taskInfo:
          name: produce
      consume:
        componentRef:
          name: comp-consume
        dependentTasks: [produce]
        inputs:
          parameters:
            text:
              taskOutputParameter:
                outputParameterKey: Output
                producerTask: produce
        taskInfo:
          name: consume
  inputDefinitions:
    parameters:
      message:
        defaultValue: hello
        parameterType: STRING
schemaVersion: 2.1.0
sdkVersion: kfp-2.13.0
)";

// A backend served on loopback and KFP's client of it over real HTTP, as a
// harness or a command sees a target. Members are destroyed client first.
struct ServedBackend {
  std::unique_ptr<ApiServer> server;
  std::unique_ptr<http::Client> http;
  std::unique_ptr<kfp::Client> client;
};

inline Result<ServedBackend> ServeWithClient(const ServeOptions& options) {
  auto started = ApiServer::Start(options);
  if (!started.ok()) return started.error();
  ServedBackend b;
  b.server = std::move(*started);
  http::ClientOptions co;
  co.base = *http::ParseUrl(b.server->url());
  b.http = std::make_unique<http::Client>(co);
  b.client = std::make_unique<kfp::Client>(*b.http, kfp::ClientConfig{}, nullptr);
  return b;
}

class BackendApiTest : public ::testing::Test {
 protected:
  // Subclasses may change the options before SetUp.
  ServeOptions options_ = [] {
    ServeOptions options;
    options.port = 0;
    options.backend.executor = "stub";
    options.backend.stub_durations = {"constant:20ms"};
    return options;
  }();

  void SetUp() override {
    ServeOptions options = options_;
    auto server = ApiServer::Start(options);
    ASSERT_TRUE(server.ok()) << server.error().message;
    server_ = std::move(*server);
    http::ClientOptions co;
    co.base = *http::ParseUrl(server_->url());
    client_ = std::make_unique<http::Client>(co);
  }

  // Sends a request and returns {status, parsed body}.
  std::pair<int, json> Call(http::Method method, const std::string& target,
                            const std::string& body = "") {
    auto r = client_->Send(method, target, body, body.empty() ? "" : "application/json");
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    if (!r.ok()) return {0, nullptr};
    return {r->status, json::parse(r->body, nullptr, false)};
  }

  json Upload(const std::string& name, const std::string& content) {
    auto form = http::BuildMultipart({{"uploadfile", name + ".yaml", "application/yaml", content}});
    auto r = client_->Send(http::Method::kPost, "/apis/v2beta1/pipelines/upload?name=" + name,
                           form.body, form.content_type);
    EXPECT_TRUE(r.ok());
    EXPECT_EQ(r->status, 200) << r->body;
    return json::parse(r->body);
  }

  // Runs the pipeline's latest version (named "r") and waits for its end:
  // the run as GetRun last answered, or the body refusing it.
  json RunPipeline(const json& pipeline) {
    json body = {{"display_name", "r"},
                 {"pipeline_version_reference", {{"pipeline_id", pipeline["pipeline_id"]}}}};
    auto [status, created] = Call(http::Method::kPost, "/apis/v2beta1/runs", body.dump());
    EXPECT_EQ(status, 200) << created;
    if (status != 200) return created;
    return WaitForRun(created["run_id"]);
  }

  json WaitForRun(const std::string& run_id, const std::string& prefix = "/apis/v2beta1/runs/") {
    for (int i = 0; i < 500; ++i) {
      auto [status, run] = Call(http::Method::kGet, prefix + run_id);
      EXPECT_EQ(status, 200);
      std::string state = run.value("state", "");
      if (state == "SUCCEEDED" || state == "FAILED" || state == "CANCELED") return run;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ADD_FAILURE() << "run " << run_id << " did not finish";
    return nullptr;
  }

  std::unique_ptr<ApiServer> server_;
  std::unique_ptr<http::Client> client_;
};

}  // namespace kfpbench::server::testing
