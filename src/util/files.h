// Reading small files whole (/proc, cgroup control files).
#pragma once

#include <cstdio>
#include <filesystem>
#include <string>

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

}  // namespace kfpbench
