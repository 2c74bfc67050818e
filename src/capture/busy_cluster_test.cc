// Issue 38 §1: a capture of a busy cluster must plan what was recorded.
// Histories with known truth are made on the embedded backend (stub steps of
// known lognormal times, one 4-CPU node) idle, half busy and saturated,
// captured with the recorded cluster named, and the captured mix simulated
// on that cluster: within 10% of the recorded makespan and run p95 in each.
// On the saturated history the gap from created to started is almost all
// waiting for room, which a low quantile of it (the overhead without the
// cluster) takes for start-up; the fit on the cluster must not.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <thread>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "capture/capture.h"
#include "capture/derive.h"
#include "capture/overhead_fit.h"
#include "capture/test_support.h"
#include "harness/session.h"
#include "sim/config.h"
#include "sim/simulator.h"
#include "util/files.h"
#include "util/ids.h"
#include "util/sanitizers.h"
#include "util/test_support.h"

namespace kfpbench::capture {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

namespace fs = std::filesystem;
using nlohmann::json;

// prep asks 1 CPU, train 2 (recorded_etl_pipeline.yaml): at most two trains
// at once on the node.
constexpr char kCluster[] = R"(
pools:
  - {name: node, cpu: 4, memory: 1Ti, min: 1, max: 1}
autoscaler: {enabled: false}
)";

struct Load {
  const char* name;
  int bursts;
  int burst_size;
  int gap_ms;  // between the starts of bursts
};

// Each run holds 0.6 core-seconds (prep 1 CPU x 100 ms, train 2 x 250 ms) on
// 4 cores: idle runs one at a time, half busy two every 0.6 s (50%
// allocated, trains sometimes queue), saturated eight a second (120% of the
// node: full from the first burst to the end).
const Load kLoads[] = {{"idle", 12, 1, 600}, {"half_busy", 15, 2, 600}, {"saturated", 5, 8, 1000}};

class BusyClusterCaptureTest : public ::testing::TestWithParam<Load> {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kfpbench-busy-" + NewUuid());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Records the load on the embedded backend and captures it into
  // dir_/capture with the recorded cluster named.
  void RecordAndCapture(const Load& load, std::string& overhead_note) {
    harness::TargetOptions production;
    auto& backend = production.embedded.backend;
    backend.executor = "stub";
    backend.stub_durations = {"exec-prep=lognormal:100ms:0.15", "exec-train=lognormal:250ms:0.2"};
    backend.nodes = {engine::NodeSpec("node-0", 4, int64_t{1} << 40)};
    auto session = harness::Session::Open(production);
    ASSERT_TRUE(session.ok()) << session.error().message;
    kfp::Client& client = (*session)->client();
    auto pipeline = client.UploadPipeline(
        "etl", "etl.yaml",
        kfpbench::testing::TestData("capture/testdata/recorded_etl_pipeline.yaml"));
    ASSERT_TRUE(pipeline.ok()) << pipeline.error().message;
    std::vector<std::string> ids;
    const auto start = std::chrono::steady_clock::now();
    for (int b = 0; b < load.bursts; ++b) {
      std::this_thread::sleep_until(start + std::chrono::milliseconds(b * load.gap_ms));
      for (int i = 0; i < load.burst_size; ++i) {
        kfp::RunCreate create;
        create.display_name = std::string("recorded");
        create.pipeline_id = pipeline->pipeline_id;
        auto run = client.CreateRun(create);
        ASSERT_TRUE(run.ok()) << run.error().message;
        ids.push_back(run->run_id);
      }
    }
    ASSERT_EQ(testing::WaitForRunsToEnd(client, ids, std::chrono::seconds(120)).size(), ids.size());
    CaptureOptions options;
    options.out = dir_ / "capture";
    options.since = "1h";
    options.qps = 0;
    auto cluster = sim::ParseCluster(kCluster);
    ASSERT_TRUE(cluster.ok()) << cluster.error().message;
    options.cluster = *cluster;
    auto summary = Capture(client, options);
    ASSERT_TRUE(summary.ok()) << summary.error().message;
    ASSERT_EQ(summary->progress.runs, load.bursts * load.burst_size);
    overhead_note = summary->overhead_note;
  }

  // The median over seeds of the captured mix simulated on the cluster:
  // makespan and run p95, seconds.
  static std::pair<double, double> Simulated(const fs::path& workload_file) {
    auto cluster = sim::ParseCluster(kCluster);
    auto mix = sim::LoadWorkload(workload_file);
    EXPECT_TRUE(mix.ok()) << mix.error().message;
    if (!cluster.ok() || !mix.ok()) return {0, 0};
    constexpr int kSeeds = 21;
    std::vector<double> makespans, p95s;
    for (int seed = 1; seed <= kSeeds; ++seed) {
      sim::WorkloadSpec w = *mix;
      w.seed = static_cast<uint64_t>(seed);
      auto r = sim::Simulate(*cluster, w);
      EXPECT_TRUE(r.ok()) << r.error().message;
      if (!r.ok()) return {0, 0};
      makespans.push_back(ToSeconds(r->makespan));
      p95s.push_back(static_cast<double>(r->run_ms.ValueAtPercentile(95)) / 1e3);
    }
    std::sort(makespans.begin(), makespans.end());
    std::sort(p95s.begin(), p95s.end());
    return {makespans[kSeeds / 2], p95s[kSeeds / 2]};
  }

  fs::path dir_;
};

TEST_P(BusyClusterCaptureTest, SimulatingTheCaptureOnTheRecordedClusterGivesWhatWasRecorded) {
  const Load& load = GetParam();
  std::string note;
  RecordAndCapture(load, note);
  if (HasFatalFailure()) return;
  const fs::path folder = dir_ / "capture";
  json workload = json::parse(ReadSmallFile(folder / kWorkloadFile));
  const double makespan = workload["makespan_seconds"].get<double>();
  const double p95 = workload["run_seconds"]["p95"].get<double>();
  const json& overhead = workload["overhead"];
  ASSERT_TRUE(overhead.contains("seconds")) << overhead.dump();
  EXPECT_THAT(note, HasSubstr("fitted on the recorded cluster")) << note;
  // Recorded on the cluster named: no sign of another.
  EXPECT_THAT(note, Not(HasSubstr("than the one recorded"))) << note;

  auto [sim_makespan, sim_p95] = Simulated(folder / kSimulateDir / "workload.yaml");

  // The same capture without the cluster: the low quantile of the gaps.
  const fs::path plain = dir_ / "plain";
  fs::copy(folder, plain, fs::copy_options::recursive);
  std::string plain_note;
  const auto since = *ParseRfc3339(workload["window"]["since"].get<std::string>());
  const auto until = *ParseRfc3339(workload["window"]["until"].get<std::string>());
  ASSERT_TRUE(Derive(plain, since, until, nullptr, &plain_note).ok());
  EXPECT_THAT(plain_note, HasSubstr("cannot tell")) << plain_note;
  auto [p05_makespan, p05_p95] = Simulated(plain / kSimulateDir / "workload.yaml");

  std::cout << fmt::format(
      "{}: recorded makespan {:.3f} s, run p95 {:.3f} s; gap created->started mean {:.3f} s, "
      "p05 {:.3f} s\n  fitted overhead {:.4f} s: simulated makespan {:.3f} s ({:+.1f}%), p95 "
      "{:.3f} s ({:+.1f}%)\n  p05 overhead: simulated makespan {:.3f} s ({:+.1f}%), p95 "
      "{:.3f} s ({:+.1f}%)\n  {}\n",
      load.name, makespan, p95, overhead["created_to_started_seconds"]["mean"].get<double>(),
      overhead["created_to_started_seconds"]["p05"].get<double>(),
      overhead["seconds"].get<double>(), sim_makespan, 100 * (sim_makespan / makespan - 1), sim_p95,
      100 * (sim_p95 / p95 - 1), p05_makespan, 100 * (p05_makespan / makespan - 1), p05_p95,
      100 * (p05_p95 / p95 - 1), note);
  // Under AddressSanitizer the engine notices its timers late, and more so
  // when it is busy: the recorded history itself is not the same day.
  const double widen = kUnderAddressSanitizer ? 3 : 1;
  EXPECT_NEAR(sim_makespan, makespan, makespan * 0.10 * widen);
  EXPECT_NEAR(sim_p95, p95, p95 * 0.10 * widen);
}

INSTANTIATE_TEST_SUITE_P(Loads, BusyClusterCaptureTest, ::testing::ValuesIn(kLoads),
                         [](const auto& info) { return std::string(info.param.name); });

// The fit's own arithmetic on a cluster where nothing waits: with known
// constant steps and arrivals far apart, the recorded gap is all overhead,
// and the fit finds it; a recorded gap below what the cluster's waits alone
// give is the floor, said so.
TEST(OverheadFit, FindsAKnownOverheadWhenNothingWaitsAndSaysWhenWaitsAloneExceedTheGap) {
  auto cluster = sim::ParseCluster(kCluster);
  ASSERT_TRUE(cluster.ok());
  auto spec = sim::LoadWorkload(fs::path(KFPBENCH_SOURCE_DIR) / "src" / "capture" / "testdata" /
                                "overhead_fit_workload.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  auto idle = FitOverheadOnCluster(*cluster, *spec, 1.5, 5.0);
  ASSERT_TRUE(idle.ok()) << idle.error().message;
  EXPECT_EQ(idle->limit, OverheadFit::Limit::kNone);
  EXPECT_NEAR(idle->overhead, 1.5, 0.01);
  EXPECT_NEAR(idle->waits_alone, 0, 1e-9);
  EXPECT_LE(idle->simulations, 3 * 14);

  auto close = FitOverheadOnCluster(*cluster, *spec, 5.1, 5.0);  // within 5%
  ASSERT_TRUE(close.ok());
  EXPECT_EQ(close->limit, OverheadFit::Limit::kNone);
  EXPECT_EQ(close->overhead, 5.0);

  auto above = FitOverheadOnCluster(*cluster, *spec, 9.0, 5.0);
  ASSERT_TRUE(above.ok());
  EXPECT_EQ(above->limit, OverheadFit::Limit::kCeiling);
  EXPECT_EQ(above->overhead, 5.0);
  EXPECT_THAT(DescribeOverheadFit(*above), HasSubstr("larger than the one recorded"));

  auto none = FitOverheadOnCluster(*cluster, *spec, -1.0, 5.0);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->limit, OverheadFit::Limit::kFloor);
  EXPECT_EQ(none->overhead, 0);
  EXPECT_THAT(DescribeOverheadFit(*none), HasSubstr("smaller than the one recorded"));
}

}  // namespace
}  // namespace kfpbench::capture
