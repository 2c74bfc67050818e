// How many whole runs of a pipeline fit on one node at once: by the level of
// its DAG (tasks at the same longest-path depth, which run together) whose
// recommended requests add up to the most, normally the widest. Jobs per step
// says how many of one step fit; this says how many pipelines do.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "ir/pipeline_spec.h"
#include "plan/profile.h"

namespace kfpbench::plan {

// Each task's level: its longest path from the start, in dependencies (0:
// none). Tasks at one level run together.
std::map<std::string, int> TaskLevels(const ir::DagSpec& dag);

// Empty without a node size or when no step of the root DAG was profiled.
std::optional<PipelineFit> PipelinesPerNode(const ir::PipelineSpec& spec,
                                            const ProfileReport& report);

// Sets report.pipeline_fit from PipelinesPerNode.
void AddPipelineFit(const ir::PipelineSpec& spec, ProfileReport& report);

// Sets each profiled step's accelerator from its executor in `spec`: what
// the pipeline asks for, which a sampler cannot see.
void AddRequestedAccelerators(const ir::PipelineSpec& spec, ProfileReport& report);

}  // namespace kfpbench::plan
