// cAdvisor-compatible resource series for the embedded backend's tasks, so a
// real Prometheus scraping /metrics sees each task as Kubernetes would show
// its pod:
//
//   container_cpu_usage_seconds_total{namespace,pod,container="main"}  counter
//   container_memory_working_set_bytes{namespace,pod,container="main"} gauge
//
// A running task is sampled from /proc at scrape time: every process whose
// working directory is the task's private work dir (the process executor
// starts each step there), CPU as utime+stime plus that of reaped children,
// memory as resident set size. A finished task keeps its series for
// `retention` (so a scrape after a short step still sees it) at its final CPU
// seconds and the peak RSS the executor measured, then disappears, as a
// deleted pod's series do.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "engine/executor.h"
#include "util/time.h"

namespace kfpbench::server {

class PodMetrics {
 public:
  explicit PodMetrics(std::string namespace_ = "kubeflow",
                      Duration retention = std::chrono::minutes(2));

  void Started(const std::string& pod, const std::filesystem::path& work_dir);
  void Finished(const std::string& pod, double cpu_seconds, int64_t peak_rss_bytes);

  // Both families in the Prometheus text format; samples live tasks first.
  std::string Render();

 private:
  struct Pod {
    std::string work_dir;
    bool live = true;
    double cpu_seconds = 0;
    int64_t memory_bytes = 0;
    WallTime finished{};
  };
  void SampleLive();

  std::string namespace_;
  Duration retention_;
  std::mutex mu_;
  std::map<std::string, Pod> pods_;  // by pod name
};

// Wraps an executor and tells PodMetrics when each task starts and ends.
class PodMetricsExecutor : public engine::Executor {
 public:
  PodMetricsExecutor(std::unique_ptr<engine::Executor> inner, PodMetrics& metrics);
  void Launch(engine::TaskLaunch launch, engine::TaskDone done) override;
  void Cancel(const std::string& task_id) override;
  Status CanRun(const ir::PipelineSpec& spec) const override { return inner_->CanRun(spec); }

 private:
  std::unique_ptr<engine::Executor> inner_;
  PodMetrics& metrics_;
};

}  // namespace kfpbench::server
