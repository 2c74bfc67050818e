// End-to-end tests of the results features through the real binary: live
// metrics scraped by a real Prometheus, --notify, --repeat, compare --notify.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_test_support.h"
#include "http/client.h"
#include "http/server.h"
#include "http/test_support.h"
#include "http/url.h"
#include "report/reporter.h"
#include "report/test_support.h"
#include "results/test_support.h"
#include "util/ids.h"

namespace kfpbench::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace kfpbench::testing;  // Kfpbench(), ScratchDirTest, ReadJson, ...

// A port nothing listens on right now (bound, then released).
uint16_t FreePort() {
  http::ServerOptions o;
  o.handler = [](const http::Request&) { return http::Response::Text(200, ""); };
  http::Server s(o);
  if (!s.Start().ok()) return 0;
  uint16_t port = s.port();
  s.Stop();
  return port;
}

Result<http::Response> Get(uint16_t port, const std::string& target) {
  http::ClientOptions o;
  o.base = *http::ParseUrl("http://127.0.0.1:" + std::to_string(port));
  o.request_timeout = std::chrono::seconds(20);
  http::Client client(o);
  return client.Send(http::Method::kGet, target);
}

// A local webhook keeping what it receives.
using Receiver = http::testing::RecordingServer;
constexpr const char* kHookPath = "/hooks/team/secret-path";

class ResultsCliTest : public ScratchDirTest {
 protected:
  // One short PIPELINE_RUN scenario under these thresholds.
  std::string ThresholdsFile(const std::string& thresholds) {
    return Write("s.json", R"({"thresholds": )" + thresholds + R"(,
      "scenarios": [{"mode": "PIPELINE_RUN", "runTime": "1s", "numTimes": 1,
                     "pipelineFileName": "sleep_chain.yaml", "params": {"duration": "50ms"}}]})");
  }
  // Runs `file` on stub steps, posting failed thresholds to `receiver`.
  Outcome RunNotifying(const std::string& file, Receiver& receiver) {
    return Kfpbench("run " + file + " --pipelines " + ExamplePipelines() +
                    " --executor stub --stub-duration constant:50ms --poll-interval 50ms --quiet" +
                    " --notify " + receiver.url(kHookPath) + " --out " + (dir_ / "out").string());
  }
  nlohmann::json Results(const fs::path& dir) {
    std::ifstream in(dir / "results.json");
    return nlohmann::json::parse(in, nullptr, false);
  }
};

// A real Prometheus, started for one test and stopped at its end.
class Prometheus {
 public:
  Prometheus(const fs::path& dir, uint16_t scrape_port) : dir_(dir) {
    port_ = FreePort();
    std::ofstream(dir / "prometheus.yml")
        << "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
        << "scrape_configs:\n  - job_name: kfpbench\n    static_configs:\n"
        << "      - targets: ['127.0.0.1:" << scrape_port << "']\n";
    std::string config = "--config.file=" + (dir / "prometheus.yml").string();
    std::string storage = "--storage.tsdb.path=" + (dir / "tsdb").string();
    std::string listen = "--web.listen-address=127.0.0.1:" + std::to_string(port_);
    std::string log = (dir / "prometheus.log").string();
    pid_ = fork();
    if (pid_ == 0) {
      int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, 1);
      dup2(fd, 2);
      execl("/usr/bin/prometheus", "prometheus", config.c_str(), storage.c_str(), listen.c_str(),
            static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  ~Prometheus() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status = 0;
      for (int i = 0; i < 100 && waitpid(pid_, &status, WNOHANG) == 0; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      if (waitpid(pid_, &status, WNOHANG) == 0) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
      }
    }
  }
  bool WaitReady(std::chrono::seconds timeout) {
    auto until = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < until) {
      auto r = Get(port_, "/-/ready");
      if (r.ok() && r->status == 200) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return false;
  }
  // The instant vector of `promql`, as a JSON array of {metric, value}.
  nlohmann::json Query(const std::string& promql) {
    auto r = Get(port_, "/api/v1/query?query=" + http::PercentEncode(promql));
    if (!r.ok() || r->status != 200) return nlohmann::json();
    auto j = nlohmann::json::parse(r->body, nullptr, false);
    if (j.is_discarded() || j["status"] != "success") return nlohmann::json();
    return j["data"]["result"];
  }
  std::string Log() const {
    std::ifstream in(dir_ / "prometheus.log");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

 private:
  fs::path dir_;
  uint16_t port_ = 0;
  pid_t pid_ = -1;
};

TEST_F(ResultsCliTest, PrometheusScrapesALiveRunAndCountsMatchResultsJson) {
  if (!fs::exists("/usr/bin/prometheus")) GTEST_SKIP() << "/usr/bin/prometheus not installed";
  uint16_t metrics_port = FreePort();
  ASSERT_NE(metrics_port, 0);
  Prometheus prometheus(dir_, metrics_port);
  ASSERT_TRUE(prometheus.WaitReady(std::chrono::seconds(60))) << prometheus.Log();
  std::string file = Write("s.json", R"([
    {"mode": "PIPELINE_RUN", "runTime": "6s", "numTimes": 2,
     "pipelineFileName": "sleep_chain.yaml", "params": {"duration": "100ms"}}
  ])");
  fs::path out = dir_ / "out";
  // --keep: clean-up calls would count live but not in results.json.
  auto r = Kfpbench("run " + file + " --pipelines " + ExamplePipelines() +
                    " --executor stub --stub-duration constant:300ms --poll-interval 100ms"
                    " --keep --quiet --metrics-listen 127.0.0.1:" +
                    std::to_string(metrics_port) + " --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, Not(HasSubstr("no scrape of the final numbers"))) << r.output;
  auto j = Results(out);
  ASSERT_FALSE(j.is_discarded());

  // The exporter waited for a scrape of its final numbers: Prometheus has
  // exactly what results.json counted. last_over_time: once kfpbench exits,
  // the next failed scrape marks its series stale for instant queries.
  std::map<std::string, double> scraped;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  do {
    scraped.clear();
    auto counts =
        prometheus.Query("sum by (operation) (last_over_time(kfpbench_api_requests_total[10m]))");
    for (const auto& s : counts) {
      scraped[s["metric"]["operation"]] = std::stod(s["value"][1].get<std::string>());
    }
    if (scraped["CreateRun"] == j["operations"]["CreateRun"]["count"].get<double>()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  } while (std::chrono::steady_clock::now() < deadline);
  // The workload's calls; the run follower's GetRun and ListRuns are
  // results.json's "observer", not exported live.
  for (const char* op : {"CreateRun"}) {
    ASSERT_TRUE(j["operations"].contains(op)) << op;
    EXPECT_EQ(scraped[op], j["operations"][op]["count"].get<double>()) << op << prometheus.Log();
  }
  auto finished = prometheus.Query(
      "sum(last_over_time(kfpbench_runs_finished_total{state=\"SUCCEEDED\"}[10m]))");
  ASSERT_TRUE(finished.is_array() && finished.size() == 1) << finished;
  EXPECT_EQ(std::stod(finished[0]["value"][1].get<std::string>()),
            j["runs"]["by_state"]["SUCCEEDED"].get<double>());
  auto p95 = prometheus.Query(
      "histogram_quantile(0.95, sum by (le) "
      "(last_over_time(kfpbench_api_request_duration_seconds_bucket{operation=\"CreateRun\"}[10m]))"
      ")");
  ASSERT_TRUE(p95.is_array() && p95.size() == 1) << p95;
  double p95_s = std::stod(p95[0]["value"][1].get<std::string>());
  EXPECT_GT(p95_s, 0);
  EXPECT_LT(p95_s, 60);
}

TEST_F(ResultsCliTest, FailedThresholdsArePostedAndTheExitCodeStays99) {
  std::string file =
      ThresholdsFile(R"({"GetRun": ["p50 < 1us"], "CreateRun": ["error_rate < 1%"]})");
  Receiver receiver;
  auto r = RunNotifying(file, receiver);
  EXPECT_EQ(r.exit_code, 99) << r.output;
  auto bodies = receiver.bodies();
  ASSERT_EQ(bodies.size(), 1u) << r.output;
  auto body = nlohmann::json::parse(bodies[0]);
  EXPECT_EQ(body["event"], "thresholds_failed");
  ASSERT_EQ(body["failures"].size(), 1u) << body;
  EXPECT_EQ(body["failures"][0]["metric"], "GetRun");
  EXPECT_EQ(body["failures"][0]["threshold"], "p50 < 1us");
  EXPECT_THAT(body["text"].get<std::string>(), HasSubstr("1 of 2 threshold(s) failed"));
  EXPECT_EQ(body["results"], ((dir_ / "out") / "results.json").string());
  EXPECT_EQ(body["scenario"], file);
  EXPECT_THAT(r.output, Not(HasSubstr("secret-path"))) << r.output;

  // A webhook that cannot be reached is reported, and the exit code is the thresholds'.
  auto unreachable =
      Kfpbench("run " + file + " --pipelines " + ExamplePipelines() +
               " --executor stub --stub-duration constant:50ms --quiet" +
               " --notify http://127.0.0.1:1/hooks/secret-path --out " + (dir_ / "out2").string());
  EXPECT_EQ(unreachable.exit_code, 99) << unreachable.output;
  EXPECT_THAT(unreachable.output, HasSubstr("--notify: cannot post to http://127.0.0.1:1"))
      << unreachable.output;
  EXPECT_THAT(unreachable.output, Not(HasSubstr("secret-path"))) << unreachable.output;
}

TEST_F(ResultsCliTest, NothingIsPostedWhenThresholdsPass) {
  std::string file = ThresholdsFile(R"({"CreateRun": ["p50 < 1h"]})");
  Receiver receiver;
  auto r = RunNotifying(file, receiver);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(receiver.bodies().empty());
  auto bad = Kfpbench("run " + file + " --pipelines " + ExamplePipelines() +
                      " --notify ftp://x/secret-path --out " + (dir_ / "o2").string());
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_THAT(bad.output, HasSubstr("--notify")) << bad.output;
  EXPECT_THAT(bad.output, Not(HasSubstr("secret-path"))) << bad.output;
  auto listen = Kfpbench("run " + file + " --pipelines " + ExamplePipelines() +
                         " --metrics-listen nonsense --out " + (dir_ / "o3").string());
  EXPECT_EQ(listen.exit_code, 2) << listen.output;
  EXPECT_THAT(listen.output, HasSubstr("--metrics-listen")) << listen.output;
}

TEST_F(ResultsCliTest, RepeatInterleavesRepetitionsAndCompareTestsOverThem) {
  // Two scenarios: every repetition runs both (A1 B1 A2 B2 A3 B3).
  std::string file = Write("s.json", R"([
    {"mode": "PIPELINE_RUN", "runTime": "1s", "numTimes": 1,
     "pipelineFileName": "sleep_chain.yaml", "params": {"duration": "50ms"}},
    {"mode": "RANDOM_GETS", "runTime": "1s", "concurrency": 1}
  ])");
  fs::path out = dir_ / "out";
  auto r = Kfpbench("run " + file + " --pipelines " + ExamplePipelines() +
                    " --executor stub --stub-duration constant:50ms --poll-interval 50ms --quiet" +
                    " --repeat 3 --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto combined = Results(out);
  ASSERT_FALSE(combined.is_discarded());
  ASSERT_EQ(combined["repetitions"].size(), 3u);
  double creates = 0, lists = 0;
  int runs = 0;
  std::string previous_finish;
  for (int k = 1; k <= 3; ++k) {
    fs::path rep = out / fmt::format("rep-{}", k);
    auto j = Results(rep);
    ASSERT_FALSE(j.is_discarded()) << rep;
    EXPECT_TRUE(fs::exists(rep / "report.html"));
    // Both scenarios ran in every repetition.
    ASSERT_TRUE(j["operations"].contains("CreateRun")) << k;
    ASSERT_TRUE(j["operations"].contains("ListRuns")) << k;
    creates += j["operations"]["CreateRun"]["count"].get<double>();
    lists += j["operations"]["ListRuns"]["count"].get<double>();
    runs += j["runs"]["count"].get<int>();
    // One after the other.
    if (!previous_finish.empty()) {
      EXPECT_GE(j["started_at"].get<std::string>(), previous_finish);
    }
    previous_finish = j["finished_at"];
    EXPECT_EQ(combined["repetitions"][k - 1]["started_at"], j["started_at"]);
  }
  // The combined histograms are the exact merge.
  EXPECT_EQ(combined["operations"]["CreateRun"]["count"].get<double>(), creates);
  EXPECT_EQ(combined["operations"]["ListRuns"]["count"].get<double>(), lists);
  EXPECT_EQ(combined["runs"]["count"].get<int>(), runs);

  // compare reads the combined folder: the calls of its 3 repetitions, pooled
  // as they are alike; a side against itself passes, or says it cannot tell.
  auto c = Kfpbench("compare " + out.string() + " " + out.string() + " --format json");
  auto cj = nlohmann::json::parse(c.output, nullptr, false);
  ASSERT_FALSE(cj.is_discarded()) << c.output;
  EXPECT_EQ(c.exit_code, cj["inconclusive"] == true ? 3 : 0) << c.output;
  EXPECT_EQ(cj["baseline_repetitions"], 3);
  bool tested = false;
  for (const auto& m : cj["changes"]) {
    if (m["metric"] == "ListRuns" && m["stat"] == "p95") {
      // The runs stored grow from one repetition to the next, and ListRuns
      // with them: its repetitions may differ, and then repetition k of one
      // side is set against repetition k of the other, as a block.
      if (m["repetitions_differ"] == true) {
        EXPECT_EQ(m["sample"], "blocks");
        EXPECT_EQ(m["n_baseline"], 3);
      } else {
        EXPECT_EQ(m["sample"], "calls");
        EXPECT_EQ(m["n_baseline"], lists);
      }
      tested = true;
    }
  }
  EXPECT_TRUE(tested) << c.output;
  auto text = Kfpbench("compare " + out.string() + " " + out.string());
  EXPECT_THAT(text.output, HasSubstr("baseline: 3 repetition(s); candidate: 3")) << text.output;
}

TEST_F(ResultsCliTest, CompareNotifiesOnASignificantRegressionOnly) {
  for (int i = 0; i < 6; ++i) {
    for (auto [side, scale] : {std::pair{"base", 1.0}, std::pair{"cand", 1.5}}) {
      fs::path d = dir_ / side / fmt::format("r{}", i);
      fs::create_directories(d);
      auto results = results::testing::SyntheticResults(
          static_cast<uint32_t>(i + (scale > 1 ? 100 : 0)), 10, 6, scale);
      ASSERT_TRUE(report::JsonReporter(d / "results.json").Report(results).ok());
    }
  }
  Receiver receiver;
  auto regressed = Kfpbench("compare " + (dir_ / "base").string() + " " + (dir_ / "cand").string() +
                            " --notify " + receiver.url(kHookPath));
  EXPECT_EQ(regressed.exit_code, 1) << regressed.output;
  auto bodies = receiver.bodies();
  ASSERT_EQ(bodies.size(), 1u) << regressed.output;
  auto body = nlohmann::json::parse(bodies[0]);
  EXPECT_EQ(body["event"], "regression");
  EXPECT_FALSE(body["failures"].empty());
  EXPECT_EQ(body["baseline"], (dir_ / "base").string());

  // The scenario's thresholds are the gate, and 36 runs a side cannot test
  // the p99 of run_duration one of them names: no regression, and no pass
  // either (exit 3, said on the console), so nothing is posted.
  auto same = Kfpbench("compare " + (dir_ / "base").string() + " " + (dir_ / "base").string() +
                       " --notify " + receiver.url(kHookPath));
  EXPECT_EQ(same.exit_code, 3) << same.output;
  EXPECT_THAT(same.output,
              HasSubstr("INCONCLUSIVE: run_duration:p99 (under 500 values a side) is named "
                        "by the gate but was not tested"))
      << same.output;
  EXPECT_EQ(receiver.bodies().size(), 1u);
  auto lenient = Kfpbench("compare " + (dir_ / "base").string() + " " + (dir_ / "base").string() +
                          " --metric GetRun --min-effect 100%");
  EXPECT_EQ(lenient.exit_code, 0) << lenient.output;
}

// Issue 29, end to end: two results folders of `run --repeat 3`, runs slowed
// from 900 ms to 1.35 s. `compare` once said "no significant change" on every
// row, exited 0 and counted 1 repetition a side; now it reads the 3, tests
// the 60 runs a side and fails (exit 1). Repetitions that differ unlike on
// the two sides leave 3 blocks that cannot show 5%: exit 3, the power said.
TEST_F(ResultsCliTest, CompareCatchesASlowdownRepeatedThreeTimesOrSaysItCannot) {
  auto write = [this](const std::string& name, const results::BenchmarkResults& r) {
    fs::path d = dir_ / name;
    fs::create_directories(d);
    EXPECT_TRUE(report::JsonReporter(d / "results.json").Report(r).ok());
    return d.string();
  };
  std::string base = write("base", testing::RepeatedRuns(1, 900));
  std::string slower = write("slower", testing::RepeatedRuns(2, 1350));
  auto caught = Kfpbench("compare " + base + " " + slower);
  EXPECT_EQ(caught.exit_code, 1) << caught.output;
  EXPECT_THAT(caught.output, HasSubstr("baseline: 3 repetition(s); candidate: 3")) << caught.output;
  EXPECT_THAT(caught.output, HasSubstr("regressed (FAIL)")) << caught.output;
  EXPECT_THAT(caught.output, HasSubstr("verdict: REGRESSION")) << caught.output;
  EXPECT_THAT(caught.output, Not(HasSubstr("no significant change"))) << caught.output;

  std::string base_apart = write("base-apart", testing::RepeatedRuns(1, 900, {0.8, 1.0, 1.25}));
  std::string slower_apart =
      write("slower-apart", testing::RepeatedRuns(2, 1350, {1.25, 0.8, 1.0}));
  auto unsure = Kfpbench("compare " + base_apart + " " + slower_apart);
  EXPECT_EQ(unsure.exit_code, 3) << unsure.output;
  EXPECT_THAT(unsure.output,
              HasSubstr("INCONCLUSIVE: run_duration cannot detect a 5% change with these "
                        "samples (3 vs 3 blocks, as the repetitions differ): the smallest "
                        "it detects is +"))
      << unsure.output;
  EXPECT_THAT(unsure.output, HasSubstr("verdict: INCONCLUSIVE")) << unsure.output;
}

TEST_F(ResultsCliTest, HistoryTabulatesAndFlagsDriftAcrossResultsFolders) {
  std::string dirs;
  for (int i = 0; i < 8; ++i) {
    fs::path d = dir_ / fmt::format("night-{}", i);
    fs::create_directories(d);
    auto results =
        results::testing::SyntheticResults(static_cast<uint32_t>(i), 10, 6, 1 + 0.05 * i);
    results.started += std::chrono::hours(24 * i);
    results.finished += std::chrono::hours(24 * i);
    ASSERT_TRUE(report::JsonReporter(d / "results.json").Report(results).ok());
    dirs = d.string() + " " + dirs;  // given newest first
  }
  // --csv takes a folder, as report's does.
  fs::path html = dir_ / "history.html", csv_dir = dir_ / "tables", csv = csv_dir / "history.csv";
  auto r = Kfpbench("history " + dirs + "--metric GetRun --html " + html.string() + " --csv " +
                    csv_dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("GetRun across 8 result(s)")) << r.output;
  EXPECT_THAT(r.output, HasSubstr("drifting up")) << r.output;
  EXPECT_LT(r.output.find("night-0"), r.output.find("night-7")) << "sorted by date";
  EXPECT_TRUE(fs::exists(html));
  std::ifstream in(csv);
  std::string header;
  std::getline(in, header);
  EXPECT_EQ(header.rfind("index,source,started_at", 0), 0u) << header;

  auto json = Kfpbench("history " + dirs + "--metric GetRun --format json");
  ASSERT_EQ(json.exit_code, 0) << json.output;
  auto j = nlohmann::json::parse(json.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << json.output;
  EXPECT_EQ(j["points"].size(), 8u);

  auto markdown = Kfpbench("history " + dirs + "--metric GetRun --format markdown");
  ASSERT_EQ(markdown.exit_code, 0) << markdown.output;
  EXPECT_THAT(markdown.output, HasSubstr("| # | started | version |")) << markdown.output;
  EXPECT_THAT(markdown.output, HasSubstr("**drifting up**")) << markdown.output;

  auto bad = Kfpbench("history " + dirs + "--metric Nope");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_THAT(bad.output, HasSubstr("--metric Nope")) << bad.output;
  auto missing = Kfpbench("history " + (dir_ / "absent").string());
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_THAT(missing.output, HasSubstr("absent")) << missing.output;
}

}  // namespace
}  // namespace kfpbench::cli
