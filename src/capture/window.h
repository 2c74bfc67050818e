// The time window a capture reads: its two ends from the command line
// (RFC 3339, or a duration back from now such as "24h"), and the KFP filter
// that selects the runs created within it.
#pragma once

#include <string>
#include <string_view>

#include "util/result.h"
#include "util/time.h"

namespace kfpbench::capture {

// "2026-11-20T00:00:00Z" as it reads; "24h" or "90m" as that long before
// `now`. Errors name the text and both forms accepted.
Result<WallTime> ParseWindowPoint(std::string_view text, WallTime now);

// KFP's filter JSON (backend/api/v2beta1/filter.proto) for since <= created_at
// < until. KFP compares created_at in whole seconds, so a resumed capture asks
// from the second it stopped in and skips the runs it already has.
std::string CreatedAtFilter(WallTime since, WallTime until);

}  // namespace kfpbench::capture
