// Test helpers for every part's tests: reading a shell command's output and
// looking for text in what a test produced. Header-only and without gtest, so
// any part's tests may include it.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace kfpbench::testing {

// Runs a shell command and returns what it printed on stdout.
inline std::string CommandOutput(const std::string& command) {
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  if (!p) return out;
  char buf[65536];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  pclose(p);
  return out;
}

// How often `what` occurs in `text`.
inline size_t CountOf(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The text from `from` up to `to` (empty when `from` is missing).
inline std::string Between(const std::string& text, const std::string& from,
                           const std::string& to) {
  size_t start = text.find(from);
  return start == std::string::npos ? "" : text.substr(start, text.find(to, start) - start);
}

// A file's text; empty when it cannot be read.
inline std::string ReadText(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A test-data file below src/ ("engine/testdata/retry.yaml"), whole. The
// pipelines several tests share live there as files, not as copies in each
// test. A missing file is a broken checkout, not a test result: it aborts
// naming the path.
inline std::string TestData(const std::string& below_src) {
  const std::filesystem::path path = std::filesystem::path(KFPBENCH_SOURCE_DIR) / "src" / below_src;
  if (!std::filesystem::is_regular_file(path)) {
    std::fprintf(stderr, "missing test data: %s\n", path.c_str());
    std::abort();
  }
  return ReadText(path);
}

}  // namespace kfpbench::testing
