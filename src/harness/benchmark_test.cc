// The finish step and the one precedence of outcomes, on results made by
// hand (the load itself is run_scenario_file_test's).
#include "harness/benchmark.h"

#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/e2e_support.h"
#include "results/test_support.h"

namespace kfpbench::harness {
namespace {

using ::testing::HasSubstr;

TEST(OutcomeOf, InterruptionThenFailedWorkThenThresholds) {
  EXPECT_EQ(OutcomeOf(true, true, true), Outcome::kInterrupted);
  EXPECT_EQ(OutcomeOf(false, true, true), Outcome::kFailed);
  EXPECT_EQ(OutcomeOf(false, false, true), Outcome::kThresholdsFailed);
  EXPECT_EQ(OutcomeOf(false, false, false), Outcome::kOk);
}

class FinishTest : public kfpbench::testing::ScratchDirTest {
 protected:
  FinishOptions Options() {
    FinishOptions o;
    o.out_dir = dir_;
    o.max_failed_runs = 1;  // the sample's failed run is allowed
    return o;
  }
  std::ostringstream console_;
};

TEST_F(FinishTest, WritesResultsAndReportsAndJudgesThresholds) {
  auto results = results::testing::SyntheticResults(1);
  results.errors.clear();
  FinishOptions o = Options();
  o.thresholds = {{"GetRun", {"p95 < 1h"}}};
  EXPECT_EQ(Finish(results, o, console_), Outcome::kOk) << console_.str();
  EXPECT_TRUE(std::filesystem::exists(dir_ / "results.json"));
  EXPECT_TRUE(std::filesystem::exists(dir_ / "report.html"));
  EXPECT_THAT(console_.str(), HasSubstr("Thresholds"));

  o.thresholds = {{"GetRun", {"p95 < 1ms"}}};
  EXPECT_EQ(Finish(results, o, console_), Outcome::kThresholdsFailed);
}

TEST_F(FinishTest, AScenarioErrorFailsTheBenchmarkAndSaysWhy) {
  auto results = results::testing::SyntheticResults(1);  // with a scenario error
  EXPECT_EQ(Finish(results, Options(), console_), Outcome::kFailed);
  EXPECT_THAT(console_.str(), HasSubstr("FAILED"));
}

TEST_F(FinishTest, ResultsThatCannotBeWrittenFailTheBenchmark) {
  auto results = results::testing::SyntheticResults(1);
  results.errors.clear();
  FinishOptions o = Options();
  o.out_dir = dir_ / "a-file";
  Write("a-file", "not a folder");
  EXPECT_EQ(Finish(results, o, console_), Outcome::kFailed);
}

TEST_F(FinishTest, AnInterruptedBenchmarkSaysSoWhateverElseHappened) {
  auto results = results::testing::SyntheticResults(1);
  std::atomic<bool> interrupted{true};
  FinishOptions o = Options();
  o.interrupted = &interrupted;
  EXPECT_EQ(Finish(results, o, console_), Outcome::kInterrupted);
}

}  // namespace
}  // namespace kfpbench::harness
