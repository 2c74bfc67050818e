#include "server/work_root.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "util/ids.h"

namespace kfpbench::server {
namespace {

using ::testing::HasSubstr;

namespace fs = std::filesystem;

class WorkRootTest : public ::testing::Test {
 protected:
  void SetUp() override {
    parent_ = fs::temp_directory_path() / ("kfpbench-work-root-test-" + NewUuid());
    fs::create_directories(parent_);
  }
  void TearDown() override { fs::remove_all(parent_); }

  // A folder as a server that is gone left it: owner file, nobody holding it.
  fs::path Left(const std::string& name, bool with_owner = true) {
    fs::create_directories(parent_ / name / "run" / "task");
    std::ofstream(parent_ / name / "run" / "task" / "log") << "x";
    if (with_owner) std::ofstream(parent_ / name / ".owner");
    return parent_ / name;
  }

  fs::path parent_;
};

TEST_F(WorkRootTest, IsRemovedWhenTheServerStops) {
  fs::path path;
  {
    auto root = TempWorkRoot::Create(parent_);
    ASSERT_TRUE(root.ok()) << root.error().message;
    path = root->path();
    EXPECT_TRUE(fs::is_directory(path));
    EXPECT_EQ(path.parent_path(), parent_);
    EXPECT_EQ(path.filename().string().rfind("kfpbench-" + std::to_string(::getpid()) + "-", 0),
              0u);
  }
  EXPECT_FALSE(fs::exists(path));
}

TEST_F(WorkRootTest, FoldersOfKilledServersAreSweptAndLiveOnesKept) {
  fs::path dead = Left("kfpbench-4242-0a1b2c3d");
  // A live server: it holds the lock on its own open file description.
  fs::path live = Left("kfpbench-4343-deadbeef");
  int held = ::open((live / ".owner").c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(held, 0);
  ASSERT_EQ(::flock(held, LOCK_EX | LOCK_NB), 0);
  // Not ours to judge: no owner file (an older kfpbench), or another name.
  fs::path unowned = Left("kfpbench-4444-00000000", /*with_owner=*/false);
  fs::path other = Left("kfpbench-test-0a1b2c3d");

  auto root = TempWorkRoot::Create(parent_);
  ASSERT_TRUE(root.ok()) << root.error().message;
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(live / "run" / "task" / "log"));
  EXPECT_TRUE(fs::exists(unowned));
  EXPECT_TRUE(fs::exists(other));
  // A second server starting now leaves the first one's folder alone.
  EXPECT_EQ(SweepStaleWorkRoots(parent_), 0u);
  EXPECT_TRUE(fs::exists(root->path()));
  ::close(held);
  EXPECT_EQ(SweepStaleWorkRoots(parent_), 1u);  // the live one died
  EXPECT_FALSE(fs::exists(live));
}

TEST_F(WorkRootTest, AParentThatCannotHoldFoldersIsAnError) {
  std::ofstream(parent_ / "file") << "x";
  auto root = TempWorkRoot::Create(parent_ / "file");
  ASSERT_FALSE(root.ok());
  EXPECT_THAT(root.error().message, HasSubstr("cannot create work directory"))
      << root.error().message;
}

}  // namespace
}  // namespace kfpbench::server
