// SCHEDULED_RUNS (perf-tests: PIPELINE_SCHEDULED_RUN): creates `numTimes`
// recurring runs with the scenario's cron, active for `runTime`, then follows
// every run they made. Measures trigger lag (created_at - scheduled_at),
// missed triggers (fires the cron owed that never became runs) and the runs'
// durations.
#pragma once

#include "harness/runner.h"

namespace kfpbench::harness {

// KFP's cron has six fields, seconds first; perf-tests files use the classic
// five. Five fields get "0" seconds prepended; anything else is kept as is.
std::string KfpCron(const std::string& cron);

}  // namespace kfpbench::harness
