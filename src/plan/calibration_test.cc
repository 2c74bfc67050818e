#include "plan/calibration.h"

#include <unistd.h>

#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/config.h"
#include "util/files.h"
#include "util/time.h"

namespace kfpbench::plan {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

namespace fs = std::filesystem;

// A hand-made results file: `n` runs of two steps back to back.
std::string Runs(int n) {
  auto at = [](double s) {
    return FormatRfc3339(WallTime(std::chrono::seconds(1'700'000'000)) + FromSeconds(s));
  };
  nlohmann::json records = nlohmann::json::array();
  for (int i = 0; i < n; ++i) {
    double t0 = i * 100;
    nlohmann::json tasks = {
        {{"name", "root"}, {"dag", true}, {"started_at", at(t0)}, {"finished_at", at(t0)}},
        {{"name", "prepare"}, {"started_at", at(t0 + 1)}, {"finished_at", at(t0 + 11)}},
        {{"name", "train"}, {"started_at", at(t0 + 12)}, {"finished_at", at(t0 + 72 + i)}}};
    records.push_back({{"state", "SUCCEEDED"},
                       {"created_at", at(t0)},
                       {"finished_at", at(t0 + 73 + i)},
                       {"tasks", tasks}});
  }
  return nlohmann::json{{"runs", {{"records", records}}}}.dump();
}

class CalibrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kfpbench-calibration-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(CalibrationTest, OneLevelGivesStepModelsWrittenForSimulate) {
  ASSERT_TRUE(WriteFileAtomically(dir_ / "results.json", Runs(5)).ok());
  CalibrationRequest r;
  r.results = {dir_ / "results.json"};
  r.out = dir_ / "calibration.json";
  auto c = CalibrateFromFiles(r);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->runs, 5);
  auto text = ReadFile(r.out);
  ASSERT_TRUE(text.ok()) << text.error().message;
  EXPECT_EQ(nlohmann::json::parse(*text), sim::ToJson(*c));
  std::string said = Describe(*c, r);
  EXPECT_THAT(said, HasSubstr("calibrated from 5 runs")) << said;
  EXPECT_THAT(said, Not(HasSubstr("api not fitted"))) << said;  // one level: not tried
}

TEST_F(CalibrationTest, InputsAreBadInputAndAFileNotWrittenIsNot) {
  CalibrationRequest missing;
  missing.results = {dir_ / "missing"};
  missing.out = dir_ / "calibration.json";
  auto m = CalibrateFromFiles(missing);
  ASSERT_FALSE(m.ok());
  EXPECT_TRUE(m.error().BadInput());
  EXPECT_THAT(m.error().message, HasSubstr("missing")) << m.error().message;
  CalibrationRequest no_pipeline = missing;
  no_pipeline.pipeline = dir_ / "pipeline.yaml";
  EXPECT_TRUE(CalibrateFromFiles(no_pipeline).error().BadInput());
  ASSERT_TRUE(WriteFileAtomically(dir_ / "results.json", Runs(3)).ok());
  CalibrationRequest nowhere;
  nowhere.results = {dir_ / "results.json"};
  nowhere.out = dir_ / "no" / "calibration.json";
  auto w = CalibrateFromFiles(nowhere);
  ASSERT_FALSE(w.ok());
  EXPECT_FALSE(w.error().BadInput()) << w.error().message;
  EXPECT_THAT(w.error().message, HasSubstr(nowhere.out.string())) << w.error().message;
}

// One run of four_steps.yaml as a results.json: 60/150/210/60 s steps, 4 s
// between one step's end and the next one's start.
std::string OneRunOfFourSteps() {
  auto at = [](double s) {
    return FormatRfc3339(WallTime(std::chrono::seconds(1'700'000'000)) + FromSeconds(s));
  };
  nlohmann::json tasks = nlohmann::json::array();
  double t = 0;
  for (auto [name, seconds] :
       {std::pair{"ingest", 60.0}, {"featurize", 150.0}, {"train", 210.0}, {"evaluate", 60.0}}) {
    tasks.push_back(
        {{"name", name}, {"started_at", at(t + 4)}, {"finished_at", at(t + 4 + seconds)}});
    t += 4 + seconds;
  }
  nlohmann::json run = {
      {"state", "SUCCEEDED"}, {"created_at", at(0)}, {"finished_at", at(t)}, {"tasks", tasks}};
  return nlohmann::json{{"runs", {{"records", {run}}}}}.dump();
}

TEST_F(CalibrationTest, SummaryLevelsFitAndARunBesideThemPinsTheSplit) {
  const fs::path pipeline = fs::path(KFPBENCH_SOURCE_DIR) / "examples/capacity/four_steps.yaml";
  ASSERT_TRUE(WriteFileAtomically(dir_ / "summary.json", R"({
    "node": {"cpu": "16", "memory": "64Gi"},
    "summary_levels": [
      {"runs": 1, "nodes": {"min": 1, "max": 4}, "makespan": "8m16s"},
      {"runs": 12, "nodes": {"min": 1, "max": 4}, "makespan": "30m"},
      {"name": "asked", "runs": 24, "nodes": 4}]})")
                  .ok());
  CalibrationRequest r;
  r.results = {dir_ / "summary.json"};
  r.pipeline = pipeline;
  r.out = dir_ / "calibration.json";
  r.html = dir_ / "calibration.html";
  r.summary_options.split_resolution = 4;  // one split: the test checks the plumbing
  auto c = CalibrateFromFiles(r);
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_TRUE(c->summary.has_value());
  EXPECT_EQ(c->models.by_label.size(), 4u);
  auto text = ReadFile(r.out);
  ASSERT_TRUE(text.ok());
  auto read_back = sim::ParseCalibration(*text);  // what simulate and plan read
  ASSERT_TRUE(read_back.ok()) << read_back.error().message;
  EXPECT_EQ(read_back->steps.by_label.size(), 4u);
  EXPECT_THAT(Describe(*c, r), HasSubstr("question")) << Describe(*c, r);
  auto html = ReadFile(r.html);
  ASSERT_TRUE(html.ok());
  EXPECT_THAT(*html, HasSubstr("\"role\":\"question\""));
  // plan --html finds the fit through the workload's calibration file.
  ASSERT_TRUE(WriteFileAtomically(dir_ / "workload.yaml", "pipeline: " + pipeline.string() +
                                                              "\ncalibration: calibration.json\n")
                  .ok());
  EXPECT_EQ(SummaryFitOfWorkload(dir_ / "workload.yaml")["levels"].size(), 3u);
  EXPECT_TRUE(SummaryFitOfWorkload(dir_ / "missing.yaml").is_null());

  // A run's per-step times beside the table: the split is theirs.
  ASSERT_TRUE(WriteFileAtomically(dir_ / "one_run.json", OneRunOfFourSteps()).ok());
  r.results = {dir_ / "summary.json", dir_ / "one_run.json"};
  r.summary_options.split_resolution = 8;
  auto pinned = CalibrateFromFiles(r);
  ASSERT_TRUE(pinned.ok()) << pinned.error().message;
  const auto& split = pinned->summary->best.params.split;  // evaluate, featurize, ingest, train
  ASSERT_EQ(split.size(), 4u);
  EXPECT_NEAR(split[0], 60.0 / 480, 1e-3);
  EXPECT_NEAR(split[1], 150.0 / 480, 1e-3);
  EXPECT_NEAR(split[3], 210.0 / 480, 1e-3);
  EXPECT_NEAR(pinned->summary->best.params.overhead, 4, 0.01);

  r.results = {dir_ / "summary.json", dir_ / "summary.json"};
  auto twice = CalibrateFromFiles(r);
  ASSERT_FALSE(twice.ok());
  EXPECT_TRUE(twice.error().BadInput());
}

}  // namespace
}  // namespace kfpbench::plan
