#include "harness/output_folder.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/e2e_support.h"

namespace kfpbench::harness {
namespace {

using ::testing::HasSubstr;

namespace fs = std::filesystem;

class OutputFolderTest : public testing::ScratchDirTest {
 protected:
  std::string Read(const fs::path& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
};

TEST_F(OutputFolderTest, AnEarlierBenchmarkMovesAsideAndOtherFilesStay) {
  fs::path out = dir_ / "out";
  ASSERT_TRUE(ClaimOutputFolder(out).ok());  // created
  EXPECT_TRUE(fs::is_directory(out));
  EXPECT_FALSE(fs::exists(out / "previous"));  // nothing to move

  Write("out/results.json", "first");
  Write("out/report.html", "first report");
  fs::create_directories(out / "rep-2");
  Write("out/rep-2/results.json", "first rep 2");
  Write("out/notes.txt", "mine");
  fs::create_directories(out / "rep-x");  // not ours
  ASSERT_TRUE(ClaimOutputFolder(out).ok());
  EXPECT_FALSE(fs::exists(out / "results.json"));
  EXPECT_FALSE(fs::exists(out / "report.html"));
  EXPECT_FALSE(fs::exists(out / "rep-2"));
  EXPECT_EQ(Read(out / "previous" / "results.json"), "first");
  EXPECT_EQ(Read(out / "previous" / "report.html"), "first report");
  EXPECT_EQ(Read(out / "previous" / "rep-2" / "results.json"), "first rep 2");
  EXPECT_EQ(Read(out / "notes.txt"), "mine");
  EXPECT_TRUE(fs::is_directory(out / "rep-x"));

  // The next benchmark's leftovers replace the older ones: previous/ is one
  // benchmark, never a mix.
  Write("out/results.json", "second");
  ASSERT_TRUE(ClaimOutputFolder(out).ok());
  EXPECT_EQ(Read(out / "previous" / "results.json"), "second");
  EXPECT_FALSE(fs::exists(out / "previous" / "report.html"));
  EXPECT_FALSE(fs::exists(out / "previous" / "rep-2"));
}

TEST_F(OutputFolderTest, AFolderThatCannotBeWrittenIsRefusedBeforeAnyLoad) {
  Write("file", "x");
  Status under_file = ClaimOutputFolder(dir_ / "file" / "out");
  ASSERT_FALSE(under_file.ok());
  EXPECT_THAT(under_file.error().message, HasSubstr("results folder: cannot create"))
      << under_file.error().message;
  if (::geteuid() == 0) GTEST_SKIP() << "root writes into read-only folders";
  fs::create_directories(dir_ / "ro");
  ::chmod((dir_ / "ro").c_str(), 0555);
  Status read_only = ClaimOutputFolder(dir_ / "ro");
  ::chmod((dir_ / "ro").c_str(), 0755);
  ASSERT_FALSE(read_only.ok());
  EXPECT_THAT(read_only.error().message, HasSubstr("Permission denied"))
      << read_only.error().message;
}

}  // namespace
}  // namespace kfpbench::harness
