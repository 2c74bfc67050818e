// What one reading of the step profiler costs: a scan of /proc (every
// process's stat file) and the sum over one process group. `kfpbench profile`
// takes one per --sample-interval (100 ms), so this bounds its overhead.
#include <dirent.h>
#include <unistd.h>

#include <benchmark/benchmark.h>

#include "exec/resource_sampler.h"

namespace kfpbench::exec {
namespace {

int CountProcesses() {
  int n = 0;
  DIR* dir = opendir("/proc");
  if (dir == nullptr) return 0;
  while (dirent* entry = readdir(dir)) n += entry->d_name[0] >= '0' && entry->d_name[0] <= '9';
  closedir(dir);
  return n;
}

void BM_ReadGroupUsage(benchmark::State& state) {
  const pid_t group = getpgrp();
  for (auto _ : state) {
    auto usage = ReadGroupUsage(group);
    benchmark::DoNotOptimize(usage);
  }
  state.counters["processes"] = CountProcesses();
}
BENCHMARK(BM_ReadGroupUsage)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace kfpbench::exec

BENCHMARK_MAIN();
