// Records every API call a benchmark makes: a latency histogram per operation,
// counts by HTTP status, and a one-second time series for charts.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "metrics/histogram.h"
#include "util/time.h"

namespace kfpbench::metrics {

// One second of one operation, summarised when the second is over.
struct Window {
  int64_t second = 0;  // seconds since the recorder's start
  uint64_t count = 0;
  uint64_t errors = 0;
  int64_t p50_us = 0, p95_us = 0, p99_us = 0, max_us = 0;
};

struct OperationStats {
  Histogram latency_us;               // microseconds
  uint64_t errors = 0;                // transport failures and HTTP status >= 400
  std::map<int, uint64_t> by_status;  // HTTP status -> calls; 0 = no response (transport)
  // Why calls failed: the first kMaxErrorMessages distinct messages (already
  // redacted), each with how often it came; later new messages are counted in
  // `errors` only. A person reading a failed run wants the reason, not a code.
  std::map<std::string, uint64_t> error_messages;
  std::vector<Window> windows;

  static constexpr size_t kMaxErrorMessages = 5;
  // Counts `message` once, within the cap.
  void AddErrorMessage(const std::string& message, uint64_t n = 1);
};

// An HTTP status of 0 means the call got no response at all.
constexpr bool IsErrorStatus(int http_status) { return http_status == 0 || http_status >= 400; }

class Recorder {
 public:
  explicit Recorder(WallTime start);

  // Thread-safe. `completed_at` places the call in the time series.
  void RecordCall(std::string_view operation, Duration latency, int http_status,
                  WallTime completed_at);
  // Why a call of `operation` failed (see OperationStats::error_messages).
  // `http_status` is the one RecordCall got: a call that failed although its
  // status said success (an answer that is not JSON, a truncated body) is
  // counted as an error here, as RecordCall could not know.
  void RecordError(std::string_view operation, const std::string& message, int http_status);

  // A copy of everything so far; the current second is included as a window.
  std::map<std::string, OperationStats> Snapshot() const;
  // Histograms and counts so far without the time series: cheap enough to
  // take on every Prometheus scrape of a long run.
  std::map<std::string, OperationStats> Totals() const;
  // Starts over from `start` (the next repetition of a benchmark) and returns
  // the totals recorded until now, in one step so no call falls between.
  std::map<std::string, OperationStats> Restart(WallTime start);
  WallTime start() const;

 private:
  struct Live {
    OperationStats stats;
    int64_t window_second = -1;
    Histogram window_latency;
    uint64_t window_errors = 0;
  };
  static void CloseWindow(Live& live);

  WallTime start_;
  mutable std::mutex mu_;
  std::map<std::string, Live, std::less<>> ops_;
};

}  // namespace kfpbench::metrics
