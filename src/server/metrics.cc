#include "server/metrics.h"

#include <fmt/format.h>
#include "util/strings.h"

namespace kfpbench::server {

void ApiMetrics::Record(const std::string& route, int status, double seconds) {
  size_t bucket = 0;
  while (bucket < kBuckets.size() && seconds > kBuckets[bucket]) ++bucket;
  std::lock_guard lock(mu_);
  Route& r = routes_[route];
  ++r.by_status[status];
  if (bucket < kBuckets.size()) ++r.buckets[bucket];
  ++r.count;
  r.sum += seconds;
}

std::string ApiMetrics::Render() const {
  std::lock_guard lock(mu_);
  std::string out =
      "# HELP kfpbench_http_requests_total API requests answered, by route and HTTP status.\n"
      "# TYPE kfpbench_http_requests_total counter\n";
  for (const auto& [name, r] : routes_) {
    for (const auto& [status, n] : r.by_status) {
      out += fmt::format("kfpbench_http_requests_total{{route=\"{}\",code=\"{}\"}} {}\n",
                         EscapePrometheusLabel(name), status, n);
    }
  }
  out +=
      "# HELP kfpbench_http_request_duration_seconds Time to answer an API request, by route.\n"
      "# TYPE kfpbench_http_request_duration_seconds histogram\n";
  for (const auto& [name, r] : routes_) {
    std::string label = EscapePrometheusLabel(name);
    uint64_t cumulative = 0;
    for (size_t i = 0; i < kBuckets.size(); ++i) {
      cumulative += r.buckets[i];
      out += fmt::format(
          "kfpbench_http_request_duration_seconds_bucket{{route=\"{}\",le=\"{}\"}} {}\n", label,
          kBuckets[i], cumulative);
    }
    out += fmt::format(
        "kfpbench_http_request_duration_seconds_bucket{{route=\"{}\",le=\"+Inf\"}} {}\n", label,
        r.count);
    out += fmt::format("kfpbench_http_request_duration_seconds_sum{{route=\"{}\"}} {}\n", label,
                       r.sum);
    out += fmt::format("kfpbench_http_request_duration_seconds_count{{route=\"{}\"}} {}\n", label,
                       r.count);
  }
  return out;
}

std::string RenderGauge(const std::string& name, const std::string& help, const std::string& label,
                        const std::vector<std::pair<std::string, double>>& samples) {
  std::string out = fmt::format("# HELP {} {}\n# TYPE {} gauge\n", name, help, name);
  for (const auto& [value, v] : samples) {
    if (label.empty()) {
      out += fmt::format("{} {}\n", name, v);
    } else {
      out += fmt::format("{}{{{}=\"{}\"}} {}\n", name, label, EscapePrometheusLabel(value), v);
    }
  }
  return out;
}

}  // namespace kfpbench::server
