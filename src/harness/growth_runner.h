// The growth shape of a PIPELINE_RUN scenario as the runner drives it; the
// fill, clean-up and measurement it is made of are in growth_fill.h, which
// knows no Context (the Context's clean-up deletes fills through it).
#pragma once

#include "harness/runner.h"
#include "harness/scenario.h"
#include "util/result.h"

namespace kfpbench::harness {

// Level by level: fill, settle, count, measure. Records the curve into the
// context after each level, so an interruption keeps the levels done.
Status RunGrowth(const Scenario& scenario, Context& context);

}  // namespace kfpbench::harness
