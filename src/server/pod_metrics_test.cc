// PodMetrics samples a real process in a task's work dir from /proc.
#include "server/pod_metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <regex>
#include <thread>

#include "util/ids.h"

namespace kfpbench::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

namespace fs = std::filesystem;

// The value of `family{...pod="pod"...}` in the text, or -1.
double Sample(const std::string& text, const std::string& family, const std::string& pod) {
  std::regex line(family + R"(\{namespace="kubeflow",pod=")" + pod +
                  R"(",container="main"\} ([0-9.e+]+))");
  std::smatch m;
  if (!std::regex_search(text, m, line)) return -1;
  return std::stod(m[1]);
}

TEST(PodMetrics, SamplesLiveProcessesByWorkDirAndKeepsFinishedOnes) {
  fs::path dir = fs::temp_directory_path() / ("kfpbench-pod-" + NewUuid());
  fs::create_directories(dir);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (chdir(dir.c_str()) != 0) _exit(1);
    constexpr size_t kBytes = 48 << 20;
    char* block = static_cast<char*>(malloc(kBytes));
    memset(block, 1, kBytes);  // resident
    volatile uint64_t x = 0;
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < end) x = x + block[x % kBytes];
    _exit(0);
  }
  PodMetrics metrics("kubeflow", std::chrono::hours(1));
  metrics.Started("run-a-step-1", dir);
  metrics.Started("run-a-step-2", dir / "elsewhere");  // nothing runs there
  double cpu = 0, memory = 0;
  std::string text;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    text = metrics.Render();
    cpu = Sample(text, "container_cpu_usage_seconds_total", "run-a-step-1");
    memory = Sample(text, "container_memory_working_set_bytes", "run-a-step-1");
    if (cpu >= 0.2 && memory >= (40 << 20)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_GE(cpu, 0.2) << text;
  EXPECT_GE(memory, 40 << 20) << text;
  EXPECT_LT(memory, 1 << 30) << text;
  EXPECT_EQ(Sample(text, "container_cpu_usage_seconds_total", "run-a-step-2"), 0) << text;
  EXPECT_THAT(text, HasSubstr("# TYPE container_cpu_usage_seconds_total counter"));
  EXPECT_THAT(text, HasSubstr("# TYPE container_memory_working_set_bytes gauge"));

  // Finished: the counter never goes back; memory shows the measured peak
  // (above anything sampled live).
  int64_t peak = static_cast<int64_t>(memory) + (100 << 20);
  metrics.Finished("run-a-step-1", 0.01, peak);
  text = metrics.Render();
  EXPECT_GE(Sample(text, "container_cpu_usage_seconds_total", "run-a-step-1"), cpu) << text;
  EXPECT_EQ(Sample(text, "container_memory_working_set_bytes", "run-a-step-1"),
            static_cast<double>(peak));
  fs::remove_all(dir);
}

TEST(PodMetrics, FinishedPodsLeaveAfterTheRetention) {
  PodMetrics metrics("kubeflow", std::chrono::milliseconds(0));
  metrics.Started("p", "/nonexistent-kfpbench-dir");
  metrics.Finished("p", 2.5, 1000);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_THAT(metrics.Render(), Not(HasSubstr("pod=\"p\"")));
  metrics.Finished("unknown", 1, 1);  // ignored
}

}  // namespace
}  // namespace kfpbench::server
