#include "harness/modes.h"
#include "harness/random_gets_runner.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kfpbench::harness {
namespace {

using ::testing::HasSubstr;

TEST(Modes, EveryModeHasOneNameARunnerAndTheFieldsItReads) {
  std::set<std::string_view> names;
  for (const ModeSpec* mode : Modes()) {
    EXPECT_TRUE(names.insert(mode->name).second) << mode->name;
    for (auto alias : mode->aliases) EXPECT_TRUE(names.insert(alias).second) << alias;
    ASSERT_NE(mode->make_runner, nullptr) << mode->name;
    EXPECT_NE(mode->make_runner(), nullptr) << mode->name;
    EXPECT_EQ(FindMode(mode->name), mode);
    for (auto alias : mode->aliases) EXPECT_EQ(FindMode(alias), mode);
    for (const auto& field : mode->fields) EXPECT_FALSE(field.does.empty()) << field.name;
  }
  EXPECT_EQ(FindMode("RUN"), nullptr);
  EXPECT_EQ(FindMode(""), nullptr);
  for (auto name : names) EXPECT_THAT(ModeList(), HasSubstr(name)) << name;
}

// A mode the table registers is one the docs describe and the schema allows.
TEST(Modes, EveryModeIsDocumented) {
  const std::filesystem::path source = KFPBENCH_SOURCE_DIR;
  std::stringstream docs, schema;
  docs << std::ifstream(source / "docs" / "SCENARIOS.md").rdbuf();
  schema << std::ifstream(source / "docs" / "scenario.schema.json").rdbuf();
  for (const ModeSpec* mode : Modes()) {
    EXPECT_THAT(docs.str(), HasSubstr(fmt::format("`{}`", mode->name)))
        << mode->name << " is not in docs/SCENARIOS.md";
    EXPECT_THAT(schema.str(), HasSubstr(fmt::format("\"{}\"", mode->name)))
        << mode->name << " is not in docs/scenario.schema.json";
    for (const auto& field : mode->fields) {
      EXPECT_THAT(schema.str(), HasSubstr(fmt::format("\"{}\"", field.name)))
          << field.name << " is not in docs/scenario.schema.json";
    }
  }
}

TEST(Modes, ScenariosNameTheirModeAndReadOnlyTheirOwnFields) {
  auto file = ParseScenarios(
      R"([{"mode": "PIPELINE_SCHEDULED_RUN", "runTime": "1m", "cron": "* * * * *",
           "pipelineFileName": "p.yaml"},
          {"mode": "RANDOM_GETS", "runTime": "1m", "mix": {"GetRun": 1}}])",
      "/nonexistent/s.json", {.pipeline_dirs = {}, .time_scale = 1.0});
  // p.yaml does not exist: the reader says so, naming the field.
  ASSERT_FALSE(file.ok());
  EXPECT_THAT(file.error().message,
              HasSubstr("[0].pipelineFileName: pipeline file 'p.yaml' not found"))
      << file.error().message;
  auto gets = ParseScenarios(R"([{"mode": "RANDOM_GETS", "runTime": "1m", "mix": {"GetRun": 1}}])",
                             "s.json", {});
  ASSERT_TRUE(gets.ok()) << gets.error().message;
  EXPECT_EQ(gets->scenarios[0].mode, &RandomGetsMode());
  EXPECT_EQ(gets->scenarios[0].mode_name(), "RANDOM_GETS");
  const auto* mix = dynamic_cast<const RandomGetsMix*>(gets->scenarios[0].mode_data.get());
  ASSERT_NE(mix, nullptr);
  ASSERT_EQ(mix->weights.size(), 1u);
  auto orchestrate =
      ParseScenarios(R"([{"mode": "ORCHESTRATE", "mix": {"GetRun": 1}}])", "s.json", {});
  ASSERT_FALSE(orchestrate.ok());
  EXPECT_THAT(orchestrate.error().message, HasSubstr("[0].mix: only RANDOM_GETS draws a mix"))
      << orchestrate.error().message;
}

}  // namespace
}  // namespace kfpbench::harness
