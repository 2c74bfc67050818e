#include "plan/profile_results.h"

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "results/results_json.h"
#include "util/ids.h"
#include "util/units.h"

namespace kfpbench::plan {
namespace {

using ::testing::HasSubstr;

nlohmann::json Task(const std::string& name, nlohmann::json extra) {
  nlohmann::json t = {{"name", name},
                      {"state", "SUCCEEDED"},
                      {"started_at", "2026-01-01T00:00:00Z"},
                      {"finished_at", "2026-01-01T00:00:10Z"},
                      {"dag", false}};
  t.update(extra);
  return t;
}

// The run records of a results.json, read as --from-results reads them.
Result<std::vector<StepExecution>> ExecutionsFromResults(
    const nlohmann::json& results, const std::map<std::string, std::string>& labels) {
  auto runs = results::RunRecordsFromJson(results);
  if (!runs.ok()) return runs.error();
  return plan::ExecutionsFromResults(*runs, labels);
}

TEST(ProfileResultsTest, ReadsEveryAcceptedShapeOfPerTaskResources) {
  nlohmann::json results = {
      {"runs",
       {{{"state", "SUCCEEDED"},
         {"tasks",
          {{{"name", "root"}, {"dag", true}, {"state", "SUCCEEDED"}},
           Task("nested", {{"resources",
                            {{"cpu_cores", {{"peak", 1.5}, {"p95", 1.0}}},
                             {"memory_bytes", {{"peak", 512 * kMi}, {"p95", 400 * kMi}}}}}}),
           Task("samples", {{"cpu_cores_samples", {0.5, 1.0, 0.75}},
                            {"memory_bytes_samples", {100 * kMi, 200 * kMi}}}),
           Task("flat", {{"cpu_cores_peak", 2.0}, {"memory_bytes_peak", 1024 * kMi}}),
           Task("average", {{"cpu_seconds", 5.0}, {"peak_memory_bytes", 300 * kMi}}),
           Task("bare", nlohmann::json::object())}}},
        {{"state", "FAILED"}, {"tasks", {Task("nested", {{"cpu_cores_peak", 99.0}})}}}}}};
  auto e = ExecutionsFromResults(results, {{"nested", "exec-n"}});
  ASSERT_TRUE(e.ok()) << e.error().message;
  ASSERT_EQ(e->size(), 4u);  // "bare" has nothing; the failed run is skipped
  ProfileReport r = BuildProfile(*e, {});
  ASSERT_EQ(r.steps.size(), 4u);
  EXPECT_EQ(r.steps[0].executor_label, "exec-n");
  EXPECT_DOUBLE_EQ(r.steps[0].cpu_cores.peak, 1.5);
  EXPECT_DOUBLE_EQ(r.steps[0].cpu_cores.p95, 1.0);
  EXPECT_DOUBLE_EQ(r.steps[0].memory_bytes.p95, 400 * kMi);
  EXPECT_DOUBLE_EQ(r.steps[1].cpu_cores.peak, 1.0);
  EXPECT_EQ(r.steps[1].samples, 3u);
  EXPECT_DOUBLE_EQ(r.steps[2].cpu_cores.p95, 2.0);   // p95 defaults to the peak
  EXPECT_DOUBLE_EQ(r.steps[3].cpu_cores.peak, 0.5);  // 5 cpu-seconds over 10 s
  EXPECT_DOUBLE_EQ(r.steps[3].memory_bytes.peak, 300 * kMi);
  EXPECT_EQ(r.steps[3].duration_p50, std::chrono::seconds(10));
}

TEST(ProfileResultsTest, ResultsWithoutResourceFiguresSayWhatWasLookedFor) {
  nlohmann::json results = {
      {"runs", {{{"state", "SUCCEEDED"}, {"tasks", {Task("a", nlohmann::json::object())}}}}}};
  auto e = ExecutionsFromResults(results, {});
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(e.error().message,
              HasSubstr("none of its 1 succeeded step(s) carries resource figures"));
  EXPECT_FALSE(ExecutionsFromResults(nlohmann::json::object(), {}).ok());
}

TEST(ProfileResultsTest, FileErrorsNameTheFile) {
  auto dir = std::filesystem::temp_directory_path() / ("kfpbench-profile-" + NewUuid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "results.json") << "{not json";
  auto bad = ProfileFromResultsFile(dir, nullptr, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr((dir / "results.json").string() + ": not valid JSON"));
  auto missing = ProfileFromResultsFile(dir / "nope.json", nullptr, {});
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr("nope.json"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kfpbench::plan
