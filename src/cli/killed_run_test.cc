// The harness killed outright (SIGKILL, no chance to clean up) in the middle
// of its load: the results it wrote so far stay readable and say they are
// unfinished, and the next benchmark into the same folder does not mix with
// them (they move to OUT/previous/).
#include <csignal>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/e2e_support.h"

namespace kfpbench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace std::chrono_literals;
using nlohmann::json;
using namespace kfpbench::testing;  // Kfpbench(), ChildProcess, ScratchDirTest, ...

uint64_t Calls(const json& results) {
  uint64_t n = 0;
  if (!results.is_object() || !results.contains("operations")) return 0;
  for (const auto& [name, op] : results["operations"].items()) n += op.value("count", 0ull);
  return n;
}

class KilledHarnessTest : public ScratchDirTest {};

TEST_F(KilledHarnessTest, LeavesItsResultsSoFarAndTheNextRunDoesNotMixWithThem) {
  std::filesystem::path out = dir_ / "out";
  std::string short_load = Write("short.json", R"([{"mode":"RANDOM_GETS","runTime":"1s",)"
                                               R"("concurrency":1}])");
  auto first = Kfpbench("run " + short_load + " --quiet --out " + out.string());
  ASSERT_EQ(first.exit_code, 0) << first.output;
  ASSERT_FALSE(ReadJson(out / "results.json")["partial"].get<bool>());

  std::string long_load = Write("long.json", R"([{"mode":"RANDOM_GETS","runTime":"10m",)"
                                             R"("concurrency":2}])");
  ChildProcess killed({KfpbenchBinary(), "run", long_load, "--quiet", "--out", out.string(),
                       "--checkpoint-every", "200ms"});
  ASSERT_NE(killed.WaitForLine("starts for", 30s), "") << killed.seen();
  // The earlier benchmark's files moved aside at the start: the folder's top
  // level is this benchmark's only.
  EXPECT_FALSE(std::filesystem::exists(out / "report.html"));
  EXPECT_FALSE(ReadJson(out / "previous" / "results.json")["partial"].get<bool>());
  json so_far;
  for (int i = 0; i < 300 && Calls(so_far) == 0; ++i) {
    std::this_thread::sleep_for(50ms);
    so_far = ReadJson(out / "results.json");
  }
  ASSERT_GT(Calls(so_far), 0u) << so_far.dump().substr(0, 2000);
  killed.Signal(SIGKILL);
  EXPECT_EQ(killed.WaitExit(10s), 128 + SIGKILL);

  // Readable, by kfpbench too, and honest about being unfinished.
  json left = ReadJson(out / "results.json");
  ASSERT_TRUE(left.is_object()) << "results.json is not whole JSON";
  EXPECT_TRUE(left["partial"].get<bool>());
  EXPECT_THAT(left["partial_reason"].get<std::string>(), HasSubstr("still running"))
      << left["partial_reason"];
  EXPECT_GE(Calls(left), Calls(so_far));
  auto report = Kfpbench("report " + (out / "results.json").string() + " --html " +
                         (dir_ / "killed.html").string());
  EXPECT_EQ(report.exit_code, 0) << report.output;
  for (const auto& entry : std::filesystem::directory_iterator(out)) {
    EXPECT_THAT(entry.path().filename().string(), Not(HasSubstr(".tmp"))) << entry.path();
  }

  auto again = Kfpbench("run " + short_load + " --quiet --out " + out.string());
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_FALSE(ReadJson(out / "results.json")["partial"].get<bool>());
  json previous = ReadJson(out / "previous" / "results.json");
  EXPECT_TRUE(previous["partial"].get<bool>());  // the killed one, kept whole
  EXPECT_EQ(previous["started_at"], left["started_at"]);
  EXPECT_FALSE(std::filesystem::exists(out / "previous" / "report.html"));
}

}  // namespace
}  // namespace kfpbench
