// End to end: `kfpbench capture`'s exit codes (docs/CAPACITY.md): an empty
// window is a complete capture that exits 1 naming the window; a window that
// does not read, and a folder holding a finished capture, exit 2.
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/e2e_support.h"

namespace kfpbench::cli {
namespace {

using ::testing::HasSubstr;
using namespace kfpbench::testing;  // Kfpbench(), ScratchDirTest, ReadJson, ...

using CaptureCommandTest = ScratchDirTest;

TEST_F(CaptureCommandTest, AnEmptyWindowIsCompleteAndExitsOneSayingSo) {
  const std::string out = (dir_ / "capture").string();
  Outcome r = Kfpbench("capture --executor stub --since 1h --qps 0 --out " + out);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("no runs were created")) << r.output;
  nlohmann::json manifest = ReadJson(dir_ / "capture" / "manifest.json");
  ASSERT_FALSE(manifest.is_discarded());
  EXPECT_TRUE(manifest["complete"]);
  EXPECT_EQ(manifest["runs"], 0);

  Outcome again = Kfpbench("capture --executor stub --since 1h --out " + out);
  EXPECT_EQ(again.exit_code, 2) << again.output;
  EXPECT_THAT(again.output, HasSubstr("already holds a complete capture"));
}

TEST_F(CaptureCommandTest, AWindowThatDoesNotReadIsBadInput) {
  Outcome r =
      Kfpbench("capture --executor stub --since yesterday --out " + (dir_ / "capture").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--since: 'yesterday'")) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "capture"));
}

}  // namespace
}  // namespace kfpbench::cli
