// Runs every sweep point of a config, one after another, through a driver
// and reads the metrics from the replicas' logs.
#pragma once

#include <functional>

#include "kube/driver.h"
#include "kube/job_results.h"
#include "util/result.h"

namespace kfpbench::kube {

// An Error only for a bad config (a metric regex that does not compile); a
// failed job is a Failed row and the sweep goes on.
Result<JobSweepResult> RunSweep(const JobConfig& config, Driver& driver,
                                const std::function<void(const JobRunResult&)>& on_run = {});

}  // namespace kfpbench::kube
