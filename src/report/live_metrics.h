// `kfpbench run --metrics-listen HOST:PORT`: the benchmark's own numbers in
// the Prometheus text format while it runs, for a Prometheus to scrape and a
// Grafana dashboard (deploy/grafana/) to draw.
//
// A scrape reads Recorder::Totals() (histograms and counts, no time series)
// and the last results::Progress; the API calls being measured never wait on
// the exporter beyond the recorder's own short lock.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "http/server.h"
#include "metrics/recorder.h"
#include "results/results.h"
#include "util/result.h"

namespace kfpbench::report {

// Upper bounds (`le`) of the exported latency buckets, in seconds: 1-2.5-5
// steps from 100 us to 60 s. Each is counted from the log-linear histogram's
// buckets at or below it, so a count is exact to within 0.78% of the bound.
const std::vector<double>& LatencyBucketsSeconds();

// Everything a scrape shows.
struct LiveState {
  std::map<std::string, metrics::OperationStats> operations;  // cumulative over repetitions
  results::Progress progress;                                 // of the current repetition
  std::map<std::string, int> runs_by_state;                   // cumulative
  uint64_t runs_created = 0;                                  // cumulative
  int late_starts = 0;                                        // cumulative
  std::map<std::string, uint64_t> observer_calls;             // cumulative, by operation
  int repetition = 1;
  bool finished = false;
};

// The text exposition format 0.0.4; metric names are listed in docs/RESULTS.md.
std::string RenderPrometheus(const LiveState& state);

// The names RenderPrometheus can emit (histograms with their _bucket, _sum
// and _count series), for the dashboard test.
std::vector<std::string> ExportedMetricNames();

class LiveMetrics {
 public:
  // Serves GET /metrics on `listen` ("127.0.0.1:9464"; port 0 picks one).
  static Result<std::unique_ptr<LiveMetrics>> Start(const std::string& listen,
                                                    metrics::Recorder& recorder);
  ~LiveMetrics();

  uint16_t port() const;
  // From the harness' progress callback (about once a second).
  void Update(const results::Progress& progress);
  // A repetition ended with `results`: its runs join the cumulative counts.
  // Before another repetition (`restart_at` set) the recorder restarts there
  // and what it held joins the cumulative call counts, in one step under the
  // exporter's lock, so no scrape sees a counter go down.
  void EndRepetition(const results::BenchmarkResults& results, std::optional<WallTime> restart_at);
  // The run is over: serve the final numbers until one more scrape has read
  // them (so Prometheus sees the totals results.json has), or `timeout`.
  // Returns false if no scrape came.
  bool AwaitFinalScrape(Duration timeout);
  uint64_t scrapes() const;

 private:
  explicit LiveMetrics(metrics::Recorder& recorder);
  http::Response Serve(const http::Request& request);
  LiveState Collect() const;

  metrics::Recorder& recorder_;
  std::unique_ptr<http::Server> server_;
  mutable std::mutex mu_;
  std::condition_variable scraped_;
  std::map<std::string, metrics::OperationStats> done_ops_;  // of finished repetitions
  std::map<std::string, int> done_by_state_;
  uint64_t done_created_ = 0;
  int done_late_ = 0;
  std::map<std::string, uint64_t> done_observer_calls_;
  int repetition_ = 1;
  results::Progress progress_;
  bool finished_ = false;
  uint64_t scrapes_ = 0;
};

}  // namespace kfpbench::report
