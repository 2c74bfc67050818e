#include "report/live_metrics.h"

#include <fmt/format.h>
#include "util/strings.h"

namespace kfpbench::report {
namespace {

void Family(std::string& out, const char* name, const char* type, const char* help) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

// Prometheus' float text: integers without a fraction, +Inf spelled out.
std::string Number(double v) { return fmt::format("{}", v); }

void MergeOps(std::map<std::string, metrics::OperationStats>& into,
              const std::map<std::string, metrics::OperationStats>& from) {
  for (const auto& [name, op] : from) {
    metrics::OperationStats& m = into[name];
    m.latency_us.Merge(op.latency_us);
    m.errors += op.errors;
    for (const auto& [status, n] : op.by_status) m.by_status[status] += n;
  }
}

// ip:port, the port required (0: any free one).
Result<std::pair<std::string, uint16_t>> ParseListen(const std::string& listen) {
  auto colon = listen.rfind(':');
  auto bad = [&] {
    return Error{"--metrics-listen: expected HOST:PORT such as 127.0.0.1:9464 (got '" + listen +
                 "')"};
  };
  if (colon == std::string::npos || colon == 0 || colon + 1 == listen.size()) return bad();
  std::string host = listen.substr(0, colon);
  if (host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  std::string port_text = listen.substr(colon + 1);
  if (port_text.find_first_not_of("0123456789") != std::string::npos || port_text.size() > 5) {
    return bad();
  }
  int port = std::stoi(port_text);
  if (port > 65535) return bad();
  return std::pair{host, static_cast<uint16_t>(port)};
}

}  // namespace

const std::vector<double>& LatencyBucketsSeconds() {
  static const std::vector<double> buckets = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                              0.01,   0.025,   0.05,   0.1,   0.25,   0.5,
                                              1,      2.5,     5,      10,    30,     60};
  return buckets;
}

std::vector<std::string> ExportedMetricNames() {
  return {"kfpbench_api_request_duration_seconds_bucket",
          "kfpbench_api_request_duration_seconds_sum",
          "kfpbench_api_request_duration_seconds_count",
          "kfpbench_api_requests_total",
          "kfpbench_api_errors_total",
          "kfpbench_runs_created_total",
          "kfpbench_runs_finished_total",
          "kfpbench_runs_in_flight",
          "kfpbench_late_starts_total",
          "kfpbench_observer_requests_total",
          "kfpbench_repetition",
          "kfpbench_benchmark_finished"};
}

std::string RenderPrometheus(const LiveState& s) {
  std::string out;
  Family(out, "kfpbench_api_request_duration_seconds", "histogram",
         "Latency of the KFP API calls the benchmark made, by operation.");
  for (const auto& [name, op] : s.operations) {
    std::string label = EscapePrometheusLabel(name);
    for (double le : LatencyBucketsSeconds()) {
      auto bound_us = static_cast<int64_t>(le * 1e6 + 0.5);
      out += fmt::format(
          "kfpbench_api_request_duration_seconds_bucket{{operation=\"{}\",le=\"{}\"}} {}\n", label,
          Number(le), op.latency_us.CountAtOrBelow(bound_us));
    }
    out += fmt::format(
        "kfpbench_api_request_duration_seconds_bucket{{operation=\"{}\",le=\"+Inf\"}} {}\n", label,
        op.latency_us.count());
    out += fmt::format("kfpbench_api_request_duration_seconds_sum{{operation=\"{}\"}} {}\n", label,
                       Number(op.latency_us.sum() / 1e6));
    out += fmt::format("kfpbench_api_request_duration_seconds_count{{operation=\"{}\"}} {}\n",
                       label, op.latency_us.count());
  }
  Family(out, "kfpbench_api_requests_total", "counter",
         "KFP API calls by operation and HTTP status (code 0: no response).");
  for (const auto& [name, op] : s.operations) {
    for (const auto& [status, n] : op.by_status) {
      out += fmt::format("kfpbench_api_requests_total{{operation=\"{}\",code=\"{}\"}} {}\n",
                         EscapePrometheusLabel(name), status, n);
    }
  }
  Family(out, "kfpbench_api_errors_total", "counter",
         "KFP API calls that failed (no response, or HTTP status >= 400), by operation.");
  for (const auto& [name, op] : s.operations) {
    out += fmt::format("kfpbench_api_errors_total{{operation=\"{}\"}} {}\n",
                       EscapePrometheusLabel(name), op.errors);
  }
  Family(out, "kfpbench_runs_created_total", "counter", "Pipeline runs the benchmark created.");
  out += fmt::format("kfpbench_runs_created_total {}\n", s.runs_created);
  Family(out, "kfpbench_runs_finished_total", "counter",
         "Pipeline runs followed to the end, by their last state.");
  for (const auto& [state, n] : s.runs_by_state) {
    out += fmt::format("kfpbench_runs_finished_total{{state=\"{}\"}} {}\n",
                       EscapePrometheusLabel(state), n);
  }
  Family(out, "kfpbench_runs_in_flight", "gauge", "Runs created and not yet followed to the end.");
  uint64_t in_flight = s.progress.runs_created > s.progress.runs_finished
                           ? s.progress.runs_created - s.progress.runs_finished
                           : 0;
  out += fmt::format("kfpbench_runs_in_flight {}\n", s.finished ? 0 : in_flight);
  Family(out, "kfpbench_late_starts_total", "counter",
         "Open-loop runs sent more than 100 ms after their intended start.");
  out += fmt::format("kfpbench_late_starts_total {}\n", s.late_starts);
  Family(out, "kfpbench_observer_requests_total", "counter",
         "KFP API calls kfpbench made to follow its runs (listings and run details), apart from "
         "the workload's, by operation.");
  for (const auto& [name, n] : s.observer_calls) {
    out += fmt::format("kfpbench_observer_requests_total{{operation=\"{}\"}} {}\n",
                       EscapePrometheusLabel(name), n);
  }
  Family(out, "kfpbench_repetition", "gauge", "The repetition running (run --repeat), from 1.");
  out += fmt::format("kfpbench_repetition {}\n", s.repetition);
  Family(out, "kfpbench_benchmark_finished", "gauge", "1 once the benchmark is over.");
  out += fmt::format("kfpbench_benchmark_finished {}\n", s.finished ? 1 : 0);
  return out;
}

LiveMetrics::LiveMetrics(metrics::Recorder& recorder) : recorder_(recorder) {}

LiveMetrics::~LiveMetrics() {
  if (server_) server_->Stop();
}

Result<std::unique_ptr<LiveMetrics>> LiveMetrics::Start(const std::string& listen,
                                                        metrics::Recorder& recorder) {
  auto address = ParseListen(listen);
  if (!address.ok()) return address.error();
  std::unique_ptr<LiveMetrics> live(new LiveMetrics(recorder));
  http::ServerOptions o;
  o.address = address->first;
  o.port = address->second;
  o.threads = 1;  // a scrape a second; the benchmark's threads matter more
  LiveMetrics* self = live.get();
  o.handler = [self](const http::Request& r) { return self->Serve(r); };
  live->server_ = std::make_unique<http::Server>(std::move(o));
  if (Status s = live->server_->Start(); !s.ok()) {
    return Error{"--metrics-listen " + listen + ": " + s.error().message};
  }
  return live;
}

uint16_t LiveMetrics::port() const { return server_->port(); }

void LiveMetrics::Update(const results::Progress& progress) {
  std::lock_guard lock(mu_);
  progress_ = progress;
}

void LiveMetrics::EndRepetition(const results::BenchmarkResults& results,
                                std::optional<WallTime> restart_at) {
  std::lock_guard lock(mu_);
  for (const auto& [state, n] : results.RunsByState()) done_by_state_[state] += n;
  for (const auto& r : results.runs) {
    if (!r.run_id.empty()) ++done_created_;
  }
  done_late_ += results.LateStarts();
  for (const auto& [name, op] : results.observer.operations) {
    done_observer_calls_[name] += op.latency_us.count();
  }
  progress_ = results::Progress{};
  if (restart_at) {
    MergeOps(done_ops_, recorder_.Restart(*restart_at));
    ++repetition_;
  } else {
    finished_ = true;
  }
}

LiveState LiveMetrics::Collect() const {
  LiveState s;
  s.operations = done_ops_;
  MergeOps(s.operations, recorder_.Totals());
  s.progress = progress_;
  s.runs_by_state = done_by_state_;
  for (const auto& [state, n] : progress_.runs_by_state) s.runs_by_state[state] += n;
  s.runs_created = done_created_ + progress_.runs_created;
  s.late_starts = done_late_ + progress_.late_starts;
  s.observer_calls = done_observer_calls_;
  for (const auto& [name, n] : progress_.observer_calls) s.observer_calls[name] += n;
  s.repetition = repetition_;
  s.finished = finished_;
  return s;
}

http::Response LiveMetrics::Serve(const http::Request& request) {
  if (request.path != "/metrics") {
    return http::Response::Text(404, "kfpbench serves its live metrics on /metrics\n");
  }
  if (request.method != http::Method::kGet && request.method != http::Method::kHead) {
    return http::Response::Text(405, "GET /metrics\n");
  }
  std::string body;
  {
    std::lock_guard lock(mu_);
    body = RenderPrometheus(Collect());
    ++scrapes_;
  }
  scraped_.notify_all();
  return http::Response::Text(200, std::move(body), "text/plain; version=0.0.4; charset=utf-8");
}

bool LiveMetrics::AwaitFinalScrape(Duration timeout) {
  std::unique_lock lock(mu_);
  uint64_t seen = scrapes_;
  return scraped_.wait_for(lock, timeout, [&] { return scrapes_ > seen; });
}

uint64_t LiveMetrics::scrapes() const {
  std::lock_guard lock(mu_);
  return scrapes_;
}

}  // namespace kfpbench::report
