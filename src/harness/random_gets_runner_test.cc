// RANDOM_GETS against the embedded backend: the chain reads each list, a mix
// sends only what it weighs, and a mix that needs objects the target lacks
// fails its scenario with the reason.
#include "harness/random_gets_runner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/test_support.h"

namespace kfpbench::harness {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class RandomGetsRunnerTest : public testing::EmbeddedTargetTest {};

TEST_F(RandomGetsRunnerTest, TheChainReadsEveryListAndWritesNothing) {
  auto r = Run(R"([{"mode": "RANDOM_GETS", "runTime": "1s", "numTimes": 2}])");
  EXPECT_TRUE(r.errors.empty()) << r.errors.front();
  for (const char* op : {"ListPipelines", "ListExperiments", "ListRuns"}) {
    EXPECT_GT(Calls(r, op), 0u) << op;
  }
  EXPECT_EQ(Errors(r), 0u);
  for (const auto& [op, stats] : r.operations) {
    EXPECT_THAT(op, ::testing::StartsWith("List")) << "a read chain sent " << op;
  }
  ASSERT_EQ(r.scenarios.size(), 1u);
  EXPECT_EQ(r.scenarios[0].mode, "RANDOM_GETS");
}

TEST_F(RandomGetsRunnerTest, AMixSendsOnlyTheOperationsItWeighs) {
  auto r = Run(R"([{"mode": "RANDOM_GETS", "runTime": "1s", "numTimes": 2,
                    "mix": {"ListExperiments": 1}}])");
  EXPECT_TRUE(r.errors.empty()) << r.errors.front();
  EXPECT_GT(Calls(r, "ListExperiments"), 0u);
  std::vector<std::string> ops;
  for (const auto& [op, stats] : r.operations) ops.push_back(op);
  EXPECT_THAT(ops, ElementsAre("ListExperiments"));
}

TEST_F(RandomGetsRunnerTest, OpenLoopSendsOneDrawnCallPerArrival) {
  // 600 a minute for 1 s: about ten arrivals, each one ListExperiments.
  auto r = Run(R"([{"mode": "RANDOM_GETS", "runTime": "1s", "rate": 600,
                    "mix": {"ListExperiments": 1}}])");
  EXPECT_TRUE(r.errors.empty()) << r.errors.front();
  EXPECT_GE(Calls(r, "ListExperiments"), 1u);
  EXPECT_LE(Calls(r, "ListExperiments"), 11u);  // never more than the schedule holds
}

TEST_F(RandomGetsRunnerTest, AMixThatNeedsRunsFailsItsScenarioOnAnEmptyTarget) {
  auto r = Run(R"([{"mode": "RANDOM_GETS", "runTime": "1s", "mix": {"GetRun": 1}}])");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_THAT(r.errors[0], HasSubstr("GetRun needs a run on the target"));
  EXPECT_EQ(Calls(r, "GetRun"), 0u);
}

}  // namespace
}  // namespace kfpbench::harness
