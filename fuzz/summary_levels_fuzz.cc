// Summary levels (`kfpbench calibrate SUMMARY.json`): a table people write by
// hand. Every input must parse or be refused with the field named, never
// crash; what parses is what the fit would simulate, so its sizes are checked
// against what a simulation holds.
#include "fuzz/fuzz_support.h"
#include "sim/budget.h"
#include "sim/summary_levels.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kfpbench;
  auto levels = sim::ParseSummaryLevels(fuzz::Text(data, size));
  if (!levels.ok()) return 0;
  for (const auto& l : levels->levels) {
    if (l.runs < 1 || l.runs > sim::kMaxRuns) __builtin_trap();
    if (l.pool.max < 1 || l.pool.min > l.pool.max || l.pool.initial < l.pool.min) __builtin_trap();
    if (l.pool.cpu <= 0 || l.pool.memory <= 0) __builtin_trap();
    if (l.makespan && !(*l.makespan > 0)) __builtin_trap();
  }
  return 0;
}
