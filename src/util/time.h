// Wall-clock time points and the textual forms kfpbench reads and writes.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "util/result.h"

namespace kfpbench {

using WallClock = std::chrono::system_clock;
using WallTime = WallClock::time_point;
using Duration = std::chrono::nanoseconds;

// RFC 3339 in UTC with up to nanosecond precision, as KFP writes timestamps
// ("2024-01-02T03:04:05.123Z"; trailing zero fractions dropped, none when whole).
std::string FormatRfc3339(WallTime t);
// Accepts "Z" or a numeric offset, and fractions of any length.
Result<WallTime> ParseRfc3339(std::string_view text);

// Human durations: "250ms", "30s", "5m", "1h", "1.5s", "2m30s", "100us".
// A bare number is taken in `bare_unit` (e.g. minutes in perf-tests scenarios).
Result<Duration> ParseDuration(std::string_view text);
// "1.25s", "340ms", "2m5s", "2h0m47s": rounded to the precision shown
// (util/human.h says why and gives the other forms; defined there).
std::string FormatDuration(Duration d);

double ToSeconds(Duration d);
// Whole milliseconds, truncated: what latency histograms record.
inline int64_t ToMillis(Duration d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}
// FormatDuration of a number of milliseconds (a histogram's unit), and of seconds.
std::string FormatMillis(double ms);
std::string FormatSeconds(double seconds);
// Saturates at Duration::max()/min(); NaN is zero.
Duration FromSeconds(double seconds);

}  // namespace kfpbench
