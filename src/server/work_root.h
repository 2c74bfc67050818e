// The embedded backend's own work folder when none is given: a folder
// `kfpbench-<pid>-<id>` under the system's temp folder, removed when the
// server stops. A server killed by SIGKILL (or a crash) cannot remove it, so
// each folder holds an `.owner` file the server keeps locked (flock) while it
// lives; the next server to start removes every such folder whose lock is
// free. A lock, not the pid, says who is alive: pids are reused, and a
// server in another pid namespace may share the temp folder.
#pragma once

#include <filesystem>

#include "util/result.h"

namespace kfpbench::server {

class TempWorkRoot {
 public:
  // Sweeps the folders servers that died left under `parent`, then makes
  // and locks this server's own.
  static Result<TempWorkRoot> Create(const std::filesystem::path& parent);
  TempWorkRoot(TempWorkRoot&& other) noexcept;
  TempWorkRoot& operator=(TempWorkRoot&&) = delete;
  // Removes the folder and releases the lock.
  ~TempWorkRoot();

  const std::filesystem::path& path() const { return path_; }

 private:
  TempWorkRoot(std::filesystem::path path, int lock_fd)
      : path_(std::move(path)), lock_fd_(lock_fd) {}

  std::filesystem::path path_;
  int lock_fd_ = -1;
};

// Removes the folders under `parent` named as TempWorkRoot names them whose
// `.owner` lock no process holds; folders without one are left alone.
// Returns how many were removed.
size_t SweepStaleWorkRoots(const std::filesystem::path& parent);

}  // namespace kfpbench::server
