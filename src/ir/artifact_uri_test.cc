#include "ir/artifact_uri.h"

#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/pipeline_spec.h"
#include "util/test_support.h"

namespace kfpbench::ir {
namespace {

using ::testing::HasSubstr;

namespace fs = std::filesystem;

class ArtifactUriTest : public ::testing::Test {
 protected:
  ArtifactUriTest() {
    base_ = fs::temp_directory_path() /
            ("kfpbench-artifact-uri-" +
             std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(base_);
    fs::create_directories(base_ / "work" / "objects");
    fs::create_directories(base_ / "packages");
    base_ = fs::canonical(base_);
    roots_.object_store = base_ / "work" / "objects";
    roots_.local = {base_ / "work", base_ / "packages"};
  }
  ~ArtifactUriTest() override { fs::remove_all(base_); }

  std::string Path(std::string_view uri) {
    auto path = LocalPathForUri(uri, roots_);
    EXPECT_TRUE(path.ok()) << uri << ": " << path.error().message;
    return path.ok() ? *path : "";
  }
  std::string Refusal(std::string_view uri) {
    auto path = LocalPathForUri(uri, roots_);
    EXPECT_FALSE(path.ok()) << uri << " gave " << *path;
    if (path.ok()) return "";
    EXPECT_EQ(path.error().code, kHttpBadRequest);
    return path.error().message;
  }

  fs::path base_;
  ArtifactRoots roots_;
};

TEST_F(ArtifactUriTest, ObjectStoresAreFoldersUnderTheObjectStoreRoot) {
  EXPECT_EQ(Path("gs://bucket/data.csv"), (roots_.object_store / "gcs/bucket/data.csv").string());
  EXPECT_EQ(Path("s3://b/k/x"), (roots_.object_store / "s3/b/k/x").string());
  EXPECT_EQ(Path("minio://b/./k//x"), (roots_.object_store / "minio/b/k/x").string());
  EXPECT_EQ(Path("oci://registry/model:1"),
            (roots_.object_store / "oci/registry_model:1/models").string());
  // A key that goes up and down again but stays inside is the object it names.
  EXPECT_EQ(Path("gs://b/a/../c"), (roots_.object_store / "gcs/b/c").string());
  // A leading slash in the key is not the machine's root.
  EXPECT_EQ(Path("gs:///etc/passwd"), (roots_.object_store / "gcs/etc/passwd").string());
}

TEST_F(ArtifactUriTest, WithoutAnObjectStoreFolderKeysAreKfpsInPodMounts) {
  roots_.object_store.clear();
  EXPECT_EQ(Path("gs://bucket/data.csv"), "/gcs/bucket/data.csv");
  EXPECT_EQ(Path("minio://b/x"), "/minio/b/x");
  EXPECT_EQ(Path("oci://r/m"), "/oci/r_m/models");
  EXPECT_THAT(Refusal("gs://b/../../etc/passwd"), HasSubstr("names no object inside the store"));
}

TEST_F(ArtifactUriTest, KeysThatClimbOutOfTheStoreAreRefused) {
  for (const char* uri : {"gs://b/../../etc/passwd", "s3://..", "minio://b/../..", "gs://",
                          "gs://.", "oci://..", "oci://"}) {
    EXPECT_THAT(Refusal(uri), HasSubstr("is refused")) << uri;
  }
}

TEST_F(ArtifactUriTest, LocalPathsMustLieBelowAnAllowedRoot) {
  std::ofstream(base_ / "work" / "run" / "a.txt");
  EXPECT_EQ(Path((base_ / "work/run/a.txt").string()), (base_ / "work/run/a.txt").string());
  EXPECT_EQ(Path((base_ / "packages/data.csv").string()), (base_ / "packages/data.csv").string());
  const std::string outside = Refusal("/etc/passwd");
  EXPECT_THAT(outside,
              HasSubstr("artifact URI '/etc/passwd' is refused: a local path must lie below"))
      << outside;
  Refusal("/proc/self/environ");
  Refusal("/");
  Refusal((base_ / "work/../../etc/passwd").string());
  Refusal((base_ / "work-other/x").string());  // a sibling sharing the root's prefix
  roots_.local.clear();
  Refusal((base_ / "work/run/a.txt").string());
}

TEST_F(ArtifactUriTest, ASymbolicLinkOutOfARootIsFollowedAndRefused) {
  fs::create_directories(base_ / "work" / "run");
  fs::create_directory_symlink("/etc", base_ / "work" / "run" / "etc");
  Refusal((base_ / "work/run/etc/passwd").string());
  fs::create_directory_symlink("/", roots_.object_store / "gcs");
  Refusal("gs://etc/passwd");
}

TEST_F(ArtifactUriTest, OtherSchemesAndNulBytesAreRefused) {
  EXPECT_THAT(Refusal("http://example.com/x"), HasSubstr("unsupported storage scheme"));
  Refusal("relative/path");
  Refusal("");
  EXPECT_THAT(Refusal(std::string_view("gs://b/a\0b", 10)), HasSubstr("NUL"));
}

const std::string kImporterPipeline =
    kfpbench::testing::TestData("ir/testdata/importer_pipeline.yaml");

PipelineSpec ImporterSpec(const std::string& constant) {
  std::string text = kImporterPipeline;
  text.replace(text.find("CONSTANT"), 8, constant);
  auto spec = ParsePipelineSpec(text);
  EXPECT_TRUE(spec.ok()) << spec.error().message;
  return spec.ok() ? *spec : PipelineSpec{};
}

TEST_F(ArtifactUriTest, ImporterUrisKnownAtRunCreationAreChecked) {
  const PipelineSpec good = ImporterSpec("gs://b/constant");
  EXPECT_TRUE(CheckImporterUris(good, {{"dataset_uri", "s3://b/x"}}, roots_).ok());
  Status by_parameter = CheckImporterUris(good, {{"dataset_uri", "/etc/passwd"}}, roots_);
  ASSERT_FALSE(by_parameter.ok());
  EXPECT_EQ(by_parameter.error().code, kHttpBadRequest);
  EXPECT_THAT(by_parameter.error().message,
              HasSubstr("task 'by-parameter': artifact URI '/etc/passwd'"))
      << by_parameter.error().message;
  Status by_constant =
      CheckImporterUris(ImporterSpec("/proc/self/environ"), {{"dataset_uri", "gs://b/x"}}, roots_);
  ASSERT_FALSE(by_constant.ok());
  EXPECT_THAT(by_constant.error().message, HasSubstr("task 'by-constant'"));
  // An empty URI is left to the importer, which fails as KFP's launcher does.
  EXPECT_TRUE(CheckImporterUris(good, {{"dataset_uri", ""}}, roots_).ok());
  // What KFP's importer records, it is given: any key of its stores, one
  // that climbs out included (the local copy is what stays confined).
  for (const char* uri : {"gs://b/../../../etc", "mem://x", "minio://b/k", "oci://r/m"}) {
    EXPECT_TRUE(CheckImporterUris(good, {{"dataset_uri", uri}}, roots_).ok()) << uri;
  }
  EXPECT_FALSE(CheckImporterUris(good, {{"dataset_uri", "http://example.com/x"}}, roots_).ok());
}

}  // namespace
}  // namespace kfpbench::ir
