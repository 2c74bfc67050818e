// The simulator against the real thing: calibrate from a measured
// embedded-backend run at low load (stub executor, real engine, real HTTP),
// predict makespan and p50/p95 run duration at 4x and 16x the arrival rate on
// the same node, run those loads for real, and require each prediction to be
// within 15%. About 50 s of wall time.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "metrics/histogram.h"
#include "sim/calibrate.h"
#include "sim/simulator.h"
#include "sim/test_support.h"

namespace kfpbench::sim {
namespace {

struct Measured {
  int64_t runs = 0;
  double makespan = 0, p50 = 0, p95 = 0;
};

std::filesystem::path Binary() { return std::filesystem::path(KFPBENCH_BINARY_DIR) / "kfpbench"; }

// Runs `rate_per_min` arrivals for 10 s on one 2-CPU, 4Gi node.
Result<std::filesystem::path> RunForReal(const std::filesystem::path& dir, int rate_per_min) {
  std::filesystem::path scenario = dir / fmt::format("rate{}.json", rate_per_min);
  std::ofstream(scenario) << fmt::format(
      R"([{{"mode": "PIPELINE_RUN", "startTime": 0, "runTime": "10s", "rate": {},
          "pipelineFileName": "{}"}}])",
      rate_per_min, (testing::CapacityExamples() / "six_steps.yaml").string());
  std::filesystem::path out = dir / fmt::format("out{}", rate_per_min);
  std::string cmd = fmt::format(
      "{} run {} --executor stub --stub-duration constant:500ms --nodes 1 --node-cpu 2 "
      "--node-memory 4Gi --poll-interval 100ms --quiet --out {} > {} 2>&1",
      Binary().string(), scenario.string(), out.string(), (dir / "log.txt").string());
  if (std::system(cmd.c_str()) != 0) return Error{"failed: " + cmd};
  return out;
}

Measured Measure(const std::filesystem::path& out) {
  std::ifstream in(out / "results.json");
  auto j = nlohmann::json::parse(in);
  metrics::Histogram h;
  WallTime first = WallTime::max(), last{};
  Measured m;
  for (const auto& r : j["runs"]["records"]) {
    auto c = ParseRfc3339(r["created_at"].get<std::string>());
    auto f = ParseRfc3339(r["finished_at"].get<std::string>());
    if (!c.ok() || !f.ok()) continue;
    first = std::min(first, *c);
    last = std::max(last, *f);
    h.Record(std::chrono::duration_cast<std::chrono::milliseconds>(*f - *c).count());
    ++m.runs;
  }
  m.makespan = ToSeconds(last - first);
  m.p50 = h.ValueAtPercentile(50) / 1000.0;
  m.p95 = h.ValueAtPercentile(95) / 1000.0;
  return m;
}

TEST(Validation, PredictsFourAndSixteenTimesTheLoadWithin15Percent) {
  if (!std::filesystem::exists(Binary())) GTEST_SKIP() << "no " << Binary();
  auto dir =
      std::filesystem::temp_directory_path() / fmt::format("kfpbench_validation_{}", ::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);

  // Low load: 6 runs a minute; the node (two 1-CPU tasks at once) is idle most of the time.
  auto low = RunForReal(dir, 6);
  ASSERT_TRUE(low.ok()) << low.error().message;
  auto spec = testing::SixSteps();
  auto cal = CalibrateFile(*low, spec.get());
  ASSERT_TRUE(cal.ok()) << cal.error().message;

  ClusterSpec cluster = testing::FixedCluster(1, 2, int64_t{4} << 30);
  std::string table =
      "| load | runs | metric | measured | predicted | error |\n|---|---|---|---|---|---|\n";
  for (int factor : {4, 16}) {
    int rate = 6 * factor;
    auto out = RunForReal(dir, rate);
    ASSERT_TRUE(out.ok()) << out.error().message;
    Measured m = Measure(*out);
    ASSERT_GT(m.runs, 0);
    WorkloadSpec w;
    w.pipeline = spec;
    w.runs = m.runs;
    w.arrival_kind = WorkloadSpec::ArrivalKind::kRate;
    w.rate_per_second = rate / 60.0;
    w.steps = cal->models;
    auto p = Simulate(cluster, w);
    ASSERT_TRUE(p.ok()) << p.error().message;
    double pm = ToSeconds(p->makespan);
    double p50 = p->run_ms.ValueAtPercentile(50) / 1000.0;
    double p95 = p->run_ms.ValueAtPercentile(95) / 1000.0;
    for (auto [name, measured, predicted] :
         {std::tuple{"makespan", m.makespan, pm}, std::tuple{"p50", m.p50, p50},
          std::tuple{"p95", m.p95, p95}}) {
      double err = (predicted - measured) / measured;
      table += fmt::format("| {}x ({}/min) | {} | {} | {:.2f}s | {:.2f}s | {:+.1f}% |\n", factor,
                           rate, m.runs, name, measured, predicted, err * 100);
      EXPECT_LT(std::abs(err), 0.15) << factor << "x " << name << ": measured " << measured
                                     << "s, predicted " << predicted << "s";
    }
  }
  std::cout << table;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kfpbench::sim
