// KFP's cron schedules (robfig/cron as the ScheduledWorkflow controller uses
// it): six fields, seconds first ("*/10 * * * * *"), with *, ?, lists, ranges,
// steps and month/day names, or a descriptor: @yearly, @monthly, @weekly,
// @daily, @hourly, @every <duration>. Times are UTC.
#pragma once

#include <bitset>
#include <optional>
#include <string>

#include "util/result.h"
#include "util/time.h"

namespace kfpbench {

class CronSchedule {
 public:
  static Result<CronSchedule> Parse(const std::string& text);

  // The first time strictly after `after` (whole seconds) that matches, or
  // nothing when none does within five years (e.g. "0 0 0 30 2 *").
  std::optional<WallTime> Next(WallTime after) const;

 private:
  std::bitset<60> second_, minute_;
  std::bitset<24> hour_;
  std::bitset<32> day_of_month_;  // 1..31
  std::bitset<13> month_;         // 1..12
  std::bitset<7> day_of_week_;    // 0 = Sunday
  bool dom_star_ = false, dow_star_ = false;
  int64_t every_seconds_ = 0;  // @every: a fixed interval instead of the fields
};

}  // namespace kfpbench
