#include "server/pod_metrics.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "server/metrics.h"
#include "util/files.h"
#include "util/strings.h"

namespace kfpbench::server {
namespace {

struct ProcUsage {
  double cpu_seconds = 0;
  int64_t rss_bytes = 0;
};

// utime, stime, cutime, cstime (fields 14-17) and rss (24) of /proc/PID/stat.
// The command name (field 2) may hold spaces, so parsing starts after its ')'.
bool ReadProcStat(const std::string& pid, ProcUsage& out) {
  std::string text = ReadSmallFile("/proc/" + pid + "/stat");
  size_t close = text.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream fields(text.substr(close + 2));
  std::vector<std::string> f;
  std::string word;
  while (fields >> word && f.size() < 22) f.push_back(word);
  if (f.size() < 22) return false;
  // f[0] is field 3 (state): field N is f[N - 3].
  static const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  static const int64_t page = sysconf(_SC_PAGESIZE);
  double jiffies = 0;
  for (int n : {14, 15, 16, 17}) jiffies += std::strtod(f[n - 3].c_str(), nullptr);
  out.cpu_seconds = jiffies / ticks;
  out.rss_bytes = std::strtoll(f[24 - 3].c_str(), nullptr, 10) * page;
  return true;
}

std::string CurrentDir(const std::string& pid) {
  std::error_code ec;
  auto cwd = std::filesystem::read_symlink("/proc/" + pid + "/cwd", ec);
  return ec ? "" : cwd.string();
}

}  // namespace

PodMetrics::PodMetrics(std::string namespace_, Duration retention)
    : namespace_(std::move(namespace_)), retention_(retention) {}

void PodMetrics::Started(const std::string& pod, const std::filesystem::path& work_dir) {
  std::error_code ec;
  auto canonical = std::filesystem::weakly_canonical(work_dir, ec);
  std::lock_guard lock(mu_);
  pods_[pod] = Pod{ec ? work_dir.string() : canonical.string()};
}

void PodMetrics::Finished(const std::string& pod, double cpu_seconds, int64_t peak_rss_bytes) {
  std::lock_guard lock(mu_);
  auto it = pods_.find(pod);
  if (it == pods_.end()) return;
  Pod& p = it->second;
  p.live = false;
  p.finished = WallClock::now();
  // A counter never goes down: the last sample may have seen more than the
  // executor's rusage if a child was never reaped.
  p.cpu_seconds = std::max(p.cpu_seconds, cpu_seconds);
  if (peak_rss_bytes > 0) p.memory_bytes = std::max(p.memory_bytes, peak_rss_bytes);
}

void PodMetrics::SampleLive() {
  std::map<std::string, ProcUsage> by_dir;  // live pods' work dirs
  for (const auto& [name, pod] : pods_) {
    if (pod.live) by_dir.emplace(pod.work_dir, ProcUsage{});
  }
  if (by_dir.empty()) return;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return;
  while (dirent* entry = ::readdir(proc)) {
    std::string pid = entry->d_name;
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    auto it = by_dir.find(CurrentDir(pid));
    if (it == by_dir.end()) continue;
    ProcUsage usage;
    if (!ReadProcStat(pid, usage)) continue;  // exited meanwhile
    it->second.cpu_seconds += usage.cpu_seconds;
    it->second.rss_bytes += usage.rss_bytes;
  }
  ::closedir(proc);
  for (auto& [name, pod] : pods_) {
    if (!pod.live) continue;
    const ProcUsage& u = by_dir[pod.work_dir];
    pod.cpu_seconds = std::max(pod.cpu_seconds, u.cpu_seconds);
    pod.memory_bytes = u.rss_bytes;
  }
}

std::string PodMetrics::Render() {
  std::lock_guard lock(mu_);
  const WallTime now = WallClock::now();
  for (auto it = pods_.begin(); it != pods_.end();) {
    if (!it->second.live && now - it->second.finished > retention_) {
      it = pods_.erase(it);
    } else {
      ++it;
    }
  }
  SampleLive();
  std::string cpu =
      "# HELP container_cpu_usage_seconds_total Cumulative CPU time of the task's processes "
      "(cAdvisor-compatible)\n# TYPE container_cpu_usage_seconds_total counter\n";
  std::string memory =
      "# HELP container_memory_working_set_bytes Resident memory of the task's processes; the "
      "peak once finished (cAdvisor-compatible)\n# TYPE container_memory_working_set_bytes "
      "gauge\n";
  for (const auto& [name, pod] : pods_) {
    std::string labels =
        fmt::format(R"({{namespace="{}",pod="{}",container="main"}})",
                    EscapePrometheusLabel(namespace_), EscapePrometheusLabel(name));
    cpu += fmt::format("container_cpu_usage_seconds_total{} {}\n", labels, pod.cpu_seconds);
    memory += fmt::format("container_memory_working_set_bytes{} {}\n", labels, pod.memory_bytes);
  }
  return cpu + memory;
}

PodMetricsExecutor::PodMetricsExecutor(std::unique_ptr<engine::Executor> inner, PodMetrics& metrics)
    : inner_(std::move(inner)), metrics_(metrics) {}

void PodMetricsExecutor::Launch(engine::TaskLaunch launch, engine::TaskDone done) {
  std::string pod = launch.pod_name;
  metrics_.Started(pod, launch.work_dir);
  inner_->Launch(std::move(launch), [this, pod, done = std::move(done)](engine::TaskResult result) {
    metrics_.Finished(pod, result.cpu_seconds, result.peak_rss_bytes);
    done(std::move(result));
  });
}

void PodMetricsExecutor::Cancel(const std::string& task_id) { inner_->Cancel(task_id); }

}  // namespace kfpbench::server
