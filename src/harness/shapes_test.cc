#include "harness/shapes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/growth_fill.h"
#include "harness/modes.h"
#include "harness/stress_runner.h"

namespace kfpbench::harness {
namespace {

using nlohmann::json;

// Reads only the shape of `entry`, as the scenario reader does once the
// common fields and the mode are read.
Result<Scenario> ReadEntry(const json& entry) {
  Scenario s;
  s.mode = FindMode(entry.at("mode").get<std::string>());
  if (auto rate = entry.find("rate"); rate != entry.end()) s.rate_per_minute = rate->get<double>();
  if (Status st = ReadShape(entry, "[0]", 1.0, s); !st.ok()) return st.error();
  return s;
}

std::string ErrorOf(const json& entry) {
  auto s = ReadEntry(entry);
  return s.ok() ? "" : s.error().message;
}

const json kStress = {{"stepTime", "1m"}, {"slo", {{"p95", "1s"}}}};
const json kGrowth = {{"levels", {10, 100}}, {"measureTime", "5s"}};

TEST(Shapes, TheTableListsEveryShapeOnceAndFindsItByName) {
  EXPECT_EQ(ShapeList(), "smoke, load, stress, soak or growth");
  for (const ShapeSpec* shape : Shapes()) {
    EXPECT_EQ(FindShape(shape->name), shape);
    // A shape with settings reads them; one without has nothing to read.
    EXPECT_EQ(shape->field.empty(), shape->read == nullptr) << shape->name;
    // A shape with settings drives its scenario and fills a section of its
    // own; a label only labels.
    EXPECT_EQ(shape->field.empty(), shape->drive == nullptr) << shape->name;
    EXPECT_EQ(shape->field.empty(), shape->section.empty()) << shape->name;
  }
  EXPECT_EQ(FindShape("spiky"), nullptr);
  EXPECT_EQ(FindShape("Stress"), nullptr);  // names are exact, as the files spell them
}

TEST(Shapes, ModesSayWhichShapesTheirRunnersDrive) {
  for (const ModeSpec* mode : Modes()) {
    EXPECT_TRUE(TakesShape(*mode, SmokeShape())) << mode->name;
    EXPECT_TRUE(TakesShape(*mode, LoadShape())) << mode->name;
    EXPECT_TRUE(TakesShape(*mode, SoakShape())) << mode->name;
    for (auto name : mode->shapes)
      EXPECT_NE(FindShape(name), nullptr) << mode->name << ": " << name;
  }
  EXPECT_TRUE(TakesShape(PipelineRunMode(), StressShape()));
  EXPECT_TRUE(TakesShape(PipelineRunMode(), GrowthShape()));
  EXPECT_TRUE(TakesShape(ExperimentMode(), StressShape()));
  EXPECT_FALSE(TakesShape(ExperimentMode(), GrowthShape()));
  EXPECT_FALSE(TakesShape(RandomGetsMode(), StressShape()));
  EXPECT_FALSE(TakesShape(LargeDatasetMode(), StressShape()));
}

TEST(Shapes, LabelsTakeNoSettingsAndEveryMode) {
  for (const char* name : {"smoke", "load", "soak"}) {
    auto s = ReadEntry({{"mode", "RANDOM_GETS"}, {"shape", name}});
    ASSERT_TRUE(s.ok()) << s.error().message;
    EXPECT_EQ(s->shape_data, nullptr);
  }
  EXPECT_TRUE(ReadEntry({{"mode", "SCHEDULED_RUNS"}}).ok());  // no shape: nothing to read
}

TEST(Shapes, StressAndGrowthReadTheirSettings) {
  auto stress =
      ReadEntry({{"mode", "EXPERIMENT"}, {"rate", 10}, {"shape", "stress"}, {"stress", kStress}});
  ASSERT_TRUE(stress.ok()) << stress.error().message;
  const auto* stress_settings = stress->ShapeSettings<StressSettings>();
  ASSERT_NE(stress_settings, nullptr);
  EXPECT_EQ(stress_settings->step_time, std::chrono::minutes(1));
  auto growth = ReadEntry({{"mode", "PIPELINE_RUN"}, {"shape", "growth"}, {"growth", kGrowth}});
  ASSERT_TRUE(growth.ok()) << growth.error().message;
  const auto* growth_settings = growth->ShapeSettings<GrowthSettings>();
  ASSERT_NE(growth_settings, nullptr);
  EXPECT_EQ(growth_settings->levels, (std::vector<int64_t>{10, 100}));
}

TEST(Shapes, GrowthFillsARealTargetOnlyWhenTheOperatorNamesWhatItMayCreate) {
  auto growth = ReadEntry({{"mode", "PIPELINE_RUN"}, {"shape", "growth"}, {"growth", kGrowth}});
  ASSERT_TRUE(growth.ok()) << growth.error().message;
  ASSERT_NE(GrowthShape().check_target, nullptr);
  HarnessOptions options;
  EXPECT_TRUE(GrowthShape().check_target(*growth, /*embedded_target=*/true, options).ok());
  Status refused = GrowthShape().check_target(*growth, false, options);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error().message, ::testing::HasSubstr("--growth-fill NAME"));
  options.growth_fill = "fill";
  EXPECT_TRUE(GrowthShape().check_target(*growth, false, options).ok());
  EXPECT_EQ(StressShape().check_target, nullptr);
}

TEST(Shapes, RefusesAnUnknownShapeNamingTheKnownOnes) {
  EXPECT_EQ(ErrorOf({{"mode", "PIPELINE_RUN"}, {"shape", "spiky"}}),
            "[0].shape: must be smoke, load, stress, soak or growth (got \"spiky\")");
  EXPECT_EQ(ErrorOf({{"mode", "PIPELINE_RUN"}, {"shape", 3}}),
            "[0].shape: must be smoke, load, stress, soak or growth (got 3)");
}

TEST(Shapes, RefusesSettingsTheShapeDoesNotTake) {
  EXPECT_EQ(ErrorOf({{"mode", "PIPELINE_RUN"}, {"rate", 1}, {"stress", kStress}}),
            "[0].stress: goes with \"shape\": \"stress\"");
  EXPECT_EQ(ErrorOf({{"mode", "PIPELINE_RUN"}, {"shape", "load"}, {"growth", kGrowth}}),
            "[0].growth: goes with \"shape\": \"growth\"");
  // Another shape's settings are refused too, not silently dropped.
  EXPECT_EQ(ErrorOf({{"mode", "PIPELINE_RUN"},
                     {"shape", "growth"},
                     {"growth", kGrowth},
                     {"stress", kStress}}),
            "[0].stress: goes with \"shape\": \"stress\"");
  EXPECT_EQ(ErrorOf({{"mode", "PIPELINE_RUN"},
                     {"rate", 1},
                     {"shape", "stress"},
                     {"stress", kStress},
                     {"growth", kGrowth}}),
            "[0].growth: goes with \"shape\": \"growth\"");
}

TEST(Shapes, RefusesAShapeTheModeDoesNotDriveNamingTheModesThatDo) {
  EXPECT_EQ(ErrorOf({{"mode", "EXPERIMENT"}, {"shape", "growth"}, {"growth", kGrowth}}),
            "[0].shape: growth works with mode PIPELINE_RUN");
  EXPECT_EQ(
      ErrorOf({{"mode", "RANDOM_GETS"}, {"rate", 1}, {"shape", "stress"}, {"stress", kStress}}),
      "[0].shape: stress works with modes PIPELINE_RUN, EXPERIMENT");
  EXPECT_EQ(
      ErrorOf({{"mode", "LARGE_DATASET"}, {"rate", 1}, {"shape", "stress"}, {"stress", kStress}}),
      "[0].shape: stress works with modes PIPELINE_RUN, EXPERIMENT");
}

TEST(Shapes, EachShapeChecksWhatItNeedsOfTheRest) {
  EXPECT_EQ(ErrorOf({{"mode", "PIPELINE_RUN"}, {"shape", "stress"}, {"stress", kStress}}),
            "[0].rate: the stress shape starts from a rate");
  EXPECT_EQ(
      ErrorOf({{"mode", "PIPELINE_RUN"}, {"rate", 1}, {"shape", "growth"}, {"growth", kGrowth}}),
      "[0].rate: the growth shape fills and measures in closed loop; remove rate");
  EXPECT_EQ(ErrorOf({{"mode", "PIPELINE_RUN"}, {"rate", 1}, {"shape", "stress"}}),
            "[0].stress: required with \"shape\": \"stress\" (stepTime, slo)");
  EXPECT_EQ(ErrorOf({{"mode", "PIPELINE_RUN"}, {"shape", "growth"}}),
            "[0].growth: required with \"shape\": \"growth\" (levels, measureTime)");
}

}  // namespace
}  // namespace kfpbench::harness
