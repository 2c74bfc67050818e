#include "exec/resource_sampler.h"

#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>
#include "util/files.h"

namespace kfpbench::exec {
namespace {

using SteadyClock = std::chrono::steady_clock;

// Bounds one scan of /proc, so a fork bomb cannot stall sampling.
constexpr size_t kMaxProcesses = 65536;

// The fields of /proc/<pid>/stat we use.
struct ProcStat {
  pid_t pid = 0;
  pid_t ppid = 0;
  pid_t pgrp = 0;
  uint64_t cpu_ticks = 0;  // utime + stime + cutime + cstime
  uint64_t start_ticks = 0;
  int64_t rss_pages = 0;
};

std::optional<ProcStat> ReadProcStat(pid_t pid) {
  std::string text = ReadSmallFile(fmt::format("/proc/{}/stat", pid));
  // The command name (field 2) may hold spaces and parentheses: fields resume
  // after the last ')'.
  size_t close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  const char* p = text.c_str() + close + 1;
  // Field 3 (state) onward; index i here is field i + 3.
  std::vector<const char*> fields;
  while (*p != '\0' && fields.size() < 22) {
    while (*p == ' ') ++p;
    if (*p == '\0') break;
    fields.push_back(p);
    while (*p != ' ' && *p != '\0') ++p;
  }
  if (fields.size() < 22) return std::nullopt;
  auto field = [&](int n) { return std::strtoll(fields[n - 3], nullptr, 10); };
  ProcStat s;
  s.pid = pid;
  s.ppid = static_cast<pid_t>(field(4));
  s.pgrp = static_cast<pid_t>(field(5));
  s.cpu_ticks = static_cast<uint64_t>(field(14) + field(15) + field(16) + field(17));
  s.start_ticks = static_cast<uint64_t>(field(22));
  s.rss_pages = field(24);
  return s;
}

std::vector<ProcStat> ScanProc() {
  std::vector<ProcStat> out;
  DIR* dir = opendir("/proc");
  if (dir == nullptr) return out;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    if (out.size() >= kMaxProcesses) break;
    if (auto s = ReadProcStat(static_cast<pid_t>(std::atol(entry->d_name)))) out.push_back(*s);
  }
  closedir(dir);
  return out;
}

double TicksPerSecond() {
  static const double hz = static_cast<double>(sysconf(_SC_CLK_TCK));
  return hz;
}

int64_t PageSize() {
  static const int64_t size = sysconf(_SC_PAGESIZE);
  return size;
}

// Seconds since boot, the clock /proc/<pid>/stat's starttime counts on.
double BootSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec / 1e9;
}

// The cgroup v2 path of a process ("/kfpbench/task-1"), empty if unknown.
std::string CgroupOf(const std::string& pid) {
  std::string text = ReadSmallFile("/proc/" + pid + "/cgroup");
  size_t pos = text.find("0::");
  if (pos == std::string::npos) return "";
  size_t end = text.find('\n', pos);
  return text.substr(pos + 3, end == std::string::npos ? std::string::npos : end - pos - 3);
}

// The step's own cgroup, when it has one other than ours and its counters can
// be read.
std::optional<GroupUsage> ReadCgroupUsage(pid_t leader) {
  std::string cgroup = CgroupOf(std::to_string(leader));
  if (cgroup.empty() || cgroup == CgroupOf("self")) return std::nullopt;
  std::string dir = "/sys/fs/cgroup" + cgroup;
  std::string cpu = ReadSmallFile(dir + "/cpu.stat");
  std::string memory = ReadSmallFile(dir + "/memory.current");
  size_t usage = cpu.find("usage_usec ");
  if (usage == std::string::npos || memory.empty()) return std::nullopt;
  GroupUsage u;
  u.from_cgroup = true;
  u.cpu_seconds = std::strtod(cpu.c_str() + usage + 11, nullptr) / 1e6;
  u.memory_bytes = std::strtoll(memory.c_str(), nullptr, 10);
  std::string procs = ReadSmallFile(dir + "/cgroup.procs");
  u.processes = static_cast<int>(std::count(procs.begin(), procs.end(), '\n'));
  return u;
}

std::optional<GroupUsage> UsageFromScan(const std::vector<ProcStat>& scan, pid_t pgid) {
  GroupUsage u;
  uint64_t ticks = 0;
  for (const auto& s : scan) {
    if (s.pgrp != pgid) continue;
    ticks += s.cpu_ticks;
    u.memory_bytes += s.rss_pages * PageSize();
    ++u.processes;
  }
  if (u.processes == 0) return std::nullopt;
  if (auto cgroup = ReadCgroupUsage(pgid)) return cgroup;
  u.cpu_seconds = static_cast<double>(ticks) / TicksPerSecond();
  return u;
}

// KFP_TASK_ID and KFP_RUN_ID from a process's environment.
std::pair<std::string, std::string> TaskIdentity(pid_t pid) {
  std::string env = ReadSmallFile(fmt::format("/proc/{}/environ", pid));
  std::string task, run;
  for (size_t start = 0; start < env.size();) {
    size_t end = env.find('\0', start);
    if (end == std::string::npos) end = env.size();
    std::string_view entry(env.data() + start, end - start);
    if (entry.starts_with("KFP_TASK_ID=")) task = entry.substr(12);
    if (entry.starts_with("KFP_RUN_ID=")) run = entry.substr(11);
    start = end + 1;
  }
  return {task, run};
}

}  // namespace

std::optional<GroupUsage> ReadGroupUsage(pid_t pgid) { return UsageFromScan(ScanProc(), pgid); }

ResourceSampler::ResourceSampler(ResourceSamplerOptions options) : options_(options) {
  if (options_.discover_children_of == 0) options_.discover_children_of = getpid();
  thread_ = std::thread([this] { Loop(); });
}

ResourceSampler::~ResourceSampler() { Stop(); }

void ResourceSampler::Track(pid_t pgid) {
  std::lock_guard lock(mu_);
  requested_.push_back(pgid);
}

void ResourceSampler::Stop() {
  if (stopping_.exchange(true)) return;
  if (thread_.joinable()) thread_.join();
}

std::vector<GroupProfile> ResourceSampler::Profiles() const {
  std::lock_guard lock(mu_);
  std::vector<GroupProfile> out;
  for (const auto& g : groups_) out.push_back(g->profile);
  return out;
}

std::optional<GroupProfile> ResourceSampler::Profile(pid_t pgid) const {
  std::lock_guard lock(mu_);
  for (const auto& g : groups_) {
    if (g->profile.pgid == pgid) return g->profile;
  }
  return std::nullopt;
}

void ResourceSampler::Loop() {
  auto next = SteadyClock::now();
  while (!stopping_.load()) {
    SampleOnce();
    next += options_.interval;
    // Sleep in short slices so Stop() is prompt; a late tick is not made up
    // for with a burst of samples.
    while (!stopping_.load() && SteadyClock::now() < next) {
      std::this_thread::sleep_for(
          std::min<Duration>(next - SteadyClock::now(), std::chrono::milliseconds(20)));
    }
    if (SteadyClock::now() > next + options_.interval) next = SteadyClock::now();
  }
  SampleOnce();
}

void ResourceSampler::SampleOnce() {
  const std::vector<ProcStat> scan = ScanProc();
  const auto now = SteadyClock::now();
  const WallTime wall_now = WallClock::now();
  std::lock_guard lock(mu_);

  auto start_group = [&](const ProcStat& leader, std::string task_id, std::string run_id) {
    auto g = std::make_unique<Tracked>();
    g->profile.pgid = leader.pgrp;
    g->profile.task_id = std::move(task_id);
    g->profile.run_id = std::move(run_id);
    g->profile.first_seen = wall_now;
    live_[leader.pgrp] = g.get();
    groups_.push_back(std::move(g));
  };
  for (pid_t pgid : requested_) {
    if (live_.count(pgid)) continue;
    auto [task, run] = TaskIdentity(pgid);
    ProcStat leader;
    leader.pgrp = pgid;
    start_group(leader, task, run);
  }
  requested_.clear();
  if (options_.discover_children_of > 0) {
    for (const auto& s : scan) {
      if (s.ppid != options_.discover_children_of || s.pid != s.pgrp || live_.count(s.pid)) {
        continue;
      }
      // Only task processes: they carry KFP_TASK_ID. This also skips a child
      // caught between posix_spawn's vfork and its exec, whose environment
      // and memory are still ours.
      auto [task, run] = TaskIdentity(s.pid);
      if (task.empty()) continue;
      start_group(s, task, run);
    }
  }

  for (auto it = live_.begin(); it != live_.end();) {
    Tracked& g = *it->second;
    std::optional<GroupUsage> usage = UsageFromScan(scan, it->first);
    if (!usage) {
      // A group passed to Track() just now may be younger than this scan of
      // /proc: it is given a few readings to appear before it counts as gone.
      constexpr int kReadingsToAppear = 5;
      if (!g.last && ++g.unseen < kReadingsToAppear) {
        ++it;
        continue;
      }
      g.gone = true;
      it = live_.erase(it);
      continue;
    }
    ResourceSample sample;
    sample.at = wall_now - g.profile.first_seen;
    sample.memory_bytes = usage->memory_bytes;
    if (g.last) {
      double dt = std::chrono::duration<double>(now - g.last_at).count();
      if (dt > 0) sample.cpu_cores = std::max(0.0, (usage->cpu_seconds - g.last->cpu_seconds) / dt);
    } else {
      // First reading: the average since the leader started, so a step
      // shorter than one interval still gets a CPU figure.
      double age = 0;
      for (const auto& s : scan) {
        if (s.pid == it->first) age = BootSeconds() - s.start_ticks / TicksPerSecond();
      }
      if (age > 0.001) sample.cpu_cores = usage->cpu_seconds / age;
    }
    g.profile.samples.push_back(sample);
    g.profile.cpu_seconds = usage->cpu_seconds;
    g.profile.from_cgroup = usage->from_cgroup;
    g.profile.last_seen = wall_now;
    g.last = usage;
    g.last_at = now;
    ++it;
  }
}

}  // namespace kfpbench::exec
