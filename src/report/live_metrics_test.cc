#include "report/live_metrics.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "http/client.h"
#include "results/test_support.h"
#include "util/ids.h"

namespace kfpbench::report {
namespace {

using ::testing::HasSubstr;

namespace fs = std::filesystem;
using std::chrono::milliseconds;

LiveState SampleState() {
  LiveState s;
  WallTime t0 = WallClock::now();
  metrics::Recorder r(t0);
  for (int i = 0; i < 100; ++i) r.RecordCall("GetRun", milliseconds(i), i % 10 ? 200 : 503, t0);
  r.RecordCall("CreateRun", std::chrono::seconds(120), 0, t0);  // above the last bound
  r.RecordCall("Weird\"Op\\", milliseconds(1), 200, t0);
  s.operations = r.Totals();
  s.progress.runs_created = 7;
  s.progress.runs_finished = 4;
  s.runs_created = 7;
  s.runs_by_state = {{"SUCCEEDED", 3}, {"FAILED", 1}};
  s.late_starts = 2;
  s.observer_calls = {{"GetRun", 4}, {"ListRuns", 9}};
  return s;
}

// The value of the one sample line starting with `series`.
double Sample(const std::string& text, const std::string& series) {
  auto at = text.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + series.size() + 2));
}

TEST(LiveMetrics, ExpositionHasCumulativeBucketsCountsAndHelp) {
  std::string text = RenderPrometheus(SampleState());
  for (const char* family :
       {"kfpbench_api_request_duration_seconds histogram", "kfpbench_api_requests_total counter",
        "kfpbench_api_errors_total counter", "kfpbench_runs_in_flight gauge",
        "kfpbench_runs_finished_total counter", "kfpbench_late_starts_total counter"}) {
    EXPECT_THAT(text, HasSubstr(std::string("# TYPE ") + family)) << family;
  }
  // GetRun: 0..99 ms. le=0.01 holds 0..9 ms (10), le=0.05 holds 0..49 ms (50).
  EXPECT_EQ(
      Sample(text,
             "kfpbench_api_request_duration_seconds_bucket{operation=\"GetRun\",le=\"0.01\"}"),
      10);
  EXPECT_EQ(
      Sample(text,
             "kfpbench_api_request_duration_seconds_bucket{operation=\"GetRun\",le=\"0.05\"}"),
      50);
  EXPECT_EQ(
      Sample(text,
             "kfpbench_api_request_duration_seconds_bucket{operation=\"GetRun\",le=\"+Inf\"}"),
      100);
  EXPECT_NEAR(Sample(text, "kfpbench_api_request_duration_seconds_sum{operation=\"GetRun\"}"), 4.95,
              1e-9);
  // 120 s is past the last finite bound: only +Inf holds it.
  EXPECT_EQ(
      Sample(text,
             "kfpbench_api_request_duration_seconds_bucket{operation=\"CreateRun\",le=\"60\"}"),
      0);
  EXPECT_EQ(Sample(text, "kfpbench_api_requests_total{operation=\"GetRun\",code=\"503\"}"), 10);
  EXPECT_EQ(Sample(text, "kfpbench_api_requests_total{operation=\"CreateRun\",code=\"0\"}"), 1);
  EXPECT_EQ(Sample(text, "kfpbench_api_errors_total{operation=\"GetRun\"}"), 10);
  EXPECT_EQ(Sample(text, "kfpbench_runs_in_flight"), 3);
  EXPECT_EQ(Sample(text, "kfpbench_runs_finished_total{state=\"SUCCEEDED\"}"), 3);
  EXPECT_EQ(Sample(text, "kfpbench_late_starts_total"), 2);
  EXPECT_EQ(Sample(text, "kfpbench_observer_requests_total{operation=\"ListRuns\"}"), 9);
  EXPECT_THAT(text, HasSubstr("operation=\"Weird\\\"Op\\\\\"")) << "label escaping";

  // Buckets never decrease.
  std::regex bucket(R"(operation="GetRun",le="[^"]+"\} (\d+))");
  double last = -1;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), bucket);
       it != std::sregex_iterator(); ++it) {
    double v = std::stod((*it)[1]);
    EXPECT_GE(v, last);
    last = v;
  }
}

TEST(LiveMetrics, PromtoolAcceptsTheExposition) {
  if (!fs::exists("/usr/bin/promtool")) GTEST_SKIP() << "promtool not installed";
  fs::path file = fs::temp_directory_path() / ("kfpbench-metrics-" + NewUuid() + ".txt");
  std::ofstream(file) << RenderPrometheus(SampleState());
  std::string command = "/usr/bin/promtool check metrics < " + file.string() + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buffer[512];
  while (fgets(buffer, sizeof buffer, pipe)) output += buffer;
  int status = pclose(pipe);
  fs::remove(file);
  EXPECT_EQ(status, 0) << output;
  EXPECT_EQ(output, "") << "promtool lint findings";
}

std::string Scrape(uint16_t port, int* status = nullptr, const std::string& path = "/metrics") {
  auto url = http::ParseUrl("http://127.0.0.1:" + std::to_string(port));
  http::ClientOptions o;
  o.base = *url;
  http::Client client(o);
  auto r = client.Send(http::Method::kGet, path);
  if (!r.ok()) return "transport: " + r.error().message;
  if (status) *status = r->status;
  return r->body;
}

TEST(LiveMetrics, ServesLiveNumbersAndKeepsCountersAcrossRepetitions) {
  WallTime t0 = WallClock::now();
  metrics::Recorder recorder(t0);
  auto live = LiveMetrics::Start("127.0.0.1:0", recorder);
  ASSERT_TRUE(live.ok()) << live.error().message;
  recorder.RecordCall("GetRun", milliseconds(3), 200, t0);
  results::Progress p;
  p.runs_created = 2;
  p.runs_finished = 1;
  p.runs_by_state = {{"SUCCEEDED", 1}};
  p.observer_calls = {{"ListRuns", 3}};
  (*live)->Update(p);
  std::string text = Scrape((*live)->port());
  EXPECT_EQ(Sample(text, "kfpbench_api_requests_total{operation=\"GetRun\",code=\"200\"}"), 1)
      << text;
  EXPECT_EQ(Sample(text, "kfpbench_runs_in_flight"), 1);

  // The first repetition ends with 2 succeeded runs; the recorder restarts.
  results::BenchmarkResults rep1;
  for (int i = 0; i < 2; ++i) {
    results::RunRecord r;
    r.run_id = fmt::format("r{}", i);
    r.state = RuntimeState::kSucceeded;
    rep1.runs.push_back(r);
  }
  for (int i = 0; i < 5; ++i) {
    rep1.observer.operations["ListRuns"].latency_us.Record(1000);
  }
  (*live)->EndRepetition(rep1, WallClock::now());
  EXPECT_TRUE(recorder.Totals().empty());
  recorder.RecordCall("GetRun", milliseconds(3), 200, WallClock::now());
  text = Scrape((*live)->port());
  EXPECT_EQ(Sample(text, "kfpbench_api_requests_total{operation=\"GetRun\",code=\"200\"}"), 2);
  EXPECT_EQ(Sample(text, "kfpbench_runs_finished_total{state=\"SUCCEEDED\"}"), 2);
  EXPECT_EQ(Sample(text, "kfpbench_repetition"), 2);
  // The observer's calls of the first repetition (5), none yet in the second.
  EXPECT_EQ(Sample(text, "kfpbench_observer_requests_total{operation=\"ListRuns\"}"), 5);
  EXPECT_EQ(Sample(text, "kfpbench_benchmark_finished"), 0);

  (*live)->EndRepetition(rep1, std::nullopt);
  text = Scrape((*live)->port());
  EXPECT_EQ(Sample(text, "kfpbench_runs_finished_total{state=\"SUCCEEDED\"}"), 4);
  EXPECT_EQ(Sample(text, "kfpbench_runs_created_total"), 4);
  EXPECT_EQ(Sample(text, "kfpbench_benchmark_finished"), 1);
  EXPECT_GE((*live)->scrapes(), 3u);

  int status = 0;
  Scrape((*live)->port(), &status, "/other");
  EXPECT_EQ(status, 404);
  // No scraper: the final wait gives up after its timeout.
  EXPECT_FALSE((*live)->AwaitFinalScrape(milliseconds(50)));
}

TEST(LiveMetrics, BadListenAddressesAreClearErrors) {
  metrics::Recorder recorder(WallClock::now());
  for (const char* bad : {"9464", "127.0.0.1:", ":9464", "127.0.0.1:http", "127.0.0.1:70000"}) {
    auto live = LiveMetrics::Start(bad, recorder);
    ASSERT_FALSE(live.ok()) << bad;
    EXPECT_THAT(live.error().message, HasSubstr("--metrics-listen")) << live.error().message;
  }
  // A port in use is named.
  auto first = LiveMetrics::Start("127.0.0.1:0", recorder);
  ASSERT_TRUE(first.ok());
  std::string taken = "127.0.0.1:" + std::to_string((*first)->port());
  auto second = LiveMetrics::Start(taken, recorder);
  ASSERT_FALSE(second.ok());
  EXPECT_THAT(second.error().message, HasSubstr(taken)) << second.error().message;
}

// Every PromQL expression of the dashboard names only metrics we export.
TEST(GrafanaDashboard, ParsesAndQueriesOnlyExportedMetrics) {
  fs::path path = fs::path(KFPBENCH_SOURCE_DIR) / "deploy" / "grafana" / "kfpbench.json";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  nlohmann::json dashboard = nlohmann::json::parse(in, nullptr, false);
  ASSERT_FALSE(dashboard.is_discarded()) << path << " is not valid JSON";
  ASSERT_TRUE(dashboard.contains("__inputs"));
  EXPECT_EQ(dashboard["__inputs"][0]["name"], "DS_PROMETHEUS");
  auto exported = ExportedMetricNames();
  std::set<std::string> known(exported.begin(), exported.end());
  std::regex metric(R"(\bkfpbench_[a-z_]+)");
  int expressions = 0;
  std::set<std::string> titles;
  for (const auto& panel : dashboard["panels"]) {
    titles.insert(panel.value("title", ""));
    EXPECT_EQ(panel["datasource"]["uid"], "${DS_PROMETHEUS}") << panel.value("title", "");
    for (const auto& target : panel.value("targets", nlohmann::json::array())) {
      std::string expr = target.value("expr", "");
      ASSERT_FALSE(expr.empty()) << panel.value("title", "");
      ++expressions;
      int names = 0;
      for (auto it = std::sregex_iterator(expr.begin(), expr.end(), metric);
           it != std::sregex_iterator(); ++it, ++names) {
        EXPECT_TRUE(known.count(it->str())) << it->str() << " in " << expr;
      }
      EXPECT_GT(names, 0) << expr;
    }
  }
  EXPECT_GE(expressions, 7);
  for (const char* t : {"Request rate", "Error rate", "Latency p50 / p95 / p99", "Runs by state",
                        "Runs in flight"}) {
    EXPECT_TRUE(titles.count(t)) << t;
  }
}

}  // namespace
}  // namespace kfpbench::report
