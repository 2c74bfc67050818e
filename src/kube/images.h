// The image kfpbench's own pods and pipeline steps run. The repository names
// it ghcr.io/kfpbench/kfpbench (examples/pipelines, examples/jobs), which is
// published nowhere: a cluster gets the image a user built from the
// Dockerfile and pushed, and whatever kfpbench sends to a cluster names that.
#pragma once

#include <string>
#include <string_view>

namespace kfpbench::kube {

// The repository's placeholder, without a tag.
inline constexpr std::string_view kUnpublishedImage = "ghcr.io/kfpbench/kfpbench";

// Whether `image` is the placeholder, with any tag or digest.
bool IsUnpublishedImage(std::string_view image);

// `text` (a pipeline's YAML or JSON) with every reference to the placeholder
// image, whatever its tag or digest, replaced by `image`; `replaced` counts them.
std::string PointUnpublishedImages(const std::string& text, const std::string& image,
                                   int& replaced);

}  // namespace kfpbench::kube
