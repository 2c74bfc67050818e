#include "server/work_root.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstring>
#include <regex>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "util/ids.h"

namespace kfpbench::server {
namespace {

namespace fs = std::filesystem;

constexpr const char* kOwnerFile = ".owner";

// The lock on `folder`'s owner file, taken without waiting; -1 when another
// process holds it or there is none.
int TryLock(const fs::path& folder, bool create) {
  int flags = O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0);
  int fd = ::open((folder / kOwnerFile).c_str(), flags, 0600);
  if (fd < 0) return -1;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

size_t SweepStaleWorkRoots(const fs::path& parent) {
  static const std::regex ours(R"(kfpbench-[0-9]+-[0-9a-f]{8})");
  size_t removed = 0;
  std::error_code ec;
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& folder = it->path();
    if (!std::regex_match(folder.filename().string(), ours) || !it->is_directory(ec)) continue;
    int fd = TryLock(folder, /*create=*/false);
    if (fd < 0) continue;  // alive, or not ours to judge
    std::error_code remove_ec;
    fs::remove_all(folder, remove_ec);
    ::close(fd);
    if (remove_ec) {
      spdlog::warn("cannot remove {}, left by a kfpbench server that is gone: {}", folder.string(),
                   remove_ec.message());
    } else {
      ++removed;
    }
  }
  if (removed > 0) {
    spdlog::info("removed {} work folder(s) left under {} by kfpbench servers that were killed",
                 removed, parent.string());
  }
  return removed;
}

Result<TempWorkRoot> TempWorkRoot::Create(const fs::path& parent) {
  SweepStaleWorkRoots(parent);
  fs::path path = parent / fmt::format("kfpbench-{}-{}", ::getpid(), NewUuid().substr(0, 8));
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) {
    return Error{fmt::format("cannot create work directory {}: {}", path.string(), ec.message())};
  }
  int fd = TryLock(path, /*create=*/true);
  if (fd < 0) {
    return Error{
        fmt::format("cannot lock {}: {}", (path / kOwnerFile).string(), std::strerror(errno))};
  }
  return TempWorkRoot(std::move(path), fd);
}

TempWorkRoot::TempWorkRoot(TempWorkRoot&& other) noexcept
    : path_(std::move(other.path_)), lock_fd_(other.lock_fd_) {
  other.path_.clear();
  other.lock_fd_ = -1;
}

TempWorkRoot::~TempWorkRoot() {
  if (!path_.empty()) {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

}  // namespace kfpbench::server
