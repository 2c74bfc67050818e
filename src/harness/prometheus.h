// Resource use of each step on a real cluster, read back from Prometheus
// (`kfpbench run --prometheus URL`): after the load, every step's pod is
// looked up in cAdvisor's series, as the kubelet exports them,
//
//   CPU seconds  max_over_time(container_cpu_usage_seconds_total{pod, container="main"}[window])
//   peak memory  max_over_time(container_memory_working_set_bytes{pod, container="main"}[window])
//
// (the CPU counter starts at zero with the container, so its highest value is
// what the step used), and written into each step of results.json with
// resource_source "prometheus". The embedded backend exports the same series
// (server/pod_metrics.h), which is how this is tested against a real
// Prometheus.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "http/client.h"
#include "results/results.h"
#include "util/result.h"
#include "util/time.h"

namespace kfpbench::harness {

struct PrometheusOptions {
  std::string namespace_;  // the pods' namespace; empty: any
  // How long to wait for Prometheus to scrape every step after it ended (a
  // pod whose series went stale counts as scraped).
  Duration wait = std::chrono::seconds(30);
  Duration poll = std::chrono::seconds(1);
};

struct PodUsage {
  std::optional<double> cpu_seconds;
  std::optional<int64_t> peak_memory_bytes;
};

// One instant query (GET /api/v1/query) at `at`: label `by` -> value. Errors
// name the URL and what Prometheus said.
Result<std::map<std::string, double>> QueryByLabel(http::Client& prometheus,
                                                   const std::string& promql, const std::string& by,
                                                   WallTime at);

// CPU and memory of `pods` (by pod name) over [from, to].
Result<std::map<std::string, PodUsage>> QueryPodUsage(http::Client& prometheus,
                                                      const std::vector<std::string>& pods,
                                                      WallTime from, WallTime to,
                                                      const std::string& namespace_);

// Waits (bounded by options.wait) until Prometheus has a sample of every
// step's pod taken after the step ended, then fills cpu_seconds and
// peak_memory_bytes of every step with a pod name. Returns how many steps got
// numbers; an Error when Prometheus cannot be queried at all.
Result<int> AddPrometheusUsage(std::vector<results::RunRecord>& runs, http::Client& prometheus,
                               const PrometheusOptions& options);

}  // namespace kfpbench::harness
