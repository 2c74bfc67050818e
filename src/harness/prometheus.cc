#include "harness/prometheus.h"

#include <cmath>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "http/url.h"
#include "util/json_reader.h"

namespace kfpbench::harness {
namespace {

using nlohmann::json;

// Pods per query, so the URL stays well under common 8 KiB limits.
constexpr size_t kPodsPerQuery = 40;

double UnixSeconds(WallTime t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

// Pod names are DNS labels, but escape RE2 metacharacters anyway.
std::string RegexQuote(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::string_view(".+*?()[]{}|^$\\").find(c) != std::string_view::npos) out += "\\\\";
    out += c;
  }
  return out;
}

std::string Selector(const std::vector<std::string>& pods, size_t begin, size_t end,
                     const std::string& namespace_) {
  std::string alternatives;
  for (size_t i = begin; i < end; ++i) {
    if (!alternatives.empty()) alternatives += '|';
    alternatives += RegexQuote(pods[i]);
  }
  std::string sel = fmt::format(R"({{container="main",pod=~"{}")", alternatives);
  if (!namespace_.empty()) sel += fmt::format(R"(,namespace="{}")", namespace_);
  return sel + "}";
}

}  // namespace

Result<std::map<std::string, double>> QueryByLabel(http::Client& prometheus,
                                                   const std::string& promql, const std::string& by,
                                                   WallTime at) {
  std::string target =
      "/api/v1/query?" +
      http::BuildQuery({{"query", promql}, {"time", fmt::format("{:.3f}", UnixSeconds(at))}});
  auto where = prometheus.base().ToString() + "/api/v1/query";
  auto response = prometheus.Send(http::Method::kGet, target);
  if (!response.ok()) return Error{"prometheus: " + response.error().message};
  json body = ParseJson(response->body);
  if (!body.is_object()) {
    return Error{fmt::format("prometheus {}: HTTP {} with a body that is not JSON", where,
                             response->status)};
  }
  if (body.value("status", "") != "success") {
    return Error{fmt::format("prometheus {}: HTTP {}: {} ({})", where, response->status,
                             body.value("error", "no error message"), promql)};
  }
  std::map<std::string, double> out;
  const json& data = body.value("data", json::object());
  if (data.value("resultType", "") != "vector") {
    return Error{fmt::format("prometheus {}: expected a vector result for {}", where, promql)};
  }
  for (const auto& sample : data.value("result", json::array())) {
    const json& metric = sample.value("metric", json::object());
    const json& value = sample.value("value", json::array());
    if (!metric.contains(by) || !metric[by].is_string() || value.size() != 2 ||
        !value[1].is_string()) {
      continue;
    }
    char* end = nullptr;
    const std::string& text = value[1].get_ref<const std::string&>();
    double v = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || !std::isfinite(v)) continue;
    out[metric[by].get<std::string>()] = v;
  }
  return out;
}

Result<std::map<std::string, PodUsage>> QueryPodUsage(http::Client& prometheus,
                                                      const std::vector<std::string>& pods,
                                                      WallTime from, WallTime to,
                                                      const std::string& namespace_) {
  std::map<std::string, PodUsage> usage;
  // The window reaches back to the first run's creation, plus a scrape or two.
  auto window = std::chrono::duration_cast<std::chrono::seconds>(to - from).count() + 120;
  for (size_t begin = 0; begin < pods.size(); begin += kPodsPerQuery) {
    size_t end = std::min(pods.size(), begin + kPodsPerQuery);
    std::string sel = Selector(pods, begin, end, namespace_);
    // Each pod's highest value of `metric` over the window.
    auto peak = [&](const char* metric) {
      return QueryByLabel(
          prometheus, fmt::format("max by (pod) (max_over_time({}{}[{}s]))", metric, sel, window),
          "pod", to);
    };
    auto cpu = peak("container_cpu_usage_seconds_total");
    if (!cpu.ok()) return cpu.error();
    auto memory = peak("container_memory_working_set_bytes");
    if (!memory.ok()) return memory.error();
    for (const auto& [pod, v] : *cpu) usage[pod].cpu_seconds = v;
    for (const auto& [pod, v] : *memory) usage[pod].peak_memory_bytes = std::llround(v);
  }
  return usage;
}

Result<int> AddPrometheusUsage(std::vector<results::RunRecord>& runs, http::Client& prometheus,
                               const PrometheusOptions& options) {
  std::vector<std::string> pods;
  std::map<std::string, WallTime> ended;  // pod -> when its step ended
  WallTime from = WallTime::max(), to{};
  for (const auto& run : runs) {
    for (const auto& t : run.tasks) {
      if (t.dag || t.pod_name.empty()) continue;
      if (ended.emplace(t.pod_name, t.finished).second) pods.push_back(t.pod_name);
      WallTime start = t.started.time_since_epoch().count() != 0 ? t.started : run.created;
      if (start.time_since_epoch().count() != 0) from = std::min(from, start);
      to = std::max(to, t.finished);
    }
  }
  if (pods.empty()) return 0;
  if (from == WallTime::max()) from = to;

  // Until every pod's latest sample is newer than its end, or its series went
  // stale (absent at an instant query), or we run out of patience.
  const WallTime give_up = WallClock::now() + options.wait;
  for (;;) {
    bool behind = false;
    for (size_t begin = 0; begin < pods.size() && !behind; begin += kPodsPerQuery) {
      size_t end = std::min(pods.size(), begin + kPodsPerQuery);
      auto latest =
          QueryByLabel(prometheus,
                       fmt::format("max by (pod) (timestamp(container_cpu_usage_seconds_total{}))",
                                   Selector(pods, begin, end, options.namespace_)),
                       "pod", WallClock::now());
      if (!latest.ok()) return latest.error();
      for (const auto& [pod, ts] : *latest) {
        auto it = ended.find(pod);
        if (it != ended.end() && ts < UnixSeconds(it->second)) behind = true;
      }
    }
    if (!behind || WallClock::now() >= give_up) break;
    std::this_thread::sleep_for(options.poll);
  }

  auto usage = QueryPodUsage(prometheus, pods, from, WallClock::now(), options.namespace_);
  if (!usage.ok()) return usage.error();
  int filled = 0;
  for (auto& run : runs) {
    for (auto& t : run.tasks) {
      auto it = usage->find(t.pod_name);
      if (t.dag || it == usage->end()) continue;
      t.cpu_seconds = it->second.cpu_seconds;
      t.peak_memory_bytes = it->second.peak_memory_bytes;
      t.resource_source = "prometheus";
      ++filled;
    }
  }
  return filled;
}

}  // namespace kfpbench::harness
