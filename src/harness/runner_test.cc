// The runners' Context against a scripted loopback target: a pipeline file
// is uploaded once however often it is asked for, an upload the target
// refuses is an error naming the file, clean-up deletes what was created
// (schedules first) and reports what it could not, and an interruption
// bounds every wait.
#include "harness/runner.h"

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/test_support.h"

namespace kfpbench::harness {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::filesystem::path Pipeline() {
  return std::filesystem::path(KFPBENCH_SOURCE_DIR) / "examples/pipelines/sleep_chain.yaml";
}

class ContextTest : public ::testing::Test {
 protected:
  ContextTest() { options_.benchmark_id = "kfpbench-ctx"; }

  // What the target was asked, in order: "POST /apis/v2beta1/pipelines/upload".
  std::vector<std::string> Asked() {
    std::lock_guard lock(mu_);
    return asked_;
  }

  std::mutex mu_;
  std::vector<std::string> asked_;
  std::atomic<int> uploads_{0};
  // The answer to a DELETE of `path`; 200 unless a test says otherwise.
  std::function<int(const std::string& path)> delete_status_ = [](const std::string&) {
    return 200;
  };
  int upload_status_ = 200;
  testing::ScriptedTarget target_{[this](const http::Request& r) {
    {
      std::lock_guard lock(mu_);
      asked_.push_back(std::string(http::MethodName(r.method)) + " " + r.path);
    }
    if (r.method == http::Method::kPost && r.path.ends_with("/pipelines/upload")) {
      if (upload_status_ != 200) {
        return http::Response::Json(upload_status_, R"({"message": "uploads are off"})");
      }
      int n = ++uploads_;
      return http::Response::Json(
          200,
          nlohmann::json{{"pipeline_id", "p-" + std::to_string(n)}, {"display_name", "x"}}.dump());
    }
    if (r.method == http::Method::kDelete) {
      int status = delete_status_(r.path);
      return http::Response::Json(status, status == 200 ? "{}" : R"({"message": "no"})");
    }
    return http::Response::Json(404, R"({"message": "not scripted"})");
  }};
  results::RunLog runs_;
  HarnessOptions options_;
};

TEST_F(ContextTest, APipelineFileIsUploadedOnceAndItsUncachedCopyApart) {
  ASSERT_TRUE(target_.started());
  Context context(target_.client(), runs_, options_, WallClock::now());
  auto first = context.EnsurePipeline(Pipeline());
  ASSERT_TRUE(first.ok()) << first.error().message;
  auto again = context.EnsurePipeline(Pipeline());
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->pipeline_id, first->pipeline_id);
  EXPECT_THAT(first->name, ::testing::StartsWith("kfpbench-ctx-sleep_chain-"));
  auto uncached = context.EnsurePipeline(Pipeline(), /*cache=*/false);
  ASSERT_TRUE(uncached.ok()) << uncached.error().message;
  EXPECT_NE(uncached->pipeline_id, first->pipeline_id);
  EXPECT_EQ(uploads_.load(), 2);
  EXPECT_EQ(context.created().pipelines, 2);
}

TEST_F(ContextTest, AnUploadTheTargetRefusesOrAMissingFileIsAnError) {
  Context context(target_.client(), runs_, options_, WallClock::now());
  auto missing = context.EnsurePipeline("/nonexistent/kfpbench/p.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr("/nonexistent/kfpbench/p.yaml"));
  upload_status_ = 403;
  auto refused = context.EnsurePipeline(Pipeline());
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error().message, HasSubstr("cannot upload " + Pipeline().string()));
  EXPECT_THAT(refused.error().message, HasSubstr("uploads are off"));
  EXPECT_EQ(context.created().pipelines, 0);
}

TEST_F(ContextTest, CleanUpDeletesSchedulesFirstAndReportsWhatItCouldNot) {
  Context context(target_.client(), runs_, options_, WallClock::now());
  ASSERT_TRUE(context.EnsurePipeline(Pipeline()).ok());
  context.TrackRun("r-1");
  context.TrackRun("r-gone");
  context.TrackExperiment("e-1");
  context.TrackRecurringRun("rr-1");
  delete_status_ = [](const std::string& path) {
    if (path.ends_with("/runs/r-gone")) return 404;  // already gone: as good as deleted
    if (path.ends_with("/experiments/e-1")) return 403;
    return 200;
  };
  Context::CleanUpReport report = context.CleanUp();
  EXPECT_EQ(report.created.total(), 5);
  EXPECT_EQ(report.deleted.recurring_runs, 1);
  EXPECT_EQ(report.deleted.runs, 2);
  EXPECT_EQ(report.deleted.experiments, 0);
  EXPECT_EQ(report.deleted.pipelines, 1);
  ASSERT_EQ(report.failures.size(), 1u);
  EXPECT_THAT(report.failures[0], HasSubstr("experiment e-1: "));
  std::vector<std::string> deletes;
  for (const auto& a : Asked()) {
    if (a.starts_with("DELETE")) deletes.push_back(a);
  }
  EXPECT_THAT(
      deletes,
      ElementsAre("DELETE /apis/v2beta1/recurringruns/rr-1", "DELETE /apis/v2beta1/runs/r-1",
                  "DELETE /apis/v2beta1/runs/r-gone", "DELETE /apis/v2beta1/experiments/e-1",
                  "DELETE /apis/v2beta1/pipelines/p-1"));
  // Done once: a second clean-up has nothing left to delete.
  EXPECT_EQ(context.CleanUp().deleted.total(), 0);
}

TEST_F(ContextTest, KeepLeavesEverythingOnTheTarget) {
  options_.keep = true;
  Context context(target_.client(), runs_, options_, WallClock::now());
  context.TrackRun("r-1");
  Context::CleanUpReport report = context.CleanUp();
  EXPECT_EQ(report.created.runs, 1);
  EXPECT_EQ(report.deleted.total(), 0);
  EXPECT_TRUE(Asked().empty());
}

TEST_F(ContextTest, AnInterruptionBoundsEveryWait) {
  std::atomic<bool> interrupted{false}, hurry{false};
  options_.interrupted = &interrupted;
  options_.hurry = &hurry;
  options_.grace = std::chrono::seconds(30);
  Context context(target_.client(), runs_, options_, WallClock::now());
  const WallTime far = WallClock::now() + std::chrono::hours(1);
  EXPECT_EQ(context.StopWaitingAt(far), far);
  EXPECT_TRUE(context.SleepUntil(WallClock::now()));

  interrupted = true;
  const WallTime before = WallClock::now();
  const WallTime stop = context.StopWaitingAt(far);
  EXPECT_GE(stop, before + options_.grace);
  EXPECT_LE(stop, WallClock::now() + options_.grace);
  // The grace counts from when the interruption was first noticed.
  EXPECT_EQ(context.StopWaitingAt(far), stop);
  EXPECT_FALSE(context.SleepUntil(far));  // returns at once
  hurry = true;
  EXPECT_EQ(context.StopWaitingAt(far), WallTime::min());
}

TEST_F(ContextTest, AnAbortKeepsItsFirstReasonAndInterrupts) {
  Context context(target_.client(), runs_, options_, WallClock::now());
  EXPECT_FALSE(context.Interrupted());
  context.Abort("too many errors");
  context.Abort("a later reason");
  EXPECT_TRUE(context.Interrupted());
  EXPECT_EQ(context.abort_reason(), "too many errors");
}

TEST_F(ContextTest, NamesSayWhichBenchmarkMadeThem) {
  Context context(target_.client(), runs_, options_, WallClock::now());
  EXPECT_EQ(context.Name("s0-run-1"), "kfpbench-ctx-s0-run-1");
  EXPECT_THAT(context.Description("for a test"), HasSubstr("kfpbench-ctx"));
  HarnessOptions unnamed;
  Context plain(target_.client(), runs_, unnamed, WallClock::now());
  EXPECT_EQ(plain.Name("x"), "kfpbench-x");
}

}  // namespace
}  // namespace kfpbench::harness
