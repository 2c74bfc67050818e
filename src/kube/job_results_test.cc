#include "kube/job_results.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "util/files.h"

namespace kfpbench::kube {
namespace {

using ::testing::HasSubstr;

namespace fs = std::filesystem;

JobSweepResult TwoRuns() {
  JobSweepResult r{"echo", "Job", "local", {}, {"n"}};
  r.runs.push_back({"echo-0", 0, {{"n", "1"}}, true, "", 1.5, {{"v", 1.0}}});
  r.runs.push_back({"echo-1", 1, {{"n", "4"}}, false, "exit 1", 2.0, {{"v", std::nullopt}}});
  return r;
}

TEST(JobResults, WritesCsvAndItsOwnJsonIntoANewFolder) {
  fs::path dir =
      fs::temp_directory_path() / ("kfpbench-job-results-" + std::to_string(::getpid())) / "nested";
  fs::remove_all(dir.parent_path());
  ASSERT_TRUE(WriteJobResults(TwoRuns(), dir).ok());
  auto csv = ReadFile(dir / kJobResultsCsv);
  ASSERT_TRUE(csv.ok()) << csv.error().message;
  EXPECT_EQ(*csv, ToCsv(TwoRuns()));
  auto text = ReadFile(dir / "job_results.json");
  ASSERT_TRUE(text.ok()) << text.error().message;
  auto j = nlohmann::json::parse(*text);
  EXPECT_EQ(j["jobs"], ToJson(TwoRuns()));
  EXPECT_EQ(j["jobs"]["runs"][1]["error"], "exit 1");
  EXPECT_TRUE(j["jobs"]["runs"][1]["metrics"]["v"].is_null());
  // Not the benchmark's file name, which holds another shape.
  EXPECT_FALSE(fs::exists(dir / "results.json"));
  fs::remove_all(dir.parent_path());
}

// A failed replica's log tail is whatever it printed: bytes that are not
// UTF-8 there made the JSON writer throw after the whole sweep had run.
TEST(JobResults, ALogTailThatIsNotUtf8IsWrittenWithReplacementCharacters) {
  fs::path dir = fs::temp_directory_path() / ("kfpbench-job-bytes-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  JobSweepResult r = TwoRuns();
  r.runs[1].error = "exit 1; last log lines:\n\xff\xfe";
  ASSERT_TRUE(WriteJobResults(r, dir).ok());
  auto text = ReadFile(dir / "job_results.json");
  ASSERT_TRUE(text.ok()) << text.error().message;
  EXPECT_EQ(nlohmann::json::parse(*text)["jobs"]["runs"][1]["error"],
            "exit 1; last log lines:\n\xEF\xBF\xBD\xEF\xBF\xBD");
  fs::remove_all(dir);
}

TEST(JobResults, AnErrorNamesWhatCouldNotBeWritten) {
  fs::path file =
      fs::temp_directory_path() / ("kfpbench-job-results-file-" + std::to_string(::getpid()));
  ASSERT_TRUE(WriteFileAtomically(file, "x").ok());
  auto st = WriteJobResults(TwoRuns(), file / "out");
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error().message, HasSubstr(file.string())) << st.error().message;
  fs::remove(file);
}

}  // namespace
}  // namespace kfpbench::kube
