// Where a task's CPU and memory limits will be enforced (cgroups v2, a later
// issue). Kept apart so the process executor's spawn path already has the
// call in the right place.
#pragma once

#include <sys/types.h>

#include "engine/resources.h"
#include "util/result.h"

namespace kfpbench::exec {

// Called with a task's main process right after it is spawned and before it
// is waited on. Today it accepts everything and enforces nothing. An error
// fails the task, whose process group is then killed.
//
// A cgroup implementation will likely want the child placed before it execs
// (clone3 with CLONE_INTO_CGROUP); that changes Spawn's signature, not the
// executor's structure.
Status ApplyLimits(pid_t pid, const engine::Resources& resources);

}  // namespace kfpbench::exec
