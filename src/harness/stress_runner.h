// The stress shape: open-loop steps of rising rate from the scenario's
// `rate`, each judged against an SLO, until one breaks it. Its settings
// (scenario key "stress"), their checks, plan and sharding, and its driver,
// which sends the mode's own runs (ShapeLoad). It fills results.json's
// "stress" section.
#pragma once

#include "harness/scenario.h"
#include "util/time.h"

namespace kfpbench::harness {

// {"stepTime": "1m", "rateFactor": 2, "maxRate": 600,
//  "slo": {"p95": "30s", "errorRate": "1%"}}: steps of step_time from `rate`,
// multiplied by rate_factor each step, until the SLO breaks or max_rate is
// passed.
struct StressSettings : ShapeData {
  double rate_factor = 2.0;
  Duration step_time{};
  double max_rate = 0;  // runs per minute; 0: no limit but runTime
  Duration slo_p95{};   // latency from intended start, p95
  double slo_error_rate = 0.01;
};

}  // namespace kfpbench::harness
