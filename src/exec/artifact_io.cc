#include "exec/artifact_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <random>
#include <vector>

#include <fmt/format.h>

namespace kfpbench::exec {
namespace {

constexpr size_t kChunk = 1 << 20;

Error IoError(const char* what, const std::string& path) {
  return Error{fmt::format("cannot {} artifact {}: {}", what, path, std::strerror(errno))};
}

}  // namespace

double ArtifactTransfer::BytesPerSecond() const {
  double s = ToSeconds(elapsed);
  return s > 0 ? bytes / s : 0;
}

Result<ArtifactTransfer> WriteArtifact(const std::string& path, int64_t bytes) {
  if (bytes < 0) return Error{"artifact size must not be negative"};
  std::error_code ec;
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  std::vector<uint64_t> chunk(kChunk / sizeof(uint64_t));
  std::mt19937_64 rng(0x6b667062);
  for (auto& word : chunk) word = rng();
  auto start = std::chrono::steady_clock::now();
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return IoError("create", path);
  int64_t left = bytes;
  while (left > 0) {
    // Vary each chunk a little so identical blocks cannot be deduplicated.
    chunk[0] = rng();
    size_t n = static_cast<size_t>(std::min<int64_t>(left, kChunk));
    const char* p = reinterpret_cast<const char*>(chunk.data());
    while (n > 0) {
      ssize_t w = ::write(fd, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) {
        Error e = IoError("write", path);  // e.g. "No space left on device"
        ::close(fd);
        return e;
      }
      p += w;
      n -= static_cast<size_t>(w);
      left -= w;
    }
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) return IoError("flush", path);
  return ArtifactTransfer{bytes, std::chrono::steady_clock::now() - start};
}

Result<ArtifactTransfer> ReadArtifact(const std::string& path) {
  auto start = std::chrono::steady_clock::now();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError("open", path);
  std::vector<char> buffer(kChunk);
  int64_t total = 0;
  for (;;) {
    ssize_t r = ::read(fd, buffer.data(), buffer.size());
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      Error e = IoError("read", path);
      ::close(fd);
      return e;
    }
    if (r == 0) break;
    total += r;
  }
  ::close(fd);
  return ArtifactTransfer{total, std::chrono::steady_clock::now() - start};
}

}  // namespace kfpbench::exec
