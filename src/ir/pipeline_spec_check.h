// The checks of a parsed pipeline spec that need every component known: each
// name a DAG's tasks use (components, tasks, inputs, outputs) resolves, every
// required input is bound, no DAG has a dependency cycle, and no component
// contains itself or nests deeper than Argo allows. These are what KFP's
// compiler and driver would refuse, found at upload so that the engine never
// meets a dangling name while a run is in flight. Internal to src/ir:
// ParsePipelineSpec runs them.
#pragma once

#include "ir/pipeline_spec.h"
#include "util/result.h"

namespace kfpbench::ir::detail {

// Checks `spec` and, on the way, fills what the checks compute: each task's
// `upstream` and each DAG's `topo_order`. The first problem found is the
// error, naming its JSON path.
Status CheckPipelineSpec(PipelineSpec& spec);

}  // namespace kfpbench::ir::detail
