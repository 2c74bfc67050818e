#include "exec/artifact_store.h"

#include <unistd.h>

#include <optional>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/engine_test_util.h"
#include "exec/test_support.h"
#include "util/units.h"

namespace kfpbench::exec {
namespace {

using engine::testing::VirtualLoop;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

// Uploads on virtual time, recording when each one's `done` ran.
struct StoreOnVirtualTime {
  explicit StoreOnVirtualTime(double bandwidth) : store(loop, {dir.path(), bandwidth}) {}

  // Index into `finished`: filled with the virtual seconds at `done`.
  size_t Upload(const std::string& key, int64_t bytes) {
    size_t i = finished.size();
    finished.emplace_back();
    statuses.emplace_back();
    ids.push_back(store.Upload(key, bytes, [this, i](Status s) {
      finished[i] = ToSeconds(loop.Now() - VirtualLoop::Epoch());
      statuses[i] = std::move(s);
    }));
    return i;
  }

  testing::TempDir dir;
  VirtualLoop loop;
  ArtifactStore store;
  std::vector<std::optional<double>> finished;
  std::vector<Status> statuses;
  std::vector<ArtifactStore::UploadId> ids;
};

TEST(ArtifactStoreTest, OneUploadTakesItsSizeOverTheBandwidthAndIsWritten) {
  StoreOnVirtualTime s(kMi);  // 1Mi/s
  s.Upload("run/task", 3 * kMi);
  s.loop.Run();
  ASSERT_TRUE(s.finished[0].has_value());
  EXPECT_NEAR(*s.finished[0], 3.0, 1e-6);
  ASSERT_TRUE(s.statuses[0].ok()) << s.statuses[0].error().message;
  EXPECT_EQ(std::filesystem::file_size(s.dir.path() / "run/task"), uintmax_t{3} * kMi);
  EXPECT_EQ(s.store.stats().uploads, 1u);
  EXPECT_EQ(s.store.stats().bytes, 3 * kMi);
  EXPECT_NEAR(ToSeconds(s.store.stats().busy), 3.0, 1e-6);
}

// Processor sharing: n uploads in progress each get 1/n of the link. A 1Mi
// and a 3Mi upload started together at 1Mi/s: both move at 0.5Mi/s until
// the small one is done at 2 s; the large one then has 2Mi left at full
// speed and ends at 4 s.
TEST(ArtifactStoreTest, UploadsInProgressShareTheBandwidthEqually) {
  StoreOnVirtualTime s(kMi);
  s.Upload("a", kMi);
  s.Upload("b", 3 * kMi);
  s.loop.Run();
  // Within one chunk's time (1/200 s) of the fluid answer.
  EXPECT_NEAR(*s.finished[0], 2.0, 0.006);
  EXPECT_NEAR(*s.finished[1], 4.0, 1e-6);
  EXPECT_NEAR(ToSeconds(s.store.stats().busy), 4.0, 1e-6);
}

TEST(ArtifactStoreTest, ALaterUploadJoinsTheShare) {
  StoreOnVirtualTime s(kMi);
  s.Upload("a", 2 * kMi);
  s.loop.RunUntil(VirtualLoop::Epoch() + 1s);  // a is half done
  s.Upload("b", kMi);
  s.loop.Run();
  // From 1 s both move at 0.5Mi/s: a's last 1Mi and b's 1Mi end together at 3 s.
  EXPECT_NEAR(*s.finished[0], 3.0, 0.006);
  EXPECT_NEAR(*s.finished[1], 3.0, 0.006);
}

TEST(ArtifactStoreTest, ACanceledUploadFreesItsShareAndIsNeverAnswered) {
  StoreOnVirtualTime s(kMi);
  s.Upload("a", 2 * kMi);
  s.Upload("b", 2 * kMi);
  s.loop.RunUntil(VirtualLoop::Epoch() + 1s);  // each has 0.5Mi
  s.store.Cancel(s.ids[1]);
  EXPECT_FALSE(std::filesystem::exists(s.dir.path() / "b"));
  s.loop.Run();
  EXPECT_NEAR(*s.finished[0], 2.5, 0.006);  // 1.5Mi left at full speed
  EXPECT_FALSE(s.finished[1].has_value());
  s.store.Cancel(s.ids[1]);  // twice, or after the end: nothing
  s.store.Cancel(s.ids[0]);
  EXPECT_EQ(s.store.stats().uploads, 1u);
}

TEST(ArtifactStoreTest, WithoutALimitUploadsAnswerOnTheLoopNotInsideTheCall) {
  StoreOnVirtualTime s(0);
  s.Upload("x/y", 5 * kMi);
  EXPECT_FALSE(s.finished[0].has_value());
  s.loop.Run();
  ASSERT_TRUE(s.finished[0].has_value());
  EXPECT_EQ(*s.finished[0], 0.0);
  EXPECT_EQ(std::filesystem::file_size(s.dir.path() / "x/y"), uintmax_t{5} * kMi);
}

TEST(ArtifactStoreTest, AZeroByteUploadStillMakesItsFile) {
  StoreOnVirtualTime s(kMi);
  s.Upload("empty", 0);
  s.loop.Run();
  ASSERT_TRUE(s.finished[0].has_value());
  EXPECT_TRUE(s.statuses[0].ok());
  EXPECT_TRUE(std::filesystem::exists(s.dir.path() / "empty"));
}

// A full disk: the upload fails with the reason, and the link goes on
// serving the others.
TEST(ArtifactStoreTest, AFailedWriteFailsThatUploadOnly) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  StoreOnVirtualTime s(10 * kMi);
  // A link in the store's folder, so the failed upload removes the link.
  std::filesystem::create_symlink("/dev/full", s.dir.path() / "full");
  s.Upload("full", 2 * kMi);
  s.Upload("fine", 2 * kMi);
  s.loop.Run();
  ASSERT_TRUE(s.finished[0].has_value());
  ASSERT_FALSE(s.statuses[0].ok());
  EXPECT_THAT(s.statuses[0].error().message, HasSubstr("No space left on device"));
  EXPECT_THAT(s.statuses[0].error().message, HasSubstr("full"));
  ASSERT_TRUE(s.statuses[1].ok());
  EXPECT_EQ(std::filesystem::file_size(s.dir.path() / "fine"), uintmax_t{2} * kMi);
  EXPECT_TRUE(std::filesystem::exists("/dev/full"));
}

TEST(ArtifactStoreTest, AnUncreatableFileFailsWithItsPath) {
  StoreOnVirtualTime s(kMi);
  std::filesystem::create_directories(s.dir.path() / "taken");
  s.Upload("taken", kMi);  // a folder is in the way
  s.loop.Run();
  ASSERT_FALSE(s.statuses[0].ok());
  EXPECT_THAT(s.statuses[0].error().message, HasSubstr("cannot create"));
  EXPECT_THAT(s.statuses[0].error().message, HasSubstr("taken"));
}

TEST(ArtifactStoreTest, ParsesBandwidths) {
  EXPECT_EQ(*ParseBandwidth("200Mi"), 200.0 * kMi);
  EXPECT_EQ(*ParseBandwidth("200Mi/s"), 200.0 * kMi);
  EXPECT_EQ(*ParseBandwidth("1.5e6"), 1.5e6);
  for (const char* bad : {"", "/s", "0", "-1Mi", "fast", "200Mi/h", "Mi"}) {
    auto b = ParseBandwidth(bad);
    ASSERT_FALSE(b.ok()) << bad;
    EXPECT_THAT(b.error().message, HasSubstr("bytes per second")) << bad;
  }
}

TEST(ArtifactStoreTest, ParsesLabeledSizes) {
  auto labeled = ParseLabeledBytes("exec-train=2Gi");
  ASSERT_TRUE(labeled.ok());
  EXPECT_EQ(labeled->first, "exec-train");
  EXPECT_EQ(labeled->second, int64_t{2} << 30);
  auto bare = ParseLabeledBytes("10Mi");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->first, "");
  EXPECT_EQ(bare->second, 10 * kMi);
  for (const char* bad : {"", "=1Mi", "exec-x=", "exec-x=lots", "-1Mi"}) {
    auto b = ParseLabeledBytes(bad);
    ASSERT_FALSE(b.ok()) << bad;
    EXPECT_THAT(b.error().message, HasSubstr("[LABEL=]SIZE")) << bad;
  }
}

}  // namespace
}  // namespace kfpbench::exec
