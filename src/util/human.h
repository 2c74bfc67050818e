// The one way every command shows a duration, a size or a count to a person.
//
// Durations are rounded to the precision shown (halves up): 3,599.9 s shows
// as "1h0m0s", 59.96 s as "1m0s", never a figure a second short of the
// truth. Rounding can show a value on the wrong side of a limit (3,599.9 s as
// "1h0m0s" beside a 1 h limit, 7,200.4 s as "2h0m0s" beside 2 h), so where a
// value is shown beside the limit it is judged against, FormatDurationAgainst
// adds the digits that keep the comparison true ("59m59.9s", "2h0m0.4s").
// Sizes are truncated (toward zero), so a size never shows as reaching a
// capacity it does not reach: 15.999 GiB is "15.9Gi", not "16Gi".
//
// Precision: below a minute, three significant digits ("2.35s", "59.9s",
// "340ms", "1.5us"); from a minute, hours, minutes and whole seconds
// ("2h0m47s"; no days). Sizes: binary units, three significant digits, or
// four digits from 1000 of a unit to the next ("1000Gi", not "1e+03Gi";
// "2.93Ti"; exact multiples exactly: "512Mi").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "util/time.h"

namespace kfpbench {

// `d` with `decimals` (0-9) digits of the second after the whole seconds,
// rounded: FormatDurationTo(7247.25s, 1) is "2h0m47.3s".
std::string FormatDurationTo(Duration d, int decimals);

// `d` beside the `limit` it is judged against: FormatDuration's precision,
// or more decimals of the second until the shown `d` compares with the shown
// `limit` (both truncated alike) as the true values do.
std::string FormatDurationAgainst(Duration d, Duration limit);

// `d` with as many decimals as it has (none for whole seconds): for a limit
// itself, shown as given.
std::string FormatDurationExact(Duration d);

// `d` at the precision an error of `error` (a fraction: a model's error on
// what it did not see) allows: rounded to the largest of 1 s, 10 s, 1 min,
// 10 min, 1 h within a quarter of the error's span, and said to be
// approximate ("about 6h0m0s" for 5h55m40s known to 60%); as FormatDuration
// when the error is 0 or the step would be below a second.
std::string FormatDurationKnownTo(Duration d, double error);

// Bytes in binary units ("512Mi", "2.93Ti", "1000Gi", "512B").
std::string FormatBytes(double bytes);

// "1 node", "2 nodes", "0 runs": the count and the noun, plural unless 1.
std::string Plural(int64_t count, std::string_view noun);

}  // namespace kfpbench
