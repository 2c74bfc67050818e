// ORCHESTRATE against the embedded backend: one run per CSV row with that
// row's typed parameters, in the experiment named; a pipeline named on the
// server found by name; a bad row or an unknown pipeline refused with the
// reason before any run.
#include "harness/orchestrate.h"

#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/modes.h"
#include "harness/test_support.h"
#include "util/files.h"

namespace kfpbench::harness {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

std::string Sweep() {
  return std::string(KFPBENCH_SOURCE_DIR) + "/examples/capacity/train_sweep.yaml";
}

class OrchestrateTest : public testing::EmbeddedTargetTest {
 protected:
  // An ORCHESTRATE scenario of `csv` (written to the scratch folder) with
  // the sweep pipeline; `extra` adds fields.
  std::string Scenario(const std::string& csv, const std::string& extra = "") {
    Write("runs.csv", csv);
    json entry = {{"mode", "ORCHESTRATE"}, {"csv", "runs.csv"}, {"pipelineFileName", Sweep()}};
    if (!extra.empty()) entry.update(json::parse(extra));
    return json::array({entry}).dump();
  }
};

TEST_F(OrchestrateTest, StartsOneRunPerRowWithThatRowsTypedParameters) {
  HarnessOptions keep = Options();
  keep.keep = true;  // the runs are read back below
  auto r =
      RunScenarios(Load(Scenario("model,lr,epochs,augment\nresnet18,0.1,1,false\nvit,,3,true\n",
                                 R"({"concurrency": 2, "experiment": "sweep"})")),
                   session_->client(), session_->recorder(), keep);
  EXPECT_TRUE(r.errors.empty()) << r.errors.front();
  ASSERT_EQ(r.runs.size(), 2u);
  std::map<std::string, json> by_model;
  std::string experiment;
  for (const auto& record : r.runs) {
    EXPECT_EQ(record.state, RuntimeState::kSucceeded) << record.error;
    auto run = session_->client().GetRun(record.run_id);
    ASSERT_TRUE(run.ok()) << run.error().message;
    by_model[run->runtime_config.parameters.value("model", "")] = run->runtime_config.parameters;
    if (!experiment.empty()) {
      EXPECT_EQ(run->experiment_id, experiment);
    }
    experiment = run->experiment_id;
  }
  EXPECT_EQ(by_model["resnet18"],
            (json{{"model", "resnet18"}, {"lr", 0.1}, {"epochs", 1}, {"augment", false}}));
  // An empty cell leaves the pipeline's default.
  EXPECT_EQ(by_model["vit"], (json{{"model", "vit"}, {"epochs", 3}, {"augment", true}}));
  auto experiments = session_->client().ListExperiments({});
  ASSERT_TRUE(experiments.ok()) << experiments.error().message;
  std::string name;
  for (const auto& e : experiments->items) {
    if (e.experiment_id == experiment) name = e.display_name;
  }
  EXPECT_EQ(name, "sweep");
}

TEST_F(OrchestrateTest, ABadCellIsRefusedWhenTheFileIsReadNamingLineAndColumn) {
  LoadOptions load;
  auto file =
      ParseScenarios(Scenario("model,epochs\nresnet18,1\nvit,three\n"), dir_ / "s.json", load);
  ASSERT_FALSE(file.ok());
  EXPECT_THAT(file.error().message, HasSubstr("line 3, column 'epochs'"));
  EXPECT_THAT(file.error().message, HasSubstr("got 'three'"));
}

TEST_F(OrchestrateTest, APipelineOnTheServerIsFoundByNameAndAnUnknownOneRefused) {
  auto text = ReadFile(Sweep());
  ASSERT_TRUE(text.ok());
  auto uploaded = session_->client().UploadPipeline("gtest-sweep", "sweep.yaml", *text);
  ASSERT_TRUE(uploaded.ok()) << uploaded.error().message;

  OrchestratePlan plan;
  auto spec = ResolvePipeline(session_->client(), "gtest-sweep", plan);
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(plan.pipeline_id, uploaded->pipeline_id);
  EXPECT_FALSE(plan.pipeline_version_id.empty());
  EXPECT_EQ(plan.pipeline_label, "gtest-sweep");
  EXPECT_TRUE(plan.pipeline_file.empty());  // nothing to upload

  OrchestratePlan unknown;
  auto missing = ResolvePipeline(session_->client(), "gtest-no-such-pipeline", unknown);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr("neither a file nor a pipeline on"));
  EXPECT_TRUE(unknown.pipeline_id.empty());
}

TEST_F(OrchestrateTest, APipelineGivenTwiceOrNotAtAllIsRefused) {
  Write("runs.csv", "model\nx\n");
  LoadOptions load;
  for (
      const char* entry :
      {R"([{"mode": "ORCHESTRATE", "csv": "runs.csv"}])",
       R"([{"mode": "ORCHESTRATE", "csv": "runs.csv", "pipeline": "a", "pipelineFileName": "b"}])"}) {
    auto file = ParseScenarios(entry, dir_ / "s.json", load);
    ASSERT_FALSE(file.ok()) << entry;
    EXPECT_THAT(file.error().message, HasSubstr("one of them")) << entry;
  }
  auto no_csv =
      ParseScenarios(R"([{"mode": "ORCHESTRATE", "pipeline": "a"}])", dir_ / "s.json", load);
  ASSERT_FALSE(no_csv.ok());
  EXPECT_THAT(no_csv.error().message, HasSubstr("csv: required"));
}

}  // namespace
}  // namespace kfpbench::harness
