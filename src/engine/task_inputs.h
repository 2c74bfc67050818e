// Resolving a task's inputs from its DAG: enclosing DAG inputs, constants,
// upstream outputs, defaults, selectors and exit-handler final statuses.
#pragma once

#include <nlohmann/json.hpp>

#include "engine/run_state.h"
#include "util/result.h"

namespace kfpbench::engine::detail {

// PipelineTaskFinalStatus of task `producer` in `dag`, as exit handlers get it.
nlohmann::json FinalStatus(const DagExec& dag, int producer);

// Resolves task `i`'s input parameters and artifacts into its params and
// in_artifacts. Sets `skipped` when a required input is missing because its
// producer did not succeed (a skipped condition): such a task is skipped too.
Status ResolveTaskInputs(DagExec& dag, int i, bool& skipped);

}  // namespace kfpbench::engine::detail
