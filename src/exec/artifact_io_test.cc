#include "exec/artifact_io.h"

#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "exec/step_workload.h"
#include "util/ids.h"

namespace kfpbench::exec {
namespace {

using ::testing::HasSubstr;

namespace fs = std::filesystem;

TEST(ArtifactIo, WritesAndReadsBackTheSize) {
  fs::path dir = fs::temp_directory_path() / ("kfpbench-artifact-" + NewUuid());
  std::string path = (dir / "nested" / "dataset.bin").string();
  auto w = WriteArtifact(path, 3 * (1 << 20) + 17);
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_EQ(fs::file_size(path), 3u * (1 << 20) + 17);
  auto r = ReadArtifact(path);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->bytes, w->bytes);
  EXPECT_GT(r->BytesPerSecond(), 0);
  fs::remove_all(dir);
}

TEST(ArtifactIo, ErrorsNameThePath) {
  auto r = ReadArtifact("/nonexistent/kfpbench/x.bin");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("/nonexistent/kfpbench/x.bin"));
  auto w = WriteArtifact("/proc/kfpbench-cannot-write/x.bin", 10);
  EXPECT_FALSE(w.ok());
  // A full disk is an error with the system's reason, not a short file.
  auto full = WriteArtifact("/dev/full", 1 << 20);
  ASSERT_FALSE(full.ok());
  EXPECT_THAT(full.error().message, HasSubstr("No space left")) << full.error().message;
}

TEST(StepArtifactFlags, ParseAndCheckCombinations) {
  auto ok =
      ParseStepArgs({"--write-artifact", "/tmp/x", "--size", "512Mi", "--read-artifact", "/tmp/y"});
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->artifact_size, 512 << 20);
  EXPECT_EQ(ok->read_artifacts.size(), 1u);
  EXPECT_FALSE(ParseStepArgs({"--write-artifact", "/tmp/x"}).ok());
  EXPECT_FALSE(ParseStepArgs({"--size", "1Mi"}).ok());
  EXPECT_FALSE(ParseStepArgs({"--write-artifact", "/tmp/x", "--size", "lots"}).ok());
}

}  // namespace
}  // namespace kfpbench::exec
