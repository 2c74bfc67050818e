#include "util/cron.h"

#include <charconv>
#include <ctime>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "util/strings.h"

namespace kfpbench {
namespace {

struct FieldSpec {
  const char* name;
  int min, max;
  const char* const* names;  // names for min..max, or null
};

constexpr const char* kMonths[] = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                   "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};
constexpr const char* kDays[] = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};

Result<int> ParseValue(std::string_view text, const FieldSpec& f) {
  if (f.names) {
    for (int i = 0; i <= f.max - f.min; ++i) {
      std::string_view n = f.names[i];
      if (text.size() == n.size() &&
          std::equal(text.begin(), text.end(), n.begin(),
                     [](char a, char b) { return std::toupper(a) == b; })) {
        return f.min + i;
      }
    }
  }
  int v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return Error{fmt::format("{} field: '{}' is not a number", f.name, text), kHttpBadRequest};
  }
  if (v < f.min || v > f.max) {
    return Error{fmt::format("{} field: {} is outside {}-{}", f.name, v, f.min, f.max),
                 kHttpBadRequest};
  }
  return v;
}

// One field: comma-separated items, each "*", "?", "a", "a-b", with "/step".
// Sets bits min..max; reports whether the field starts with * or ?.
template <size_t N>
Status ParseField(std::string_view text, const FieldSpec& f, std::bitset<N>& bits, bool* star) {
  if (star) *star = !text.empty() && (text[0] == '*' || text[0] == '?');
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string_view item = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (item.empty())
      return Error{fmt::format("{} field: empty list item", f.name), kHttpBadRequest};
    int step = 1;
    if (auto slash = item.find('/'); slash != std::string_view::npos) {
      std::string_view s = item.substr(slash + 1);
      auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), step);
      if (ec != std::errc() || end != s.data() + s.size() || step <= 0) {
        return Error{fmt::format("{} field: bad step '{}'", f.name, s), kHttpBadRequest};
      }
      item = item.substr(0, slash);
    }
    int lo = f.min, hi = f.max;
    if (item != "*" && item != "?") {
      auto dash = item.find('-');
      auto a = ParseValue(item.substr(0, dash), f);
      if (!a.ok()) return a.error();
      lo = hi = *a;
      if (dash != std::string_view::npos) {
        auto b = ParseValue(item.substr(dash + 1), f);
        if (!b.ok()) return b.error();
        hi = *b;
        if (hi < lo)
          return Error{fmt::format("{} field: range {} is backwards", f.name, item),
                       kHttpBadRequest};
      } else if (step > 1) {
        hi = f.max;  // "a/step" means from a to the end
      }
    }
    for (int v = lo; v <= hi; v += step) bits.set(v);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return Ok();
}

int64_t ToUnix(WallTime t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

}  // namespace

Result<CronSchedule> CronSchedule::Parse(const std::string& raw) {
  std::string text(TrimSpace(raw));
  auto bad = [&](const std::string& why) {
    return Error{fmt::format("invalid cron '{}': {}", raw, why), kHttpBadRequest};
  };
  if (text.rfind("@every ", 0) == 0) {
    auto d = ParseDuration(text.substr(7));
    if (!d.ok()) return bad(d.error().message);
    CronSchedule c;
    c.every_seconds_ = std::chrono::duration_cast<std::chrono::seconds>(*d).count();
    if (c.every_seconds_ < 1) return bad("@every needs at least 1s");
    return c;
  }
  static const std::pair<const char*, const char*> kDescriptors[] = {
      {"@yearly", "0 0 0 1 1 *"}, {"@annually", "0 0 0 1 1 *"}, {"@monthly", "0 0 0 1 * *"},
      {"@weekly", "0 0 0 * * 0"}, {"@daily", "0 0 0 * * *"},    {"@midnight", "0 0 0 * * *"},
      {"@hourly", "0 0 * * * *"}};
  for (const auto& [name, expansion] : kDescriptors) {
    if (text == name) text = expansion;
  }
  if (!text.empty() && text[0] == '@') return bad("unknown descriptor");
  std::istringstream in(text);
  std::vector<std::string> fields;
  for (std::string f; in >> f;) fields.push_back(f);
  if (fields.size() != 6) {
    return bad(
        fmt::format("expected 6 fields (second minute hour day-of-month month day-of-week), got {}",
                    fields.size()));
  }
  CronSchedule c;
  Status s = ParseField(fields[0], {"second", 0, 59, nullptr}, c.second_, nullptr);
  if (s.ok()) s = ParseField(fields[1], {"minute", 0, 59, nullptr}, c.minute_, nullptr);
  if (s.ok()) s = ParseField(fields[2], {"hour", 0, 23, nullptr}, c.hour_, nullptr);
  if (s.ok()) {
    s = ParseField(fields[3], {"day-of-month", 1, 31, nullptr}, c.day_of_month_, &c.dom_star_);
  }
  if (s.ok()) s = ParseField(fields[4], {"month", 1, 12, kMonths}, c.month_, nullptr);
  if (s.ok()) {
    // 7 is Sunday too, as in robfig/cron.
    std::bitset<8> dow;
    s = ParseField(fields[5], {"day-of-week", 0, 7, nullptr}, dow, &c.dow_star_);
    if (!s.ok()) {
      // Names: parse again on the 0-6 range that has them.
      std::bitset<7> named;
      Status named_s = ParseField(fields[5], {"day-of-week", 0, 6, kDays}, named, &c.dow_star_);
      if (named_s.ok()) {
        s = Ok();
        c.day_of_week_ = named;
      }
    } else {
      for (int d = 0; d < 7; ++d) c.day_of_week_[d] = dow[d];
      if (dow[7]) c.day_of_week_.set(0);
    }
  }
  if (!s.ok()) return bad(s.error().message);
  return c;
}

std::optional<WallTime> CronSchedule::Next(WallTime after) const {
  int64_t t = ToUnix(after) + 1;
  if (every_seconds_ > 0) return WallTime(std::chrono::seconds(t - 1 + every_seconds_));
  int64_t limit = t + int64_t{5} * 366 * 24 * 3600;
  while (t < limit) {
    time_t tt = static_cast<time_t>(t);
    std::tm tm{};
    gmtime_r(&tt, &tm);
    // Each miss jumps to the start of the next unit, like robfig's Next.
    if (!month_[tm.tm_mon + 1]) {
      tm.tm_mon += 1;
      tm.tm_mday = 1;
      tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
      t = timegm(&tm);
      continue;
    }
    bool dom = day_of_month_[tm.tm_mday], dow = day_of_week_[tm.tm_wday];
    bool day = (dom_star_ || dow_star_) ? (dom && dow) : (dom || dow);
    if (!day) {
      tm.tm_mday += 1;
      tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
      t = timegm(&tm);
      continue;
    }
    if (!hour_[tm.tm_hour]) {
      t += 3600 - tm.tm_min * 60 - tm.tm_sec;
      continue;
    }
    if (!minute_[tm.tm_min]) {
      t += 60 - tm.tm_sec;
      continue;
    }
    if (!second_[tm.tm_sec]) {
      t += 1;
      continue;
    }
    return WallTime(std::chrono::seconds(t));
  }
  return std::nullopt;
}

}  // namespace kfpbench
