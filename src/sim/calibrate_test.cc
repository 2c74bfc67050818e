#include "sim/calibrate.h"

#include <gtest/gtest.h>

#include "results/results_json.h"
#include "sim/config.h"
#include "sim/test_support.h"

namespace kfpbench::sim {
namespace {

using namespace std::chrono_literals;

// A run created at `t0`, its steps back to back with `gap` between them.
nlohmann::json Record(int t0, std::vector<std::pair<std::string, double>> steps, double gap,
                      const char* state = "SUCCEEDED") {
  auto at = [](double s) {
    return FormatRfc3339(WallTime(std::chrono::seconds(1'700'000'000)) + FromSeconds(s));
  };
  nlohmann::json tasks = nlohmann::json::array();
  tasks.push_back(
      {{"name", "root"}, {"dag", true}, {"started_at", at(t0)}, {"finished_at", at(t0)}});
  double t = t0;
  for (const auto& [name, d] : steps) {
    t += gap;
    tasks.push_back({{"name", name}, {"started_at", at(t)}, {"finished_at", at(t + d)}});
    t += d;
  }
  return {{"state", state}, {"created_at", at(t0)}, {"tasks", tasks}};
}

// results.json's runs, read as calibrate reads them.
Result<Calibration> CalibrateJson(const nlohmann::json& results, const ir::PipelineSpec* pipeline) {
  auto runs = results::RunRecordsFromJson(results);
  if (!runs.ok()) return runs.error();
  return Calibrate(*runs, pipeline);
}

TEST(Calibrate, FitsDurationsAndOverheadPerExecutorLabel) {
  nlohmann::json results;
  results["runs"]["records"] = nlohmann::json::array();
  for (int i = 0; i < 5; ++i) {
    results["runs"]["records"].push_back(
        Record(i * 100, {{"prepare", 10}, {"train-a", 60 * (1 + 0.1 * i)}, {"publish", 10}}, 0.5));
  }
  results["runs"]["records"].push_back(Record(900, {{"prepare", 99}}, 9, "FAILED"));  // skipped
  auto spec = testing::SixSteps();
  auto c = CalibrateJson(results, spec.get());
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->runs, 5);
  EXPECT_NEAR(ToSeconds(c->overhead_p50), 0.5, 1e-3);
  const StepModel& step = c->models.For("exec-step");
  EXPECT_EQ(step.duration.kind, exec::DurationDist::Kind::kConstant);
  EXPECT_NEAR(ToSeconds(step.duration.a), 10, 1e-3);
  const StepModel& train = c->models.For("exec-train");
  EXPECT_EQ(train.duration.kind, exec::DurationDist::Kind::kLognormal);
  EXPECT_NEAR(ToSeconds(train.duration.a), 72, 2);
  EXPECT_GT(train.duration.sigma, 0.05);
  EXPECT_EQ(c->samples["exec-step"], 10);
  // The file round-trips through what simulate reads.
  auto back = ParseCalibration(ToJson(*c).dump());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->steps.For("exec-train").duration.ToString(), train.duration.ToString());
  EXPECT_NEAR(ToSeconds(back->steps.For("exec-step").overhead), 0.5, 1e-3);
}

TEST(Calibrate, RejectsWhatItCannotUse) {
  EXPECT_FALSE(CalibrateJson(nlohmann::json::object(), nullptr).ok());
  nlohmann::json results;
  results["runs"]["records"] = nlohmann::json::array({Record(0, {{"a", 1}}, 0, "FAILED")});
  EXPECT_NE(CalibrateJson(results, nullptr).error().message.find("no succeeded run"),
            std::string::npos);
  results["runs"]["records"] = nlohmann::json::array({Record(0, {{"a", 1}}, 0)});
  results["runs"]["records"][0]["tasks"][1]["started_at"] = "yesterday";
  EXPECT_NE(
      CalibrateJson(results, nullptr).error().message.find("runs.records[0].tasks[1].started_at"),
      std::string::npos);
  EXPECT_FALSE(CalibrateFile("/nonexistent/results", nullptr).ok());
}

TEST(Calibrate, FitDuration) {
  EXPECT_EQ(FitDuration({}).a, Duration::zero());
  auto d = FitDuration({1, 1, 1});
  EXPECT_EQ(d.kind, exec::DurationDist::Kind::kConstant);
  EXPECT_NEAR(ToSeconds(d.a), 1, 1e-9);
  d = FitDuration({1, 4});
  EXPECT_EQ(d.kind, exec::DurationDist::Kind::kLognormal);
  EXPECT_NEAR(ToSeconds(d.a), 2, 1e-6);  // geometric mean
}

}  // namespace
}  // namespace kfpbench::sim
