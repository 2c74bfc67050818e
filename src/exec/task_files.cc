#include "exec/task_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "util/strings.h"

namespace kfpbench::exec {
namespace {

// Owns a descriptor.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// Reads [offset, offset + size) or less at end of file.
bool ReadRange(int fd, off_t offset, size_t size, std::string* out) {
  out->resize(size);
  size_t got = 0;
  while (got < size) {
    ssize_t n = pread(fd, out->data() + got, size - got, offset + static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  out->resize(got);
  return true;
}

}  // namespace

Status PrepareOutputFiles(const std::map<std::string, std::filesystem::path>& files) {
  for (const auto& [name, path] : files) {
    std::error_code ec;
    if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
    if (!ec) std::filesystem::remove(path, ec);
    if (ec) {
      return Error{fmt::format("cannot prepare output parameter '{}' at {}: {}", name,
                               path.string(), ec.message())};
    }
  }
  return Ok();
}

Result<std::map<std::string, std::string>> ReadOutputParameters(
    const std::map<std::string, std::filesystem::path>& files, size_t max_bytes) {
  std::map<std::string, std::string> values;
  std::vector<std::string> problems;
  for (const auto& [name, path] : files) {
    Fd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) {
      if (errno == ENOENT) {
        problems.push_back(
            fmt::format("step did not write output parameter '{}' to {}", name, path.string()));
      } else {
        problems.push_back(fmt::format("cannot read output parameter '{}' from {}: {}", name,
                                       path.string(), std::strerror(errno)));
      }
      continue;
    }
    struct stat st;
    if (fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
      problems.push_back(
          fmt::format("output parameter '{}' at {} is not a regular file", name, path.string()));
      continue;
    }
    if (static_cast<size_t>(st.st_size) > max_bytes) {
      problems.push_back(fmt::format("output parameter '{}' at {} is {} bytes, more than {}", name,
                                     path.string(), st.st_size, max_bytes));
      continue;
    }
    std::string value;
    if (!ReadRange(fd.get(), 0, static_cast<size_t>(st.st_size), &value)) {
      problems.push_back(fmt::format("cannot read output parameter '{}' from {}: {}", name,
                                     path.string(), std::strerror(errno)));
      continue;
    }
    // KFP's launcher fails the task here too: a parameter is a protobuf
    // string, which it cannot write to ML Metadata unless it is UTF-8.
    if (!IsValidUtf8(value)) {
      problems.push_back(
          fmt::format("output parameter '{}' at {} is not valid UTF-8", name, path.string()));
      continue;
    }
    values.emplace(name, std::move(value));
  }
  if (!problems.empty()) return Error{fmt::format("{}", fmt::join(problems, "; "))};
  return values;
}

std::string ReadLogTail(const std::filesystem::path& path, size_t max_bytes) {
  Fd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat st;
  if (fd.get() < 0 || fstat(fd.get(), &st) != 0) return "";
  const size_t size = static_cast<size_t>(st.st_size);
  const size_t take = std::min(size, max_bytes);
  std::string tail;
  if (!ReadRange(fd.get(), static_cast<off_t>(size - take), take, &tail)) return "";
  if (take < size) {
    // Drop the partial first line, unless the whole tail is one line.
    size_t nl = tail.find('\n');
    if (nl != std::string::npos && nl + 1 < tail.size()) tail.erase(0, nl + 1);
  }
  while (!tail.empty() && std::isspace(static_cast<unsigned char>(tail.back()))) tail.pop_back();
  // The tail goes into the task's error, a JSON string: binary output, or a
  // character the cut split, must not make it unwritable.
  return ToValidUtf8(tail);
}

}  // namespace kfpbench::exec
