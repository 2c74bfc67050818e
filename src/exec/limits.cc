#include "exec/limits.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ir/quantity.h"
#include "util/files.h"

namespace kfpbench::exec {
namespace fs = std::filesystem;
namespace {

// Kubernetes' CFS period; the quota is the limit's share of it.
constexpr int64_t kCfsPeriodUs = 100000;
// The kernel refuses quotas under 1 ms.
constexpr int64_t kMinCfsQuotaUs = 1000;

std::atomic<uint64_t> g_next_parent{0};

// Cgroup control files take one write(2) each; errors come back from it.
Status WriteControl(const fs::path& path, const std::string& value) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return Error{fmt::format("cannot open {}: {}", path.string(), strerror(errno))};
  ssize_t n = write(fd, value.data(), value.size());
  int err = errno;
  close(fd);
  if (n < 0) {
    return Error{fmt::format("cannot write '{}' to {}: {}", value, path.string(), strerror(err)),
                 err};
  }
  return Ok();
}

std::optional<int64_t> ReadInt(const fs::path& path) {
  std::string text = ReadSmallFile(path);
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (end == text.c_str()) return std::nullopt;
  return static_cast<int64_t>(v);
}

// "key value" lines (memory.oom_control, cpu.stat).
std::optional<int64_t> ReadKey(const fs::path& path, const std::string& key) {
  std::istringstream in(ReadSmallFile(path));
  std::string k;
  int64_t v;
  while (in >> k >> v) {
    if (k == key) return v;
  }
  return std::nullopt;
}

std::vector<std::string> Split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, sep)) parts.push_back(part);
  return parts;
}

// Controller name -> this process's cgroup path in that v1 hierarchy.
std::map<std::string, std::string> OwnCgroups(const fs::path& proc_self_cgroup) {
  std::map<std::string, std::string> out;
  std::istringstream in(ReadSmallFile(proc_self_cgroup));
  std::string line;
  while (std::getline(in, line)) {
    // "4:memory:/a/b" or "1:cpu,cpuacct:/"; the v2 line is "0::/".
    size_t first = line.find(':');
    size_t second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    for (const auto& controller : Split(line.substr(first + 1, second - first - 1), ',')) {
      if (!controller.empty()) out[controller] = line.substr(second + 1);
    }
  }
  return out;
}

struct Mount {
  std::string root;  // the hierarchy path mounted
  fs::path mount_point;
};

// Controller name -> where its v1 hierarchy is mounted.
std::map<std::string, Mount> CgroupMounts(const fs::path& mountinfo) {
  std::map<std::string, Mount> out;
  std::istringstream in(ReadSmallFile(mountinfo));
  std::string line;
  while (std::getline(in, line)) {
    // id parent major:minor root mount-point options [optional...] - fstype source super-options
    std::vector<std::string> fields = Split(line, ' ');
    auto dash = std::find(fields.begin(), fields.end(), "-");
    if (fields.size() < 5 || dash == fields.end() || fields.end() - dash < 4) continue;
    if (*(dash + 1) != "cgroup") continue;
    for (const auto& option : Split(*(dash + 3), ',')) {
      if (!out.contains(option)) out[option] = Mount{fields[3], fields[4]};
    }
  }
  return out;
}

// The directory of this process's cgroup for `controller`, or empty.
fs::path OwnDir(const std::map<std::string, std::string>& own,
                const std::map<std::string, Mount>& mounts, const std::string& controller) {
  auto c = own.find(controller);
  auto m = mounts.find(controller);
  if (c == own.end() || m == mounts.end()) return {};
  const std::string& path = c->second;
  const std::string& root = m->second.root;
  // Our cgroup must be inside what is mounted (a container sees its own root).
  if (root != "/" && path != root && !path.starts_with(root + "/")) return {};
  std::string relative = root == "/" ? path : path.substr(root.size());
  fs::path dir = m->second.mount_point;
  if (!relative.empty() && relative != "/") dir /= fs::path(relative).relative_path();
  return dir;
}

bool IsPidAlive(pid_t pid) { return kill(pid, 0) == 0 || errno == EPERM; }

// SIGKILLs every process in `dir`, then removes it, waiting (bounded) for the
// killed processes to leave.
bool KillAndRemove(const fs::path& dir) {
  for (int attempt = 0; attempt < 200; ++attempt) {
    if (rmdir(dir.c_str()) == 0 || errno == ENOENT) return true;
    if (errno != EBUSY) return false;
    std::istringstream procs(ReadSmallFile(dir / "cgroup.procs"));
    pid_t pid;
    while (procs >> pid) kill(pid, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// Removes `dir` and the cgroups below it, deepest first.
void RemoveTree(const fs::path& dir) {
  std::error_code ec;
  std::vector<fs::path> children;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_directory(ec)) children.push_back(entry.path());
  }
  for (const auto& child : children) RemoveTree(child);
  KillAndRemove(dir);
}

// Parents of servers that died without cleaning up (SIGKILL): "kfpbench-<pid>-<n>"
// whose pid is gone. Their steps are killed; a restarted server fails their runs.
void SweepStale(const fs::path& own_dir) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(own_dir, ec)) {
    std::string name = entry.path().filename().string();
    if (!name.starts_with("kfpbench-")) continue;
    pid_t pid = static_cast<pid_t>(std::atoi(name.c_str() + 9));
    if (pid > 0 && pid != getpid() && !IsPidAlive(pid)) RemoveTree(entry.path());
  }
}

// A cgroup name from a task id: pod-name-like already, but never trusted as a path.
std::string CgroupName(uint64_t id, const std::string& task_id) {
  std::string name = fmt::format("{}-", id);
  for (char c : task_id.substr(0, 120)) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.';
    name.push_back(ok ? c : '_');
  }
  return name;
}

}  // namespace

std::string OomKilledMessage(int64_t memory_limit) {
  if (memory_limit <= 0) return "OOMKilled: out of memory";
  return fmt::format("OOMKilled: exceeded memory limit {}", ir::FormatQuantityBytes(memory_limit));
}

Limiter::Limiter(LimiterOptions options) : options_(std::move(options)) {
  if (!options_.use_cgroups) {
    why_not_ = "cgroups disabled";
    return;
  }
  auto own = OwnCgroups(options_.proc_self_cgroup);
  auto mounts = CgroupMounts(options_.proc_self_mountinfo);
  const std::string parent_name =
      fmt::format("kfpbench-{}-{}", getpid(), g_next_parent.fetch_add(1));
  std::vector<std::string> problems;
  auto make_parent = [&](const std::string& controller) -> fs::path {
    fs::path own_dir = OwnDir(own, mounts, controller);
    if (own_dir.empty()) {
      problems.push_back(fmt::format("no cgroup v1 {} hierarchy", controller));
      return {};
    }
    SweepStale(own_dir);
    fs::path parent = own_dir / parent_name;
    if (mkdir(parent.c_str(), 0755) != 0 && errno != EEXIST) {
      problems.push_back(fmt::format("cannot create {}: {}", parent.string(), strerror(errno)));
      return {};
    }
    return parent;
  };
  memory_parent_ = make_parent("memory");
  cpu_parent_ = make_parent("cpu");
  if (!cpu_parent_.empty() && fs::exists(cpu_parent_ / "cpuacct.usage")) {
    cpuacct_parent_ = cpu_parent_;  // co-mounted cpu,cpuacct
  } else {
    cpuacct_parent_ = make_parent("cpuacct");
  }
  for (const auto& p : problems) {
    if (!why_not_.empty()) why_not_ += "; ";
    why_not_ += p;
  }
}

Limiter::~Limiter() {
  for (const fs::path* parent : {&memory_parent_, &cpu_parent_, &cpuacct_parent_}) {
    if (!parent->empty()) RemoveTree(*parent);
  }
}

std::string Limiter::Describe() const {
  std::vector<std::string> used;
  if (!memory_parent_.empty()) used.push_back(fmt::format("memory {}", memory_parent_.string()));
  if (!cpu_parent_.empty()) used.push_back(fmt::format("cpu {}", cpu_parent_.string()));
  if (!cpuacct_parent_.empty() && cpuacct_parent_ != cpu_parent_) {
    used.push_back(fmt::format("cpuacct {}", cpuacct_parent_.string()));
  }
  std::string text =
      used.empty() ? std::string("no cgroups") : fmt::format("cgroups: {}", fmt::join(used, ", "));
  if (!why_not_.empty()) fmt::format_to(std::back_inserter(text), " ({})", why_not_);
  return text;
}

Result<TaskCgroup> Limiter::Prepare(const std::string& task_id, const engine::Resources& resources,
                                    std::string& note) {
  note.clear();
  TaskCgroup cgroup;
  const std::string name = CgroupName(next_id_++, task_id);
  auto fail = [&](Error error) -> Result<TaskCgroup> {
    Remove(cgroup);
    return error;
  };
  auto make = [&](const fs::path& parent, fs::path& dir) -> Status {
    dir = parent / name;
    if (mkdir(dir.c_str(), 0755) != 0) {
      Error error{fmt::format("cannot create cgroup {}: {}", dir.string(), strerror(errno))};
      dir.clear();
      return error;
    }
    return Ok();
  };

  std::vector<std::string> not_enforced;
  if (!memory_parent_.empty()) {
    if (auto made = make(memory_parent_, cgroup.memory); !made.ok()) return fail(made.error());
    if (resources.memory_limit > 0) {
      const std::string limit = std::to_string(resources.memory_limit);
      if (auto set = WriteControl(cgroup.memory / "memory.limit_in_bytes", limit); !set.ok()) {
        return fail(set.error());
      }
      // Without swap accounting this file is absent; with it, swap must not
      // become a way around the limit (a container has no swap either).
      if (fs::exists(cgroup.memory / "memory.memsw.limit_in_bytes")) {
        if (auto set = WriteControl(cgroup.memory / "memory.memsw.limit_in_bytes", limit);
            !set.ok()) {
          return fail(set.error());
        }
      }
      cgroup.memory_limit = resources.memory_limit;
    }
  } else if (resources.memory_limit > 0) {
    cgroup.address_space_limit = resources.memory_limit;
    not_enforced.push_back(fmt::format("memory limit {} applied as RLIMIT_AS (address space)",
                                       ir::FormatQuantityBytes(resources.memory_limit)));
  }

  if (!cpu_parent_.empty()) {
    if (auto made = make(cpu_parent_, cgroup.cpu); !made.ok()) return fail(made.error());
    // Like the kubelet: shares from the request (else the limit), quota from the limit.
    const double weight = resources.cpu_request > 0 ? resources.cpu_request : resources.cpu_limit;
    if (weight > 0) {
      auto shares = std::max<int64_t>(2, std::llround(weight * 1024));
      if (auto set = WriteControl(cgroup.cpu / "cpu.shares", std::to_string(shares)); !set.ok()) {
        return fail(set.error());
      }
    }
    if (resources.cpu_limit > 0) {
      auto quota =
          std::max<int64_t>(kMinCfsQuotaUs, std::llround(resources.cpu_limit * kCfsPeriodUs));
      if (auto set = WriteControl(cgroup.cpu / "cpu.cfs_period_us", std::to_string(kCfsPeriodUs));
          !set.ok()) {
        return fail(set.error());
      }
      if (auto set = WriteControl(cgroup.cpu / "cpu.cfs_quota_us", std::to_string(quota));
          !set.ok()) {
        return fail(set.error());
      }
    }
  } else if (resources.cpu_limit > 0) {
    not_enforced.push_back(fmt::format("CPU limit {} is not enforced", resources.cpu_limit));
  }

  if (!cpuacct_parent_.empty()) {
    if (cpuacct_parent_ == cpu_parent_) {
      cgroup.cpuacct = cgroup.cpu;
    } else if (auto made = make(cpuacct_parent_, cgroup.cpuacct); !made.ok()) {
      return fail(made.error());
    }
  }

  if (!not_enforced.empty()) {
    note = fmt::format("kfpbench: {} here ({})", fmt::join(not_enforced, "; "),
                       why_not_.empty() ? "no cgroups" : why_not_);
  }
  return cgroup;
}

WrappedCommand WrapForLimits(const TaskCgroup& cgroup, std::string path,
                             std::vector<std::string> argv) {
  std::vector<std::string> procs;
  for (const fs::path* dir : {&cgroup.memory, &cgroup.cpu, &cgroup.cpuacct}) {
    if (dir->empty()) continue;
    std::string file = (*dir / "cgroup.procs").string();
    if (std::find(procs.begin(), procs.end(), file) == procs.end()) procs.push_back(file);
  }
  if (procs.empty() && cgroup.address_space_limit <= 0) return {std::move(path), std::move(argv)};
  // $1: how many cgroup.procs files follow; then the files; then the step's
  // path and arguments. 125 (like env's "cannot run") if any of it fails.
  std::string script = "n=$1; shift; ";
  if (cgroup.address_space_limit > 0) {
    // ulimit -v counts KiB; round down so the limit is never looser.
    script += fmt::format("ulimit -v {} || exit 125; ", cgroup.address_space_limit / 1024);
  }
  script +=
      "while [ \"$n\" -gt 0 ]; do echo $$ > \"$1\" || exit 125; shift; n=$((n - 1)); done; "
      "exec \"$@\"";
  std::vector<std::string> wrapped = {"sh", "-c", std::move(script), "kfpbench-limits",
                                      std::to_string(procs.size())};
  wrapped.insert(wrapped.end(), procs.begin(), procs.end());
  wrapped.push_back(std::move(path));
  wrapped.insert(wrapped.end(), std::make_move_iterator(argv.begin() + (argv.empty() ? 0 : 1)),
                 std::make_move_iterator(argv.end()));
  return {"/bin/sh", std::move(wrapped)};
}

TaskUsage Limiter::Collect(const TaskCgroup& cgroup) const {
  TaskUsage usage;
  if (!cgroup.memory.empty()) {
    usage.peak_memory_bytes = ReadInt(cgroup.memory / "memory.max_usage_in_bytes");
    // oom_kill counts the cgroup's OOM kills (Linux 4.13+). Older kernels
    // only say the limit was hit (failcnt), which reclaim also does, so
    // that alone is not called an OOM kill.
    if (auto kills = ReadKey(cgroup.memory / "memory.oom_control", "oom_kill")) {
      usage.oom_killed = *kills > 0;
    }
  }
  if (!cgroup.cpuacct.empty()) {
    if (auto ns = ReadInt(cgroup.cpuacct / "cpuacct.usage")) usage.cpu_seconds = *ns / 1e9;
  }
  return usage;
}

void Limiter::Remove(const TaskCgroup& cgroup) const {
  for (const fs::path* dir : {&cgroup.memory, &cgroup.cpu, &cgroup.cpuacct}) {
    if (!dir->empty()) KillAndRemove(*dir);
  }
}

}  // namespace kfpbench::exec
