// A growing array whose elements never move: fixed chunks found by a shift
// and a mask. The engine's attempt slots live in one, referred to by address
// while it grows. A std::deque would do, but its blocks are 512 bytes (two
// 192-byte attempts, each block its own aligned allocation) and it reaches
// an element through a division and a block map.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace kfpbench::engine {

template <typename T, unsigned kChunkBits = 6>
class StableVector {
 public:
  T& operator[](size_t i) { return chunks_[i >> kChunkBits][i & kMask]; }
  const T& operator[](size_t i) const { return chunks_[i >> kChunkBits][i & kMask]; }
  size_t size() const { return size_; }

  // One more element, default-constructed (a whole chunk is, when it is made).
  T& emplace_back() {
    if ((size_ >> kChunkBits) == chunks_.size()) chunks_.push_back(std::make_unique<T[]>(kChunk));
    return (*this)[size_++];
  }

 private:
  static constexpr size_t kChunk = size_t{1} << kChunkBits;
  static constexpr size_t kMask = kChunk - 1;
  std::vector<std::unique_ptr<T[]>> chunks_;
  size_t size_ = 0;
};

}  // namespace kfpbench::engine
