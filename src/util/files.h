// Files read whole and written so that no reader ever sees half of one.
#pragma once

#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>

#include "util/result.h"

namespace kfpbench {

// The file's bytes; empty when it cannot be read (a process or cgroup that
// just went away reads as nothing, which callers treat as "gone").
inline std::string ReadSmallFile(const std::filesystem::path& path) {
  std::string text;
  std::FILE* f = std::fopen(path.c_str(), "re");
  if (f == nullptr) return text;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  std::fclose(f);
  return text;
}

// The file's bytes, or an Error "cannot read PATH: why".
Result<std::string> ReadFile(const std::filesystem::path& path);

// The bytes of a regular file of at most `max_bytes`, or an Error naming the
// file and why not. For files a user or another program may point anywhere
// (a capture folder edited by hand, a token file): a device (/dev/zero,
// /dev/urandom) or a FIFO is refused without waiting on it, and a file that
// grows past the cap while read is refused at the cap.
Result<std::string> ReadRegularFile(const std::filesystem::path& path, size_t max_bytes);

// `path` with '.', '..' and the symbolic links of what exists resolved, when
// that lies at or below `root` (resolved alike); nullopt otherwise. The one
// check for every path a request or a file may name under a folder it is
// confined to (package_url, importer URIs, the artifact read endpoint).
std::optional<std::filesystem::path> ResolveWithin(const std::filesystem::path& path,
                                                   const std::filesystem::path& root);

// Writes `text` to `path` through a temporary file in the same folder, then
// renames it into place. A full disk or a missing folder is an Error naming
// the file, and the old file (if any) stays whole.
Status WriteFileAtomically(const std::filesystem::path& path, const std::string& text);

}  // namespace kfpbench
