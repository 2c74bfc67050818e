// Issue 25 §4's validation: a "production" history with known truth on the
// embedded backend, captured, then (1) replayed against a fresh embedded
// backend at --time-scale 0.5, which must reproduce the recorded run
// durations (two-sample Kolmogorov-Smirnov) and arrival times, and (2)
// simulated on the recorded cluster, which must predict the recorded makespan
// and p95 run duration within 10%. Steps last 100-250 ms, so the whole test
// takes seconds; nothing here asserts how fast the machine is.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "capture/capture.h"
#include "capture/derive.h"
#include "capture/fit.h"
#include "capture/test_support.h"
#include "harness/benchmark.h"
#include "harness/preflight.h"
#include "harness/replay_steps.h"
#include "results/results_json.h"
#include "sim/config.h"
#include "sim/simulator.h"
#include "util/files.h"
#include "util/ids.h"
#include "util/sanitizers.h"
#include "util/test_support.h"

namespace kfpbench::capture {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

harness::LoadOptions ScaledBy(double time_scale) {
  harness::LoadOptions options;
  options.time_scale = time_scale;
  return options;
}

const std::string kRecordedEtlPipeline =
    kfpbench::testing::TestData("capture/testdata/recorded_etl_pipeline.yaml");

const std::string kRecordedFlakyPipeline =
    kfpbench::testing::TestData("capture/testdata/recorded_flaky_pipeline.yaml");

// The recorded cluster: one 8-CPU node, so bursts of training queue.
constexpr char kReplayCluster[] = R"(
pools:
  - {name: node, cpu: 8, memory: 1Ti, min: 1, max: 1}
autoscaler: {enabled: false}
)";

std::vector<engine::NodeSpec> Nodes() { return {engine::NodeSpec("node-0", 8, int64_t{1} << 40)}; }

// The captured runs: created_at offsets from the first, and durations.
void ReadRecorded(const fs::path& dir, std::vector<double>& offsets,
                  std::vector<double>& durations) {
  std::ifstream in(dir / "capture" / kRunsFile);
  std::optional<WallTime> first;
  for (std::string line; std::getline(in, line);) {
    json run = json::parse(line);
    const WallTime created = *ParseRfc3339(run["created_at"].get<std::string>());
    const WallTime finished = *ParseRfc3339(run["finished_at"].get<std::string>());
    if (!first) first = created;
    offsets.push_back(ToSeconds(created - *first));
    durations.push_back(ToSeconds(finished - created));
  }
}

// One history for the suite, recorded by the first test that needs it.
class ReplayValidationTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("kfpbench-replay-" + NewUuid());
    fs::create_directories(dir_);
  }
  static void TearDownTestSuite() {
    if (!std::getenv("KFPBENCH_KEEP_REPLAY_TEST")) fs::remove_all(dir_);
  }
  void SetUp() override {
    if (!fs::exists(dir_ / "capture" / kManifestFile)) RecordHistory();
  }

  // 40 etl and 20 flaky runs in bursts of 3, 6 and 9, 100 to 600 ms apart,
  // captured into dir_/capture.
  static void RecordHistory() {
    harness::TargetOptions production;
    auto& backend = production.embedded.backend;
    backend.executor = "stub";
    backend.stub_durations = {"exec-prep=lognormal:100ms:0.15", "exec-train=lognormal:250ms:0.2",
                              "exec-flaky=lognormal:150ms:0.15"};
    backend.stub_failures = {"exec-flaky=20%"};
    backend.nodes = Nodes();
    auto session = harness::Session::Open(production);
    ASSERT_TRUE(session.ok()) << session.error().message;
    kfp::Client& client = (*session)->client();
    auto upload = [&](const char* name, const std::string& yaml) {
      auto p = client.UploadPipeline(name, std::string(name) + ".yaml", yaml);
      EXPECT_TRUE(p.ok());
      return p.ok() ? p->pipeline_id : "";
    };
    const std::string etl = upload("etl", kRecordedEtlPipeline),
                      flaky = upload("flaky", kRecordedFlakyPipeline);
    std::vector<std::string> ids;
    int e = 0, f = 0;
    for (int burst = 0; e < 40 || f < 20; ++burst) {
      const int size = 3 * (1 + burst % 3);
      for (int i = 0; i < size; ++i) {
        const bool is_etl = (i % 3 != 2 && e < 40) || f >= 20;
        kfp::RunCreate create;
        // Moved in whole: gcc 12 at -O3 misreads assigning a short literal
        // here as an overlapping copy (-Wrestrict).
        create.display_name = std::string("recorded");
        create.pipeline_id = is_etl ? etl : flaky;
        auto run = client.CreateRun(create);
        ASSERT_TRUE(run.ok()) << run.error().message;
        ids.push_back(run->run_id);
        ++(is_etl ? e : f);
        if (e >= 40 && f >= 20) break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100 + 250 * (burst % 3)));
    }
    ASSERT_EQ(testing::WaitForRunsToEnd(client, ids, std::chrono::seconds(120)).size(), ids.size());
    CaptureOptions options;
    options.out = dir_ / "capture";
    options.since = "1h";
    options.qps = 0;
    auto summary = Capture(client, options);
    ASSERT_TRUE(summary.ok()) << summary.error().message;
    ASSERT_EQ(summary->progress.runs, 60);
  }

  static fs::path dir_;
};

fs::path ReplayValidationTest::dir_;

// `kfpbench run capture/replay.json --time-scale SCALE` against a fresh
// embedded backend, as run_command does it: the replayed runs' durations,
// and how far each was created after its intended start; expects each run to
// have aimed at its recorded offset times the scale.
void Replay(const fs::path& dir, double scale, std::vector<double>& durations,
            std::vector<double>& late) {
  auto file = harness::LoadScenarioFile(dir / "capture" / kReplayFile, ScaledBy(scale));
  ASSERT_TRUE(file.ok()) << file.error().message;
  ASSERT_TRUE(harness::PrepareScenarioFile(*file, {}, "").ok());
  EXPECT_EQ(file->executor, "stub");
  harness::TargetOptions fresh;
  fresh.embedded.backend.nodes = Nodes();
  fresh.embedded.backend.executor = file->executor;
  harness::ApplyReplaySteps(*file, fresh.embedded.backend);
  auto session = harness::Session::Open(fresh);
  ASSERT_TRUE(session.ok()) << session.error().message;
  harness::BenchmarkOptions options;
  options.harness.poll_interval = std::chrono::milliseconds(100);
  const fs::path out = dir / fmt::format("replay-{}", scale);
  options.finish.out_dir = out;
  options.finish.max_failed_runs = 1;  // the flaky step fails as recorded
  std::ostringstream console;
  auto outcome = harness::RunBenchmark(**session, *file, options, console);
  ASSERT_TRUE(outcome.ok()) << outcome.error().message;
  auto results = results::LoadResults(out / "results.json");
  ASSERT_TRUE(results.ok()) << results.error().message;
  EXPECT_EQ(results->time_scale, scale);

  std::vector<double> offsets, recorded;
  ReadRecorded(dir, offsets, recorded);
  ASSERT_EQ(results->runs.size(), offsets.size());
  std::vector<double> intended;
  WallTime start = results->runs.front().intended;
  for (const auto& r : results->runs) start = std::min(start, r.intended);
  for (const auto& r : results->runs) {
    ASSERT_TRUE(r.Finished()) << r.run_id << " " << r.error;
    durations.push_back(ToSeconds(r.RunDuration()));
    intended.push_back(ToSeconds(r.intended - start));
    late.push_back(ToSeconds(r.created - r.intended));
  }
  // Every scenario counts its offsets from the one start: each run aimed at
  // its recorded offset times the scale.
  std::sort(intended.begin(), intended.end());
  std::sort(offsets.begin(), offsets.end());
  for (size_t i = 0; i < offsets.size(); ++i) {
    EXPECT_NEAR(intended[i], offsets[i] * scale, 2e-3) << "arrival " << i;
  }
  std::sort(late.begin(), late.end());
  std::cout << "replay x" << scale << ": created after the intended start, p50 "
            << late[late.size() / 2] * 1e3 << " ms, max " << late.back() * 1e3 << " ms\n";
}

KsTwoSample CompareDurations(const fs::path& dir, double scale, std::vector<double> replayed) {
  std::vector<double> offsets, recorded;
  ReadRecorded(dir, offsets, recorded);
  for (double& d : recorded) d *= scale;
  KsTwoSample ks = TwoSampleKs(recorded, replayed);
  std::cout << "replay x" << scale << ": run durations, two-sample KS D " << ks.d << ", p " << ks.p
            << " (n " << recorded.size() << " and " << replayed.size() << "); recorded median x"
            << scale << " " << Quantiles(recorded)["p50"] << " s, replayed "
            << Quantiles(replayed)["p50"] << " s\n";
  return ks;
}

TEST_F(ReplayValidationTest, AReplayReproducesTheRunDurationsAndArrivals) {
  std::vector<double> durations, late;
  Replay(dir_, 1.0, durations, late);
  if (HasFatalFailure()) return;
  // Created within the harness's start delay of the intended start.
  EXPECT_LT(late.back(), kUnderAddressSanitizer ? 5.0 : 1.0);
  // The replayed durations are not distinguishable from the recorded ones at
  // the 1% level (under AddressSanitizer the engine's timer latency adds a
  // shift of its own).
  KsTwoSample ks = CompareDurations(dir_, 1.0, durations);
  if (!kUnderAddressSanitizer) {
    EXPECT_GT(ks.p, 0.01);
  }
}

// --time-scale 0.5: the same runs at half their offsets, steps half as long.
// The durations are reported, not judged: what does not scale (the engine
// noticing each timer on a loaded machine) weighs twice as much.
TEST_F(ReplayValidationTest, AtHalfTimeEachRunArrivesAtHalfItsOffset) {
  std::vector<double> durations, late;
  Replay(dir_, 0.5, durations, late);
  if (HasFatalFailure()) return;
  EXPECT_LT(late.back(), kUnderAddressSanitizer ? 5.0 : 1.0);
  CompareDurations(dir_, 0.5, durations);
}

TEST_F(ReplayValidationTest, SimulateOnTheCapturePredictsMakespanAndP95) {
  ASSERT_TRUE(fs::exists(dir_ / "capture" / kManifestFile));
  json workload = json::parse(ReadSmallFile(dir_ / "capture" / kWorkloadFile));
  auto cluster = sim::ParseCluster(kReplayCluster);
  ASSERT_TRUE(cluster.ok()) << cluster.error().message;
  auto mix = sim::LoadWorkload(dir_ / "capture" / kSimulateDir / "workload.yaml");
  ASSERT_TRUE(mix.ok()) << mix.error().message;
  EXPECT_EQ(mix->mix.size(), 2u);
  // The prediction is the median over seeds (the step times drawn differ by
  // seed), as plan judges its probes over replications: one run of 60 runs
  // has a p95 that moves 10% from seed to seed.
  constexpr int kSeeds = 21;
  std::vector<double> makespans, p95s;
  for (int seed = 1; seed <= kSeeds; ++seed) {
    sim::WorkloadSpec w = *mix;
    w.seed = static_cast<uint64_t>(seed);
    auto r = sim::Simulate(*cluster, w);
    ASSERT_TRUE(r.ok()) << r.error().message;
    ASSERT_EQ(r->runs, 60);
    makespans.push_back(ToSeconds(r->makespan));
    p95s.push_back(static_cast<double>(r->run_ms.ValueAtPercentile(95)) / 1e3);
  }
  std::sort(makespans.begin(), makespans.end());
  std::sort(p95s.begin(), p95s.end());
  const double makespan = workload["makespan_seconds"].get<double>();
  const double p95 = workload["run_seconds"]["p95"].get<double>();
  const double sim_makespan = makespans[kSeeds / 2], sim_p95 = p95s[kSeeds / 2];
  std::cout << "simulate (median of " << kSeeds << " seeds): makespan " << sim_makespan
            << " s (seeds " << makespans.front() << " to " << makespans.back() << "; recorded "
            << makespan << "), p95 run " << sim_p95 << " s (seeds " << p95s.front() << " to "
            << p95s.back() << "; recorded " << p95 << ")\n";
  const double widen = kUnderAddressSanitizer ? 3 : 1;
  EXPECT_NEAR(sim_makespan, makespan, makespan * 0.10 * widen);
  EXPECT_NEAR(sim_p95, p95, p95 * 0.10 * widen);
}

}  // namespace
}  // namespace kfpbench::capture
