// Request counters and latency histograms per route, written out in the
// Prometheus text format (0.0.4) without a client library.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace kfpbench::server {

class ApiMetrics {
 public:
  // Upper bounds of the latency buckets, in seconds.
  static constexpr std::array<double, 14> kBuckets = {
      0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

  void Record(const std::string& route, int status, double seconds);

  // kfpbench_http_requests_total and kfpbench_http_request_duration_seconds.
  std::string Render() const;

 private:
  struct Route {
    std::map<int, uint64_t> by_status;
    std::array<uint64_t, kBuckets.size()> buckets{};  // not cumulative
    uint64_t count = 0;
    double sum = 0;
  };
  mutable std::mutex mu_;
  std::map<std::string, Route> routes_;
};

// One gauge family: "# HELP", "# TYPE" and a sample per label set.
std::string RenderGauge(const std::string& name, const std::string& help, const std::string& label,
                        const std::vector<std::pair<std::string, double>>& samples);

}  // namespace kfpbench::server
