#include "harness/growth_fill.h"

#include <atomic>

#include <gtest/gtest.h>

#include "harness/e2e_support.h"
#include "http/client.h"
#include "http/url.h"
#include "server/backend.h"
#include "server/test_support.h"

namespace kfpbench::harness {
namespace {

// The embedded backend with instant stub steps, over real HTTP.
class GrowthFillTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server::ServeOptions so;
    so.port = 0;
    so.backend.executor = "stub";
    so.backend.stub_durations = {"constant:1ms"};
    auto served = server::testing::ServeWithClient(so);
    ASSERT_TRUE(served.ok()) << served.error().message;
    backend_ = std::move(*served);
    plan_.prefix = "growth-test";
    plan_.pipeline_text = testing::ReadText(std::string(KFPBENCH_SOURCE_DIR) +
                                            "/examples/pipelines/growth_tiny.yaml");
    ASSERT_FALSE(plan_.pipeline_text.empty());
    plan_.concurrency = 4;
    plan_.runs_per_experiment = 10;
    plan_.runs_per_pipeline = 25;
    plan_.versions_per_pipeline = 2;
  }
  void TearDown() override { backend_ = {}; }
  StoredCounts Stored() {
    auto counts = CountStored(*backend_.client);
    EXPECT_TRUE(counts.ok()) << counts.error().message;
    return counts.ok() ? *counts : StoredCounts{};
  }
  int64_t RunsIn(const std::string& experiment_id) {
    kfp::ListOptions options;
    options.page_size = 1;
    options.experiment_id = experiment_id;
    auto page = backend_.client->ListRunIds(options);
    EXPECT_TRUE(page.ok()) << page.error().message;
    return page.ok() ? page->total_size : -1;
  }

  server::testing::ServedBackend backend_;
  FillPlan plan_;
};

TEST_F(GrowthFillTest, FillsToTheLevelInTheStatedProportions) {
  const int64_t experiments_before = Stored().experiments;  // KFP's Default, if any
  auto fill = FillTo(*backend_.client, plan_, 60, [] { return false; });
  ASSERT_TRUE(fill.ok()) << fill.error().message;
  EXPECT_FALSE(fill->stopped);
  EXPECT_EQ(fill->runs_created, 60);
  EXPECT_EQ(fill->experiments_created, 6);  // 10 runs each
  EXPECT_EQ(fill->pipelines_created, 3);    // 25 runs each
  EXPECT_EQ(fill->versions_created, 3);     // a second version of each
  EXPECT_EQ(fill->failures, 0);
  EXPECT_GT(fill->seconds, 0);
  auto stored = Stored();
  EXPECT_EQ(stored.runs, 60);
  EXPECT_EQ(stored.experiments, experiments_before + 6);
  EXPECT_EQ(stored.pipelines, 3);
  auto objects = FindFill(*backend_.client, plan_.prefix);
  ASSERT_TRUE(objects.ok()) << objects.error().message;
  ASSERT_EQ(objects->experiment_ids.size(), 6u);
  for (const auto& id : objects->experiment_ids) EXPECT_EQ(RunsIn(id), 10);
  EXPECT_EQ(objects->pipeline_versions.size(), 3u);
  // A level already reached creates nothing.
  auto again = FillTo(*backend_.client, plan_, 60, [] { return false; });
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->runs_created + again->experiments_created + again->pipelines_created, 0);
  auto settled =
      Settle(*backend_.client, WallClock::now() + std::chrono::seconds(30), [] { return false; });
  ASSERT_TRUE(settled.ok()) << settled.error().message;
  EXPECT_EQ(*settled, 0);
}

TEST_F(GrowthFillTest, AnInterruptedFillResumesFromWhatTheTargetStores) {
  std::atomic<int> calls{0};
  // Stops after about 25 of the runs have been asked for.
  auto interrupted = FillTo(*backend_.client, plan_, 80, [&] { return calls.fetch_add(1) > 30; });
  ASSERT_TRUE(interrupted.ok()) << interrupted.error().message;
  EXPECT_TRUE(interrupted->stopped);
  EXPECT_LT(interrupted->runs_created, 80);
  EXPECT_EQ(Stored().runs, interrupted->runs_created);

  auto resumed = FillTo(*backend_.client, plan_, 80, [] { return false; });
  ASSERT_TRUE(resumed.ok()) << resumed.error().message;
  EXPECT_FALSE(resumed->stopped);
  EXPECT_EQ(interrupted->runs_created + resumed->runs_created, 80);
  // Nothing made twice: the experiments and pipelines of the first attempt are found by name.
  EXPECT_EQ(interrupted->experiments_created + resumed->experiments_created, 8);
  EXPECT_EQ(interrupted->pipelines_created + resumed->pipelines_created, 4);
  auto stored = Stored();
  EXPECT_EQ(stored.runs, 80);
  EXPECT_EQ(stored.pipelines, 4);
}

TEST_F(GrowthFillTest, CleanUpDeletesExactlyWhatTheFillCreatedAndResumes) {
  // Someone else's experiment, run and pipeline, with names close to the fill's.
  auto theirs = backend_.client->CreateExperiment("growth-test-e-not-ours", "");
  ASSERT_TRUE(theirs.ok()) << theirs.error().message;
  auto their_pipeline =
      backend_.client->UploadPipeline("growth-testing-p0", "p.yaml", plan_.pipeline_text);
  ASSERT_TRUE(their_pipeline.ok()) << their_pipeline.error().message;
  kfp::RunCreate their_run;
  their_run.display_name = "not ours";
  their_run.experiment_id = theirs->experiment_id;
  their_run.pipeline_id = their_pipeline->pipeline_id;
  ASSERT_TRUE(backend_.client->CreateRun(their_run).ok());

  // The level counts every run stored, theirs too: 40 of the 41 are the fill's.
  ASSERT_TRUE(FillTo(*backend_.client, plan_, 41, [] { return false; }).ok());
  ASSERT_EQ(Stored().runs, 41);

  // Interrupted after a few deletions, then run again.
  std::atomic<int> calls{0};
  auto first =
      CleanUpFill(*backend_.client, plan_.prefix, 2, [&] { return calls.fetch_add(1) > 12; });
  EXPECT_TRUE(first.stopped);
  EXPECT_TRUE(first.failures.empty()) << first.failures.front();
  EXPECT_GT(first.runs_deleted, 0);
  EXPECT_GT(Stored().runs, 1);
  auto second = CleanUpFill(*backend_.client, plan_.prefix, 2, [] { return false; });
  EXPECT_FALSE(second.stopped);
  EXPECT_TRUE(second.failures.empty()) << second.failures.front();
  EXPECT_EQ(first.runs_deleted + second.runs_deleted, 40);
  EXPECT_EQ(first.experiments_deleted + second.experiments_deleted, 5);  // 41 runs, 10 each
  EXPECT_EQ(first.pipelines_deleted + second.pipelines_deleted, 2);

  auto stored = Stored();
  EXPECT_EQ(stored.runs, 1);
  EXPECT_EQ(stored.pipelines, 1);
  EXPECT_EQ(RunsIn(theirs->experiment_id), 1);
  auto left = FindFill(*backend_.client, plan_.prefix);
  ASSERT_TRUE(left.ok());
  EXPECT_TRUE(left->experiment_ids.empty());
  EXPECT_TRUE(left->pipeline_versions.empty());
  // A third time finds nothing to do.
  auto third = CleanUpFill(*backend_.client, plan_.prefix, 2, [] { return false; });
  EXPECT_EQ(third.runs_deleted + third.experiments_deleted + third.pipelines_deleted, 0);
}

}  // namespace
}  // namespace kfpbench::harness
