// /metrics: Prometheus text format, checked by promtool when it is installed.
#include "server/metrics.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>

#include "server/test_support.h"
#include "util/strings.h"

namespace kfpbench::server {
namespace {

using http::Method;
using nlohmann::json;
using ::testing::HasSubstr;
using namespace testing;  // the part's test helpers

TEST(ApiMetricsTest, CountsAndCumulativeBuckets) {
  ApiMetrics m;
  m.Record("GetRun", 200, 0.0007);
  m.Record("GetRun", 200, 0.003);
  m.Record("GetRun", 404, 20);
  std::string text = m.Render();
  EXPECT_THAT(text, HasSubstr("kfpbench_http_requests_total{route=\"GetRun\",code=\"200\"} 2\n"))
      << text;
  EXPECT_THAT(text, HasSubstr("kfpbench_http_requests_total{route=\"GetRun\",code=\"404\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("_bucket{route=\"GetRun\",le=\"0.0005\"} 0\n")) << text;
  EXPECT_THAT(text, HasSubstr("_bucket{route=\"GetRun\",le=\"0.001\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("_bucket{route=\"GetRun\",le=\"0.005\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("_bucket{route=\"GetRun\",le=\"10\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("_bucket{route=\"GetRun\",le=\"+Inf\"} 3\n"));
  EXPECT_THAT(text,
              HasSubstr("kfpbench_http_request_duration_seconds_count{route=\"GetRun\"} 3\n"));
  EXPECT_EQ(EscapePrometheusLabel("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
}

TEST_F(BackendApiTest, MetricsEndpointPassesPromtool) {
  json p = Upload("two-steps", kPipeline);
  json body = {{"display_name", "r"},
               {"pipeline_version_reference", {{"pipeline_id", p["pipeline_id"]}}}};
  auto [cs, run] = Call(Method::kPost, "/apis/v2beta1/runs", body.dump());
  ASSERT_EQ(cs, 200);
  WaitForRun(run["run_id"]);
  Call(Method::kGet, "/apis/v2beta1/runs/nope");
  Call(Method::kGet, "/apis/v2beta1/nothing");

  auto r = client_->Send(Method::kGet, "/metrics", "", "");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->status, 200);
  EXPECT_THAT(r->headers.Get("Content-Type"), HasSubstr("text/plain"));
  const std::string& text = r->body;
  EXPECT_THAT(text, HasSubstr("kfpbench_http_requests_total{route=\"CreateRun\",code=\"200\"} 1"))
      << text;
  EXPECT_THAT(text, HasSubstr("kfpbench_http_requests_total{route=\"GetRun\",code=\"404\"} 1"));
  EXPECT_THAT(text, HasSubstr("kfpbench_http_requests_total{route=\"NotFound\",code=\"404\"} 1"));
  EXPECT_THAT(text, HasSubstr("kfpbench_runs{state=\"SUCCEEDED\"} 1"));
  EXPECT_THAT(text, HasSubstr("kfpbench_runs{state=\"RUNNING\"} 0"));
  EXPECT_THAT(text, HasSubstr("kfpbench_pending_tasks 0"));

  if (std::system("command -v promtool > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "promtool is not installed (Debian package prometheus)";
  }
  auto path = std::filesystem::temp_directory_path() /
              ("kfpbench-metrics-" + std::to_string(getpid()) + ".txt");
  std::ofstream(path) << text;
  std::string command = "promtool check metrics < " + path.string() + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buffer[512];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  int rc = pclose(pipe);
  std::filesystem::remove(path);
  EXPECT_EQ(rc, 0) << output << "\n" << text;
}

// Issue #35: per-pod series name every namespace's pipelines, and in
// multi-user mode any caller may read /metrics (as KFP's): there it shows the
// totals only. The same server single-user shows the pods.
TEST(MetricsAccess, PerPodSeriesAreLeftOutInMultiUserMode) {
  for (bool multi_user : {false, true}) {
    ServeOptions options;
    options.port = 0;
    options.backend.executor = "process";
    options.allow_host_steps = true;
    options.backend.auth.multi_user = multi_user;
    auto server = ApiServer::Start(options);
    ASSERT_TRUE(server.ok()) << server.error().message;
    http::ClientOptions co;
    co.base = *http::ParseUrl((*server)->url());
    http::Client client(co);
    http::Headers alice;
    alice.Set("kubeflow-userid", "alice");
    auto r = client.Send(Method::kGet, "/metrics", "", "", alice);
    ASSERT_TRUE(r.ok()) << r.error().message;
    ASSERT_EQ(r->status, 200) << r->body;
    EXPECT_THAT(r->body, HasSubstr("kfpbench_runs{state=\"RUNNING\"}"));
    EXPECT_EQ(r->body.find("container_cpu_usage_seconds_total") != std::string::npos, !multi_user)
        << (multi_user ? "multi-user" : "single-user") << ":\n"
        << r->body;
  }
}

}  // namespace
}  // namespace kfpbench::server
