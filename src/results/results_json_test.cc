#include "results/results_json.h"

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "results/test_support.h"
#include "util/ids.h"

namespace kfpbench::results {
namespace {

using results::testing::TempDir;
using ::testing::HasSubstr;

TEST(ResultsReader, RoundTripsEverythingResultsToJsonWrites) {
  auto original = results::testing::SyntheticResults(1);
  auto j = ResultsToJson(original);
  auto back = ResultsFromJson(j);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(ResultsToJson(*back), j);
  EXPECT_EQ(back->started, original.started);
  EXPECT_EQ(back->runs.size(), original.runs.size());
  EXPECT_EQ(back->runs[0].tasks[1].started, original.runs[0].tasks[1].started);
  EXPECT_EQ(back->operations.at("GetRun").by_status, original.operations.at("GetRun").by_status);
}

// Errors quote what a target said; a byte there that is not UTF-8 made the
// writer throw and the whole benchmark's results were lost.
TEST(ResultsWriter, WritesAMessageThatIsNotUtf8WithReplacementCharacters) {
  TempDir dir;
  auto results = testing::SyntheticResults(1);
  results.errors.push_back("scenario [0]: HTTP 502: \xff bad gateway");
  ASSERT_TRUE(WriteResults(dir.path() / "results.json", results).ok());
  auto back = LoadResults(dir.path() / "results.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->errors.back(), "scenario [0]: HTTP 502: \xEF\xBF\xBD bad gateway");
}

TEST(ResultsReader, RoundTripsShardStressSchedulesAndCollectors) {
  auto original = results::testing::SyntheticResults(2);
  original.shard_index = 2;
  original.shard_count = 4;
  original.scenarios = {{0, "LARGE_DATASET", 64 << 20}, {1, "SCHEDULED_RUNS", 0}};
  original.stress_steps = {{0, 15, 3, 0, 1200, 0, true}, {0, 120, 16, 1, 7000, 0.0625, false}};
  original.stress_stops = {{0, StressStopReason::kSloBroken, "the SLO broke at 120/min: p95 7s"}};
  original.schedules = {{1, 2, 8, 7}};
  original.collectors = nlohmann::json::array({{{"phase", "start"}, {"ok", true}}});
  auto j = ResultsToJson(original);
  auto back = ResultsFromJson(j);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(ResultsToJson(*back), j);
  EXPECT_EQ(back->shard_count, 4);
  ASSERT_EQ(back->stress_steps.size(), 2u);
  EXPECT_FALSE(back->stress_steps[1].held);
  ASSERT_EQ(back->stress_stops.size(), 1u);
  EXPECT_EQ(back->stress_stops[0].reason, StressStopReason::kSloBroken);
  EXPECT_EQ(j["stress"]["0"]["stopped"], "slo_broken");
  auto bad = j;
  bad["stress"]["0"]["stopped"] = "tired";
  auto refused = ResultsFromJson(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error().message, HasSubstr("stress.0.stopped: must be slo_broken"))
      << refused.error().message;
  ASSERT_EQ(back->schedules.size(), 1u);
  EXPECT_EQ(back->schedules[0].Missed(), 1);
  EXPECT_EQ(back->scenarios[0].artifact_bytes, 64 << 20);
}

TEST(ResultsReader, RoundTripsTheObserverHarnessUsageAndBackPressure) {
  auto original = results::testing::SyntheticResults(1);
  original.observer.qps_budget = 20;
  original.observer.poll_interval = std::chrono::milliseconds(500);
  original.observer.operations["ListRuns"].latency_us.Record(900);
  original.observer.operations["GetRun"].latency_us.Record(700, 3);
  original.observer.list_sweeps = 4;
  original.observer.runs_by_listing = 3;
  original.observer.observe_lag_ms.Record(250, 3);
  original.observer.budget_wait = std::chrono::milliseconds(120);
  original.harness_usage = {.wall_s = 10,
                            .cpu_user_s = 1.5,
                            .cpu_system_s = 0.5,
                            .peak_rss_bytes = 64 << 20,
                            .rss_bytes = 60 << 20,
                            .threads = 12};
  original.back_pressure.waits = 2;
  original.back_pressure.waited = std::chrono::seconds(3);
  original.back_pressure.by_operation["GetRun"] = 2;
  auto j = ResultsToJson(original);
  EXPECT_EQ(j["observer"]["calls"], 4);
  EXPECT_DOUBLE_EQ(j["harness_usage"]["cpu_cores"].get<double>(), 0.2);
  auto back = ResultsFromJson(j);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(ResultsToJson(*back), j);
  EXPECT_EQ(back->observer.Calls(), 4u);
  EXPECT_EQ(back->observer.observe_lag_ms.count(), 3u);
  EXPECT_EQ(back->back_pressure.by_operation.at("GetRun"), 2u);
  // Files written before these sections read as having observed nothing.
  j.erase("observer");
  j.erase("harness_usage");
  j.erase("back_pressure");
  auto old = ResultsFromJson(j);
  ASSERT_TRUE(old.ok()) << old.error().message;
  EXPECT_FALSE(old->observer.Used());
  EXPECT_FALSE(old->harness_usage.Measured());
}

TEST(ResultsReader, LoadsAFolderOrAFile) {
  TempDir dir;
  ASSERT_TRUE(WriteResults(dir.path() / "results.json", testing::SyntheticResults(2)).ok());
  auto from_dir = LoadResults(dir.path());
  ASSERT_TRUE(from_dir.ok()) << from_dir.error().message;
  auto from_file = LoadResults(dir.path() / "results.json");
  ASSERT_TRUE(from_file.ok());
  EXPECT_EQ(from_dir->operations.size(), 3u);
}

TEST(ResultsReader, RejectsOtherSchemaVersionsClearly) {
  auto j = ResultsToJson(results::testing::SyntheticResults(3));
  j["schema_version"] = 2;
  auto r = ResultsFromJson(j);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("schema_version 2 is not supported"));
  EXPECT_THAT(r.error().message, HasSubstr("newer kfpbench"));
  j.erase("schema_version");
  EXPECT_FALSE(ResultsFromJson(j).ok());
  EXPECT_FALSE(ResultsFromJson(nlohmann::json::array()).ok());
  EXPECT_FALSE(ResultsFromJson({{"schema", "other"}}).ok());
}

TEST(ResultsReader, NamesTheJsonPathOfABadField) {
  auto j = ResultsToJson(results::testing::SyntheticResults(4));
  auto bad = j;
  bad["operations"]["GetRun"]["histogram"]["count"] = 1;
  auto r = ResultsFromJson(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("operations.GetRun.histogram")) << r.error().message;
  bad = j;
  bad["runs"]["records"][2]["created_at"] = "yesterday";
  r = ResultsFromJson(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("runs.records[2].created_at")) << r.error().message;
  bad = j;
  bad["runs"]["records"][0]["tasks"][1]["state"] = "DONE";
  r = ResultsFromJson(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("unknown state 'DONE'"));
  bad = j;
  bad["operations"]["GetRun"]["timeseries"][0]["count"] = "many";
  EXPECT_FALSE(ResultsFromJson(bad).ok());
}

TEST(ResultsReader, ReportsCorruptAndMissingFiles) {
  TempDir dir;
  std::string text = ResultsToJson(results::testing::SyntheticResults(5)).dump();
  std::ofstream(dir.path() / "results.json") << text.substr(0, text.size() / 2);
  auto r = LoadResults(dir.path());
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("not valid JSON")) << r.error().message;
  EXPECT_THAT(r.error().message, HasSubstr("results.json"));
  auto missing = LoadResults(dir.path() / "nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr("No such file"));
  // A number JSON allows but a double cannot hold: an error, not an abort.
  std::ofstream(dir.path() / "results.json", std::ios::trunc) << R"({"elapsed_s": 1e999})";
  auto huge = LoadResults(dir.path());
  ASSERT_FALSE(huge.ok());
  EXPECT_THAT(huge.error().message, HasSubstr("results.json"));
}

TEST(ResultsReader, RoundTripsGrowthLevelsAndRecomputesTheirFits) {
  auto original = results::testing::SyntheticResults(1);
  GrowthCurve curve;
  curve.scenario = 0;
  curve.extrapolate_to = 1000000;
  curve.stopped_because = "interrupted during the fill of level 3 (150 runs)";
  for (int64_t runs : {20, 60}) {
    GrowthLevel level;
    level.target_runs = runs;
    level.runs_stored = runs + 1;
    level.experiments_stored = 3;
    level.pipelines_stored = 1;
    level.runs_created = runs;
    level.experiments_created = 1;
    level.fill_seconds = 0.5;
    level.measure_seconds = 2;
    level.deepest_page = 4;
    level.latency_us["ListRuns"].Record(1000 + runs);
    level.latency_us["CreateRun"].Record(3000);
    level.errors["CreateRun"] = 2;
    curve.levels.push_back(level);
  }
  original.growth = {curve};
  auto j = ResultsToJson(original);
  ASSERT_TRUE(j["growth"]["0"]["fits"].contains("ListRuns"));
  EXPECT_EQ(j["growth"]["0"]["levels"][1]["fill"]["objects_per_s"], 122.0);
  auto back = ResultsFromJson(j);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(ResultsToJson(*back), j);
  ASSERT_EQ(back->growth.size(), 1u);
  EXPECT_EQ(back->growth[0].levels[1].errors.at("CreateRun"), 2u);
  EXPECT_EQ(back->growth[0].stopped_because, curve.stopped_because);
}

TEST(ResultsReader, ReadsFilesWrittenBeforeGrowthAndRefusesAMisshapenSection) {
  auto j = ResultsToJson(results::testing::SyntheticResults(1));
  j.erase("growth");
  auto old = ResultsFromJson(j);
  ASSERT_TRUE(old.ok()) << old.error().message;
  EXPECT_TRUE(old->growth.empty());
  j["growth"] = {{"0", {{"levels", {{{"runs_stored", 5}}}}}}};
  auto bad = ResultsFromJson(j);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("growth.0.levels[0]: missing field 'target_runs'"))
      << bad.error().message;
}

}  // namespace
}  // namespace kfpbench::results
