// What changes the meaning of a benchmark's figures (results partial, steps
// that were stubs, runs answered from the cache, times scaled, observation
// that lagged, objects left on the target), computed once from the results
// and shown by every reporter at its top: the console, report.html,
// Markdown and JUnit say the same things in the same words.
#pragma once

#include <string>
#include <vector>

#include "results/results.h"

namespace kfpbench::report {

struct Caveat {
  std::string
      key;  // "partial", "stub_steps", "cache", "time_scale", ...: stable, for tests and tools
  std::string text;  // one sentence for a person
};

std::vector<Caveat> CaveatsOf(const results::BenchmarkResults& results);

// The observer lagged when calls waited on its --observer-qps budget for
// more than this share of the benchmark's time (summed over calls), or when
// run ends were seen more than two poll intervals after the server's
// finished_at at p50.
inline constexpr double kObserverWaitShare = 0.1;

}  // namespace kfpbench::report
