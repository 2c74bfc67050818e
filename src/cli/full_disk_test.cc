// A full disk, for real: a small tmpfs mounted for the test (skipped where
// mounting is not allowed) under the results folder and under serve's
// database. Nothing crashes, the failure is named, nothing half-written is
// left, and what was acknowledged stays readable.
#include <sys/mount.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/e2e_support.h"
#include "http/client.h"
#include "http/url.h"

namespace kfpbench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace std::chrono_literals;
using nlohmann::json;
using namespace kfpbench::testing;  // Kfpbench(), ChildProcess, ScratchDirTest, ...
class FullDiskTest : public ScratchDirTest {
 protected:
  // A tmpfs of `bytes` at dir_/name, or a skip.
  fs::path SmallDisk(const std::string& name, size_t bytes) {
    fs::path at = dir_ / name;
    fs::create_directories(at);
    std::string options = "size=" + std::to_string(bytes);
    if (::mount("tmpfs", at.c_str(), "tmpfs", 0, options.c_str()) != 0) {
      return {};
    }
    mounts_.push_back(at);
    return at;
  }
  void TearDown() override {
    for (const auto& m : mounts_) ::umount2(m.c_str(), MNT_DETACH);
    ScratchDirTest::TearDown();
  }
  std::vector<fs::path> mounts_;
};

TEST_F(FullDiskTest, ResultsFolderOnAFullDiskFailsClearlyAndLeavesNoHalfFile) {
  fs::path disk = SmallDisk("disk", 16 * 1024);
  if (disk.empty()) GTEST_SKIP() << "cannot mount a tmpfs here (needs root)";
  std::string file = Write("s.json", R"([{"mode":"RANDOM_GETS","runTime":"2s","concurrency":2}])");
  auto r = Kfpbench("run " + file + " --quiet --out " + (disk / "out").string());
  EXPECT_EQ(r.exit_code, 1) << r.output;  // the benchmark ran; its results could not be kept
  EXPECT_THAT(r.output, HasSubstr("No space left on device")) << r.output;
  // Either no results.json or a whole one; never a truncated file or a stray temporary.
  if (fs::exists(disk / "out" / "results.json")) {
    std::ifstream in(disk / "out" / "results.json");
    EXPECT_FALSE(json::parse(in, nullptr, false).is_discarded());
  }
  for (const auto& entry : fs::directory_iterator(disk / "out")) {
    EXPECT_THAT(entry.path().filename().string(), Not(HasSubstr(".tmp"))) << entry.path();
  }
}

TEST_F(FullDiskTest, ServeOnAFullDiskRefusesWritesClearlyAndKeepsWhatItAcknowledged) {
  fs::path disk = SmallDisk("db", 512 * 1024);
  if (disk.empty()) GTEST_SKIP() << "cannot mount a tmpfs here (needs root)";
  ChildProcess serve({KfpbenchBinary(), "serve", "--access-log", "none", "--port", "0",
                      "--executor", "stub", "--db", (disk / "kfp.db").string()});
  std::string line = serve.WaitForLine("serving", 60s);
  ASSERT_FALSE(line.empty()) << serve.seen();
  http::ClientOptions co;
  co.base = *http::ParseUrl(testing::UrlInLine(line) + "/apis/v2beta1");
  http::Client client(co);
  std::vector<std::string> acknowledged;
  int refused = 0;
  std::string description(16 * 1024, 'x');  // fills 512 KiB in a few dozen writes
  for (int i = 0; i < 200 && refused < 3; ++i) {
    json body = {{"display_name", fmt::format("e{}", i)}, {"description", description}};
    auto r = client.Send(http::Method::kPost, "/experiments", body.dump(), "application/json");
    ASSERT_TRUE(r.ok()) << r.error().message;  // the server never dies
    if (r->status == 200) {
      acknowledged.push_back(json::parse(r->body)["experiment_id"]);
    } else {
      ++refused;
      EXPECT_GE(r->status, 500) << r->body;
      EXPECT_THAT(r->body, HasSubstr("full")) << r->body;  // SQLite: "database or disk is full"
    }
  }
  ASSERT_EQ(refused, 3) << "the disk never filled";
  ASSERT_GT(acknowledged.size(), 3u);
  for (const auto& id : acknowledged) {
    auto r = client.Send(http::Method::kGet, "/experiments/" + id);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, 200) << id << ": " << r->body;
  }
  auto list = client.Send(http::Method::kGet, "/experiments?page_size=100");
  ASSERT_TRUE(list.ok());
  // Nothing refused was stored: the list holds what was acknowledged (and
  // KFP's "Default" experiment, when the server made it).
  size_t ours = 0;
  ASSERT_EQ(list->status, 200) << list->body;
  json listed = json::parse(list->body);
  for (const auto& e : listed["experiments"]) {
    if (e["display_name"] != "Default") ++ours;
  }
  EXPECT_EQ(ours, acknowledged.size());
}

}  // namespace
}  // namespace kfpbench
