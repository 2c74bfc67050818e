#include "kube/images.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kfpbench::kube {
namespace {

using ::testing::HasSubstr;

TEST(Images, ThePlaceholderWithAnyTagOrDigestIsUnpublished) {
  EXPECT_TRUE(IsUnpublishedImage("ghcr.io/kfpbench/kfpbench"));
  EXPECT_TRUE(IsUnpublishedImage("ghcr.io/kfpbench/kfpbench:latest"));
  EXPECT_TRUE(IsUnpublishedImage("ghcr.io/kfpbench/kfpbench@sha256:abc"));
  EXPECT_FALSE(IsUnpublishedImage("registry.example.com/kfpbench/kfpbench:0.1.0"));
  EXPECT_FALSE(IsUnpublishedImage("ghcr.io/kfpbench/kfpbench-extra:1"));
}

TEST(Images, PipelineStepsArePointedAtTheBuiltImage) {
  const std::string yaml = R"(deploymentSpec:
  executors:
    exec-a:
      container:
        image: ghcr.io/kfpbench/kfpbench:latest
    exec-b:
      container:
        image: 'ghcr.io/kfpbench/kfpbench'
    exec-c:
      container:
        image: python:3.11
    exec-d:
      container:
        image: ghcr.io/kfpbench/kfpbench-other:1
)";
  int replaced = 0;
  std::string out = PointUnpublishedImages(yaml, "reg.example/k/kfpbench:0.1.0", replaced);
  EXPECT_EQ(replaced, 2);
  EXPECT_THAT(out, HasSubstr("        image: reg.example/k/kfpbench:0.1.0\n    exec-b")) << out;
  EXPECT_THAT(out, HasSubstr("image: 'reg.example/k/kfpbench:0.1.0'")) << out;
  EXPECT_THAT(out, HasSubstr("image: python:3.11"));
  EXPECT_THAT(out, HasSubstr("ghcr.io/kfpbench/kfpbench-other:1"));

  const std::string json =
      R"({"image":"ghcr.io/kfpbench/kfpbench:0.1.0","x":["ghcr.io/kfpbench/kfpbench@sha256:00ff"]})";
  EXPECT_EQ(PointUnpublishedImages(json, "r/i:1", replaced), R"({"image":"r/i:1","x":["r/i:1"]})");
  EXPECT_EQ(replaced, 2);
  EXPECT_EQ(PointUnpublishedImages("no image here", "r/i:1", replaced), "no image here");
  EXPECT_EQ(replaced, 0);
}

}  // namespace
}  // namespace kfpbench::kube
