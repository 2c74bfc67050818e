#include "util/time.h"

#include <cmath>
#include <cstdio>
#include <ctime>

#include <fmt/format.h>

namespace kfpbench {
namespace {

bool ReadDigits(std::string_view s, size_t& pos, size_t count, int& out) {
  if (pos + count > s.size()) return false;
  int v = 0;
  for (size_t i = 0; i < count; ++i) {
    char c = s[pos + i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  pos += count;
  out = v;
  return true;
}

bool Expect(std::string_view s, size_t& pos, char c) {
  if (pos < s.size() && (s[pos] == c || (c == 'T' && s[pos] == 't'))) {
    ++pos;
    return true;
  }
  return false;
}

}  // namespace

std::string FormatRfc3339(WallTime t) {
  // Digits by hand and the date from the calendar types: this runs for every
  // time in every status the backend writes, and fmt's format-string parsing
  // plus gmtime_r (which takes glibc's time-zone lock) cost more than the
  // rest of the work.
  using namespace std::chrono;
  const auto day = floor<days>(t);
  const year_month_day ymd{day};
  const int year = static_cast<int>(ymd.year());
  const auto since = t.time_since_epoch();
  const auto secs = floor<seconds>(since);
  const int64_t nanos = duration_cast<nanoseconds>(since - secs).count();
  const int64_t of_day = (secs - duration_cast<seconds>(day.time_since_epoch())).count();
  if (year < 0 || year > 9999) {
    // Outside what four digits hold: as fmt writes it.
    std::string out =
        fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", year, static_cast<unsigned>(ymd.month()),
                    static_cast<unsigned>(ymd.day()), of_day / 3600, of_day / 60 % 60, of_day % 60);
    if (nanos != 0) {
      std::string frac = fmt::format("{:09}", nanos);
      while (!frac.empty() && frac.back() == '0') frac.pop_back();
      out += "." + frac;
    }
    return out + "Z";
  }
  char buf[32];
  auto put = [&buf](size_t at, int64_t value, int digits) {
    for (int i = digits - 1; i >= 0; --i) {
      buf[at + static_cast<size_t>(i)] = static_cast<char>('0' + value % 10);
      value /= 10;
    }
  };
  put(0, year, 4);
  buf[4] = '-';
  put(5, static_cast<unsigned>(ymd.month()), 2);
  buf[7] = '-';
  put(8, static_cast<unsigned>(ymd.day()), 2);
  buf[10] = 'T';
  put(11, of_day / 3600, 2);
  buf[13] = ':';
  put(14, of_day / 60 % 60, 2);
  buf[16] = ':';
  put(17, of_day % 60, 2);
  size_t n = 19;
  if (nanos != 0) {
    buf[n++] = '.';
    put(n, nanos, 9);
    n += 9;
    while (buf[n - 1] == '0') --n;  // nanos != 0: a digit other than 0 stops it
  }
  buf[n++] = 'Z';
  return std::string(buf, n);
}

Result<WallTime> ParseRfc3339(std::string_view s) {
  auto bad = [&] { return Error{fmt::format("invalid RFC 3339 time '{}'", s)}; };
  size_t pos = 0;
  int year = 0, mon = 0, day = 0, hour = 0, min = 0, sec = 0;
  if (!ReadDigits(s, pos, 4, year) || !Expect(s, pos, '-') || !ReadDigits(s, pos, 2, mon) ||
      !Expect(s, pos, '-') || !ReadDigits(s, pos, 2, day) || !Expect(s, pos, 'T') ||
      !ReadDigits(s, pos, 2, hour) || !Expect(s, pos, ':') || !ReadDigits(s, pos, 2, min) ||
      !Expect(s, pos, ':') || !ReadDigits(s, pos, 2, sec)) {
    return bad();
  }
  if (mon < 1 || mon > 12 || day < 1 || day > 31 || hour > 23 || min > 59 || sec > 60) {
    return bad();
  }
  int64_t nanos = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int digits = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (digits < 9) nanos = nanos * 10 + (s[pos] - '0');
      ++digits;
      ++pos;
    }
    if (digits == 0) return bad();
    for (int i = digits; i < 9; ++i) nanos *= 10;
  }
  int offset_minutes = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int sign = s[pos] == '-' ? -1 : 1;
    ++pos;
    int oh = 0, om = 0;
    if (!ReadDigits(s, pos, 2, oh) || !Expect(s, pos, ':') || !ReadDigits(s, pos, 2, om)) {
      return bad();
    }
    offset_minutes = sign * (oh * 60 + om);
  } else {
    return bad();
  }
  if (pos != s.size()) return bad();
  std::chrono::year_month_day ymd{std::chrono::year(year), std::chrono::month(mon),
                                  std::chrono::day(day)};
  if (!ymd.ok()) return bad();
  // WallTime counts nanoseconds in 64 bits: 1677-09-21 to 2262-04-11.
  if (year < 1678 || year > 2261) {
    return Error{fmt::format("'{}': out of range (years 1678 to 2261)", s)};
  }
  auto t = std::chrono::sys_days(ymd) + std::chrono::hours(hour) + std::chrono::minutes(min) +
           std::chrono::seconds(sec) - std::chrono::minutes(offset_minutes);
  return WallTime(std::chrono::duration_cast<WallClock::duration>(t.time_since_epoch() +
                                                                  std::chrono::nanoseconds(nanos)));
}

Result<Duration> ParseDuration(std::string_view text) {
  auto bad = [&] {
    return Error{fmt::format("invalid duration '{}' (expected e.g. 250ms, 30s, 5m, 1h)", text)};
  };
  if (text.empty()) return bad();
  double total_ns = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t start = pos;
    while (pos < text.size() && ((text[pos] >= '0' && text[pos] <= '9') || text[pos] == '.')) {
      ++pos;
    }
    if (pos == start) return bad();
    double number = 0;
    std::string num(text.substr(start, pos - start));
    char* end = nullptr;
    number = std::strtod(num.c_str(), &end);
    if (end != num.c_str() + num.size()) return bad();
    size_t unit_start = pos;
    while (pos < text.size() && std::isalpha(static_cast<unsigned char>(text[pos]))) ++pos;
    std::string_view unit = text.substr(unit_start, pos - unit_start);
    double scale;
    if (unit == "ns")
      scale = 1;
    else if (unit == "us" || unit == "µs")
      scale = 1e3;
    else if (unit == "ms")
      scale = 1e6;
    else if (unit == "s")
      scale = 1e9;
    else if (unit == "m")
      scale = 60e9;
    else if (unit == "h")
      scale = 3600e9;
    else
      return bad();
    total_ns += number * scale;
  }
  if (!std::isfinite(total_ns) || total_ns > 9e18) return bad();
  return Duration(static_cast<int64_t>(std::llround(total_ns)));
}

std::string FormatMillis(double ms) { return FormatDuration(FromSeconds(ms / 1000)); }

std::string FormatSeconds(double seconds) { return FormatDuration(FromSeconds(seconds)); }

double ToSeconds(Duration d) { return std::chrono::duration<double>(d).count(); }

Duration FromSeconds(double seconds) {
  // Saturate: casting a double beyond int64's range to a duration is
  // undefined behaviour, and outside input (1e999 minutes) can ask for it.
  constexpr double kMax = static_cast<double>(Duration::max().count()) / 1e9 * 0.999;
  if (std::isnan(seconds)) return Duration::zero();
  if (seconds >= kMax) return Duration::max();
  if (seconds <= -kMax) return Duration::min();
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(seconds));
}

}  // namespace kfpbench
