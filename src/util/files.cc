#include "util/files.h"

#include <algorithm>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace kfpbench {

std::optional<std::filesystem::path> ResolveWithin(const std::filesystem::path& path,
                                                   const std::filesystem::path& root) {
  std::error_code ec;
  std::filesystem::path resolved = std::filesystem::weakly_canonical(path, ec);
  if (ec) return std::nullopt;
  const std::filesystem::path allowed = std::filesystem::weakly_canonical(root, ec);
  if (ec || allowed.empty()) return std::nullopt;
  auto [a, r] = std::mismatch(allowed.begin(), allowed.end(), resolved.begin(), resolved.end());
  // A trailing separator in `root` leaves one empty element behind.
  if (a != allowed.end() && !(std::next(a) == allowed.end() && a->empty())) return std::nullopt;
  return resolved;
}

Result<std::string> ReadFile(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return Error{fmt::format("cannot read {}: it is a folder", path.string())};
  }
  std::FILE* f = std::fopen(path.c_str(), "rbe");
  if (f == nullptr) {
    return Error{fmt::format("cannot read {}: {}", path.string(), std::strerror(errno))};
  }
  std::string text;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  bool failed = std::ferror(f) != 0;
  int saved = errno;
  std::fclose(f);
  if (failed) return Error{fmt::format("cannot read {}: {}", path.string(), std::strerror(saved))};
  return text;
}

Result<std::string> ReadRegularFile(const std::filesystem::path& path, size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO with no writer returns at once (and fstat
  // then refuses it) instead of waiting for one.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return Error{fmt::format("cannot read {}: {}", path.string(), std::strerror(errno))};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Error{fmt::format("cannot read {}: not a regular file", path.string())};
  }
  auto too_large = [&] {
    return Error{fmt::format("cannot read {}: larger than {} bytes", path.string(), max_bytes)};
  };
  if (static_cast<uintmax_t>(st.st_size) > max_bytes) {
    ::close(fd);
    return too_large();
  }
  std::string text;
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int saved = errno;
      ::close(fd);
      return Error{fmt::format("cannot read {}: {}", path.string(), std::strerror(saved))};
    }
    if (n == 0) break;
    if (text.size() + static_cast<size_t>(n) > max_bytes) {
      ::close(fd);
      return too_large();
    }
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

Status WriteFileAtomically(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::path tmp = path;
  tmp += ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wbe");
  if (!f) return Error{fmt::format("cannot write {}: {}", tmp.string(), std::strerror(errno))};
  size_t written = std::fwrite(text.data(), 1, text.size(), f);
  bool failed = written != text.size() || std::fflush(f) != 0;
  int saved = errno;
  if (std::fclose(f) != 0 && !failed) {
    failed = true;
    saved = errno;
  }
  if (failed) {
    std::remove(tmp.c_str());
    return Error{fmt::format("cannot write {}: {}", path.string(), std::strerror(saved))};
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Error{fmt::format("cannot write {}: {}", path.string(), ec.message())};
  return Ok();
}

}  // namespace kfpbench
