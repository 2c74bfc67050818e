// Artifact traffic for LARGE_DATASET benchmark steps: write a file of a given
// size (flushed to disk, so the time is the storage's, not the page cache's)
// or read one back, and say how long it took.
#pragma once

#include <cstdint>
#include <string>

#include "util/result.h"
#include "util/time.h"

namespace kfpbench::exec {

struct ArtifactTransfer {
  int64_t bytes = 0;
  Duration elapsed{};
  double BytesPerSecond() const;
};

// Creates parent folders. Data is pseudo-random, so compressing storage
// cannot make the test look faster than real data would.
Result<ArtifactTransfer> WriteArtifact(const std::string& path, int64_t bytes);
Result<ArtifactTransfer> ReadArtifact(const std::string& path);

}  // namespace kfpbench::exec
