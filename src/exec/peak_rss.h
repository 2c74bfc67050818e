// Peak resident memory of a step, as well as it can be known without cgroups.
//
// wait4's ru_maxrss alone is wrong for small steps: at exec, Linux folds the
// *spawning* process's high-water RSS into the child's maxrss (exec_mmap ->
// setmax_mm_hiwater_rss on the old mm, which for posix_spawn is ours), so a
// `true` spawned by a 300 MB server reports 300 MB. So the executor samples
// the step's process tree while it runs and only trusts ru_maxrss when it is
// above what it could have inherited. Where the executor runs steps in cgroups
// (limits.h), memory.max_usage_in_bytes replaces this estimate.
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace kfpbench::exec {

// VmHWM of one process in bytes; 0 if it is gone, a zombie or unreadable.
int64_t ProcessPeakRss(pid_t pid);

// The largest VmHWM among `pid` and its descendants (through
// /proc/<pid>/task/<tid>/children); 0 if none is readable. Per process, not
// summed, matching ru_maxrss.
int64_t TreePeakRss(pid_t pid);

// This process's VmHWM: the most a child spawned now can inherit.
int64_t SelfPeakRss();

// Combines the two sources: ru_maxrss (bytes) when it exceeds what the child
// inherited from us (then it is the step's own), else the sampled value
// (a lower bound; 0 when the step ended before any sample).
int64_t EstimatePeakRss(int64_t ru_maxrss_bytes, int64_t inherited_bytes, int64_t sampled_bytes);

}  // namespace kfpbench::exec
