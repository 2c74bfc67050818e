// --prometheus end to end: a real `prometheus` scrapes `kfpbench serve`
// (whose /metrics exports cAdvisor-style series for its task processes),
// kfpbench runs steps that burn CPU and hold memory, then reads each step's
// CPU seconds and peak memory back through Prometheus' HTTP API. The numbers
// must be non-zero and agree with what the backend measured itself (loosely:
// Prometheus sees the series only at its 1 s scrapes). Skips without
// /usr/bin/prometheus.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include <nlohmann/json.hpp>

#include "harness/e2e_support.h"
#include "http/client.h"
#include "http/url.h"
#include "util/ids.h"
#include "util/sanitizers.h"
#include "util/test_support.h"

namespace kfpbench::harness {

namespace {

namespace fs = std::filesystem;
using kfpbench::testing::ChildProcess;
using nlohmann::json;

constexpr const char* kPrometheus = "/usr/bin/prometheus";

// Two steps: one burns half a core and holds 64 MiB, the next holds 96 MiB.
const std::string kPipeline = kfpbench::testing::TestData("harness/testdata/burn_and_hold.yaml");

uint16_t FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

std::unique_ptr<http::Client> ClientFor(const std::string& url) {
  http::ClientOptions o;
  o.base = *http::ParseUrl(url);
  o.request_timeout = std::chrono::seconds(10);
  return std::make_unique<http::Client>(o);
}

// `family{...pod="pod"...} value` in a /metrics text, or -1.
double MetricFor(const std::string& text, const std::string& family, const std::string& pod) {
  std::regex line(family + R"(\{[^}]*pod=")" + pod + R"("[^}]*\} ([0-9.e+]+))");
  std::smatch m;
  return std::regex_search(text, m, line) ? std::stod(m[1]) : -1;
}

TEST(PrometheusE2e, StepCpuAndMemoryComeBackThroughARealPrometheus) {
  if (!fs::exists(kPrometheus)) GTEST_SKIP() << kPrometheus << " is not installed";
  fs::path dir = fs::temp_directory_path() / ("kfpbench-prom-" + NewUuid());
  fs::create_directories(dir / "tsdb");
  struct Cleanup {
    fs::path dir;
    ~Cleanup() { fs::remove_all(dir); }
  } cleanup{dir};

  ChildProcess server(
      {kfpbench::testing::KfpbenchBinary(), "serve", "--access-log", "none", "--port", "0"});
  std::string line = server.WaitForLine("serving", std::chrono::seconds(60));
  ASSERT_FALSE(line.empty()) << server.seen();
  std::string backend_url = kfpbench::testing::UrlInLine(line);
  auto backend_port = http::ParseUrl(backend_url)->port;

  uint16_t prometheus_port = FreePort();
  std::ofstream(dir / "prometheus.yml")
      << "global:\n  scrape_interval: 1s\n"
      << "scrape_configs:\n  - job_name: kfpbench\n"
      << "    static_configs:\n      - targets: ['127.0.0.1:" << backend_port << "']\n";
  std::string prometheus_url = "http://127.0.0.1:" + std::to_string(prometheus_port);
  ChildProcess prometheus({kPrometheus, "--config.file=" + (dir / "prometheus.yml").string(),
                           "--storage.tsdb.path=" + (dir / "tsdb").string(),
                           "--web.listen-address=127.0.0.1:" + std::to_string(prometheus_port),
                           "--log.level=warn"});
  ASSERT_TRUE(prometheus.started());
  auto prom = ClientFor(prometheus_url);
  bool ready = false;
  for (int i = 0; i < 600 && !ready; ++i) {  // up to 60 s on a loaded machine
    auto r = prom->Send(http::Method::kGet, "/-/ready");
    ready = r.ok() && r->status == 200;
    if (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(ready) << prometheus.seen();

  std::ofstream(dir / "burn.yaml") << kPipeline;
  std::ofstream(dir / "s.json") << R"([{"mode": "PIPELINE_RUN", "runTime": "1s", "numTimes": 1,
                                       "pipelineFileName": "burn.yaml"}])";
  auto r = kfpbench::testing::Kfpbench(
      "run " + (dir / "s.json").string() + " --host " + backend_url + " --prometheus " +
      prometheus_url + " --prometheus-wait 60s --poll-interval 200ms --keep --quiet --out " +
      (dir / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(dir / "out" / "results.json");
  json j = json::parse(in, nullptr, false);
  ASSERT_TRUE(j.is_object());
  ASSERT_EQ(j["runs"]["records"].size(), 1u) << j["runs"];
  const json& run = j["runs"]["records"][0];
  ASSERT_EQ(run["state"], "SUCCEEDED") << run;

  // What the backend measured itself: its /metrics keeps finished steps'
  // final CPU seconds and peak RSS for two minutes.
  auto metrics = ClientFor(backend_url)->Send(http::Method::kGet, "/metrics");
  ASSERT_TRUE(metrics.ok());
  int steps = 0;
  for (const auto& t : run["tasks"]) {
    if (t["dag"].get<bool>()) continue;
    ++steps;
    SCOPED_TRACE(t.dump());
    ASSERT_EQ(t.value("resource_source", ""), "prometheus");
    std::string pod = t["pod_name"];
    double cpu = t["cpu_seconds"];
    double memory = t["peak_memory_bytes"];
    double own_cpu = MetricFor(metrics->body, "container_cpu_usage_seconds_total", pod);
    double own_memory = MetricFor(metrics->body, "container_memory_working_set_bytes", pod);
    ASSERT_GT(own_cpu, 0) << metrics->body;
    EXPECT_GT(cpu, 0.1);  // 3 s at 0.2-0.5 cores, on a loaded machine
    EXPECT_NEAR(cpu, own_cpu, 0.25 * own_cpu + 0.2);
    const double held = t["name"] == "burn" ? 64 << 20 : 96 << 20;
    EXPECT_GT(memory, 0.9 * held);
    EXPECT_LT(memory, held + (256 << 20));
    // The peak Prometheus kept against the server's last reading: close, and
    // further apart under AddressSanitizer, whose quarantine makes a step's
    // memory swing.
    EXPECT_NEAR(memory, own_memory, (kUnderAddressSanitizer ? 0.5 : 0.2) * own_memory);
  }
  EXPECT_EQ(steps, 2);
  prometheus.Stop();
  server.Stop();
}

}  // namespace
}  // namespace kfpbench::harness
