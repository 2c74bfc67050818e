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

// A shared bottleneck fitted, not given: the embedded backend's artifact
// store limited for real (--artifact-bandwidth 4Mi; each of a run's three
// trainers uploads 1Mi after its 300 ms, so a run offers 0.75 s of the link)
// on eight 4-CPU nodes, open loop for 12 s at four rates. `kfpbench
// calibrate` fits the bandwidth from the lightest (10/min) and a saturated
// level (120/min, 150% offered); `kfpbench simulate` with that calibration
// then predicts 90/min (113%) and 180/min (225%), and each prediction of
// makespan and p95 run duration must be within 10% of the real run. About
// 80 s of wall time.
TEST(Validation, FitsTheArtifactStoreFromTwoLoadsAndPredictsTwoMoreWithin10Percent) {
  if (!std::filesystem::exists(Binary())) GTEST_SKIP() << "no " << Binary();
  auto dir = std::filesystem::temp_directory_path() /
             fmt::format("kfpbench_shared_validation_{}", ::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string cluster = (testing::CapacityExamples() / "cluster_loopback.yaml").string();
  const std::string pipeline = (testing::CapacityExamples() / "six_steps.yaml").string();
  auto shell = [&](const std::string& cmd) {
    return std::system((cmd + " >> " + (dir / "log.txt").string() + " 2>&1").c_str());
  };
  auto run = [&](int rate_per_min) {
    std::filesystem::path scenario = dir / fmt::format("rate{}.json", rate_per_min);
    std::ofstream(scenario) << fmt::format(
        R"([{{"mode": "PIPELINE_RUN", "startTime": 0, "runTime": "12s", "rate": {},
            "pipelineFileName": "{}"}}])",
        rate_per_min, pipeline);
    std::filesystem::path out = dir / fmt::format("rate{}", rate_per_min);
    int rc = shell(fmt::format(
        "{} run {} --executor stub --stub-duration constant:300ms --stub-artifact-bytes "
        "exec-train=1Mi --artifact-bandwidth 4Mi --cluster {} --poll-interval 100ms --quiet "
        "--out {}",
        Binary().string(), scenario.string(), cluster, out.string()));
    EXPECT_EQ(rc, 0) << "run at " << rate_per_min << "/min; see " << dir / "log.txt";
    return out;
  };
  auto low = run(10), high = run(120);
  std::filesystem::path calibration = dir / "calibration.json";
  ASSERT_EQ(shell(fmt::format("{} calibrate {} {} --pipeline {} --cluster {} --artifact-bytes "
                              "exec-train=1Mi --out {}",
                              Binary().string(), low.string(), high.string(), pipeline, cluster,
                              calibration.string())),
            0);
  auto fitted = nlohmann::json::parse(std::ifstream(calibration));
  ASSERT_TRUE(fitted.contains("artifactStore")) << fitted.dump(2);
  const double bandwidth = fitted["artifactStore"]["bandwidth"].get<double>();
  EXPECT_NEAR(bandwidth / (4 << 20), 1.0, 0.1);

  std::string table = fmt::format(
      "fitted bandwidth: {:.2f} MiB/s (the real limit: 4 MiB/s)\n"
      "| load | runs | metric | measured | predicted | error |\n"
      "|---|---|---|---|---|---|\n",
      bandwidth / (1 << 20));
  for (int rate : {90, 180}) {
    Measured m = Measure(run(rate));
    ASSERT_GT(m.runs, 0);
    std::filesystem::path workload = dir / fmt::format("workload{}.yaml", rate);
    std::ofstream(workload) << fmt::format(
        "pipeline: {}\nruns: {}\narrivals: {{kind: rate, ratePerSecond: {}}}\ncalibration: {}\n",
        pipeline, m.runs, rate / 60.0, calibration.string());
    std::filesystem::path sim_out = dir / fmt::format("sim{}.json", rate);
    ASSERT_EQ(shell(fmt::format("{} simulate {} {} --quiet --out {}", Binary().string(), cluster,
                                workload.string(), sim_out.string())),
              0);
    auto p = nlohmann::json::parse(std::ifstream(sim_out));
    const double pm = p["makespan_seconds"].get<double>();
    const double p95 = p["run_duration_seconds"]["p95"].get<double>();
    for (auto [name, measured, predicted] :
         {std::tuple{"makespan", m.makespan, pm}, std::tuple{"p95 run", m.p95, p95}}) {
      double err = (predicted - measured) / measured;
      table += fmt::format("| {}/min | {} | {} | {:.2f}s | {:.2f}s | {:+.1f}% |\n", rate, m.runs,
                           name, measured, predicted, err * 100);
      EXPECT_LT(std::abs(err), 0.10) << rate << "/min " << name << ": measured " << measured
                                     << "s, predicted " << predicted << "s";
    }
  }
  std::cout << table;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kfpbench::sim
