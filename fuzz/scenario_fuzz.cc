// Scenario files (perf-tests arrays and kfpbench's object form) and the
// orchestrator's CSV tables.
#include "fuzz/fuzz_support.h"
#include "harness/orchestrate_csv.h"
#include "harness/scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kfpbench;
  std::string text(fuzz::Text(data, size));
  (void)harness::ParseScenarios(text, "/nonexistent/s.json", {});
  (void)harness::ParseCsv(text);
  return 0;
}
