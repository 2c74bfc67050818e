#include "exec/peak_rss.h"

#include <dirent.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>
#include "util/files.h"

namespace kfpbench::exec {
namespace {

// Bounds the walk so a fork bomb in a step cannot stall the reaper.
constexpr size_t kMaxTreeProcesses = 4096;

int64_t ReadPeakRss(const std::string& status_path) {
  std::string status = ReadSmallFile(status_path);
  size_t pos = status.find("\nVmHWM:");
  if (pos == std::string::npos) return 0;  // gone, zombie or kernel thread
  return std::strtoll(status.c_str() + pos + 7, nullptr, 10) * 1024;  // "  1234 kB"
}

void AppendChildren(pid_t pid, std::vector<pid_t>* out) {
  const std::string task_dir = fmt::format("/proc/{}/task", pid);
  DIR* dir = opendir(task_dir.c_str());
  if (dir == nullptr) return;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    std::string children = ReadSmallFile(fmt::format("{}/{}/children", task_dir, entry->d_name));
    const char* p = children.c_str();
    char* end = nullptr;
    for (long child = std::strtol(p, &end, 10); end != p; child = std::strtol(p, &end, 10)) {
      out->push_back(static_cast<pid_t>(child));
      p = end;
    }
  }
  closedir(dir);
}

}  // namespace

int64_t ProcessPeakRss(pid_t pid) { return ReadPeakRss(fmt::format("/proc/{}/status", pid)); }

int64_t TreePeakRss(pid_t pid) {
  int64_t peak = 0;
  std::vector<pid_t> pending = {pid};
  for (size_t seen = 0; !pending.empty() && seen < kMaxTreeProcesses; ++seen) {
    pid_t next = pending.back();
    pending.pop_back();
    peak = std::max(peak, ProcessPeakRss(next));
    AppendChildren(next, &pending);
  }
  return peak;
}

int64_t SelfPeakRss() { return ReadPeakRss("/proc/self/status"); }

int64_t EstimatePeakRss(int64_t ru_maxrss_bytes, int64_t inherited_bytes, int64_t sampled_bytes) {
  if (ru_maxrss_bytes > inherited_bytes) return std::max(ru_maxrss_bytes, sampled_bytes);
  return sampled_bytes;
}

}  // namespace kfpbench::exec
