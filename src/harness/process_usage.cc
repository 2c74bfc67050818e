#include "harness/process_usage.h"

#include <sys/resource.h>

#include <fstream>
#include <string>

namespace kfpbench::harness {
namespace {

double Seconds(const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; }

// A "Name:   1234 kB" line of /proc/self/status, in bytes (kB for the
// memory lines, a plain count otherwise); 0 where there is no /proc.
int64_t StatusField(const std::string& name, bool kilobytes) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.compare(0, name.size() + 1, name + ":") != 0) continue;
    try {
      int64_t v = std::stoll(line.substr(name.size() + 1));
      return kilobytes ? v * 1024 : v;
    } catch (const std::exception&) {
      return 0;
    }
  }
  return 0;
}

}  // namespace

ProcessSample SampleProcess() {
  ProcessSample s;
  s.at = WallClock::now();
  rusage u{};
  if (getrusage(RUSAGE_SELF, &u) == 0) {
    s.cpu_user_s = Seconds(u.ru_utime);
    s.cpu_system_s = Seconds(u.ru_stime);
  }
  return s;
}

results::HarnessUsage UsageSince(const ProcessSample& start) {
  ProcessSample end = SampleProcess();
  results::HarnessUsage u;
  u.wall_s = ToSeconds(end.at - start.at);
  u.cpu_user_s = end.cpu_user_s - start.cpu_user_s;
  u.cpu_system_s = end.cpu_system_s - start.cpu_system_s;
  // The current size first: the high-water mark read after it is never below
  // it, while one read before could be (other threads allocate meanwhile).
  u.rss_bytes = StatusField("VmRSS", true);
  u.peak_rss_bytes = StatusField("VmHWM", true);
  u.threads = static_cast<int>(StatusField("Threads", false));
  if (u.peak_rss_bytes == 0) {
    rusage r{};
    if (getrusage(RUSAGE_SELF, &r) == 0) u.peak_rss_bytes = int64_t{r.ru_maxrss} * 1024;
  }
  return u;
}

}  // namespace kfpbench::harness
