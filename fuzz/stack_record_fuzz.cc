// A workload plan (`kfpbench stack-plan`) and a stack's record of it
// (argo-run-plan's): files another program writes, read by `stack-result`.
// Each must parse or be refused with the field named; a parsed pair must
// become a result or an error, never a crash, a hang or a negative time
// (the record's dependencies may form cycles: they must not recurse).
#include "fuzz/fuzz_support.h"
#include "sim/stack_record.h"
#include "sim/workload_plan.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kfpbench;
  auto [plan_text, record_text] = fuzz::TwoParts(data, size);
  auto plan = sim::ParseWorkloadPlan(plan_text);
  auto record = sim::ParseStackRecord(record_text);
  if (!plan.ok() || !record.ok()) return 0;
  sim::ClusterSpec cluster;
  cluster.pools.push_back({"p", 16, int64_t{64} << 30, 1, 1, 1, {}, {}, {}});
  auto result = sim::StackResult(*plan, *record, cluster);
  if (!result.ok()) return 0;
  if (result->makespan < Duration::zero() || result->pending_ms.min() < 0) __builtin_trap();
  return 0;
}
