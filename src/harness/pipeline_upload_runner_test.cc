// PIPELINE_UPLOAD against the embedded backend: each turn uploads the file as
// a new pipeline and then a second version of it; what it made is deleted at
// the end, or kept named with the benchmark's id.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/test_support.h"

namespace kfpbench::harness {
namespace {

using ::testing::StartsWith;

class PipelineUploadRunnerTest : public testing::EmbeddedTargetTest {};

TEST_F(PipelineUploadRunnerTest, EachUploadIsFollowedByASecondVersion) {
  auto r = Run(R"([{"mode": "PIPELINE_UPLOAD", "runTime": "1s", "numTimes": 2,
                    "pipelineFileName": "sleep_chain.yaml"}])");
  EXPECT_TRUE(r.errors.empty()) << r.errors.front();
  EXPECT_EQ(Errors(r), 0u);
  const uint64_t uploads = Calls(r, "UploadPipeline");
  EXPECT_GE(uploads, 2u);  // two workers, each at least once
  // No call starts after runTime: a worker may be stopped between the two.
  const uint64_t versions = Calls(r, "UploadPipelineVersion");
  EXPECT_LE(versions, uploads);
  EXPECT_GE(versions + 2, uploads);
  EXPECT_EQ(Calls(r, "CreateRun"), 0u);

  // Every pipeline it made is counted, and deleted at the end.
  EXPECT_EQ(r.created.pipelines, static_cast<int64_t>(uploads));
  EXPECT_EQ(r.deleted.pipelines, static_cast<int64_t>(uploads));
  EXPECT_TRUE(r.cleanup_failures.empty());
  kfp::ListOptions all;
  all.page_size = 1000;
  auto left = session_->client().ListPipelines(all);
  ASSERT_TRUE(left.ok()) << left.error().message;
  EXPECT_TRUE(left->items.empty());
}

TEST_F(PipelineUploadRunnerTest, KeptPipelinesCarryTheBenchmarksName) {
  HarnessOptions options = Options();
  options.keep = true;
  auto r = RunScenarios(Load(R"([{"mode": "PIPELINE_UPLOAD", "runTime": "500ms",
                                  "pipelineFileName": "sleep_chain.yaml"}])"),
                        session_->client(), session_->recorder(), options);
  EXPECT_TRUE(r.errors.empty()) << r.errors.front();
  std::vector<kfp::Pipeline> kept;
  kfp::ListOptions page;
  page.page_size = 200;  // KFP's largest page
  do {
    auto listed = session_->client().ListPipelines(page);
    ASSERT_TRUE(listed.ok()) << listed.error().message;
    kept.insert(kept.end(), listed->items.begin(), listed->items.end());
    page.page_token = listed->next_page_token;
  } while (!page.page_token.empty());
  EXPECT_EQ(kept.size(), Calls(r, "UploadPipeline"));
  EXPECT_FALSE(kept.empty());
  for (const auto& p : kept) {
    EXPECT_THAT(p.display_name, StartsWith("kfpbench-test-upload-0-"));
  }
}

TEST_F(PipelineUploadRunnerTest, AnUnreadablePipelineFailsTheScenarioNotTheBenchmark) {
  ScenarioFile file = Load(R"([{"mode": "PIPELINE_UPLOAD", "runTime": "1s",
                               "pipelineFileName": "sleep_chain.yaml"}])");
  ASSERT_EQ(file.scenarios.size(), 1u);
  file.scenarios[0].pipeline_path = dir_ / "gone.yaml";  // removed after the file was read
  auto r = RunScenarios(file, session_->client(), session_->recorder(), Options());
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_THAT(r.errors[0], ::testing::HasSubstr("gone.yaml"));
  EXPECT_EQ(Calls(r, "UploadPipeline"), 0u);
}

}  // namespace
}  // namespace kfpbench::harness
