#include "plan/calibration.h"

#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "util/files.h"
#include "util/time.h"

namespace kfpbench::plan {
namespace {

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
  EXPECT_NE(said.find("calibrated from 5 runs"), std::string::npos) << said;
  EXPECT_EQ(said.find("api not fitted"), std::string::npos) << said;  // one level: not tried
}

TEST_F(CalibrationTest, InputsAreBadInputAndAFileNotWrittenIsNot) {
  CalibrationRequest missing;
  missing.results = {dir_ / "missing"};
  missing.out = dir_ / "calibration.json";
  auto m = CalibrateFromFiles(missing);
  ASSERT_FALSE(m.ok());
  EXPECT_TRUE(m.error().BadInput());
  EXPECT_NE(m.error().message.find("missing"), std::string::npos) << m.error().message;
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
  EXPECT_NE(w.error().message.find(nowhere.out.string()), std::string::npos) << w.error().message;
}

}  // namespace
}  // namespace kfpbench::plan
