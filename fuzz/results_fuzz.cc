// results.json read back (merge, compare, report, history, calibrate,
// profile --from-results).
#include "fuzz/fuzz_support.h"
#include "results/results_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kfpbench;
  nlohmann::json j = fuzz::Json(data, size);
  if (j.is_discarded()) return 0;
  if (auto r = results::ResultsFromJson(j); r.ok()) {
    // What was read is written again: derived sections from odd values.
    (void)results::ResultsToJson(*r).dump();
  }
  (void)results::RunRecordsFromJson(j);
  return 0;
}
