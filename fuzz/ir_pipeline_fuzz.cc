// Compiled KFP IR, YAML or JSON, as uploads and pipeline files bring it.
#include "fuzz/fuzz_support.h"
#include "ir/pipeline_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto spec = kfpbench::ir::ParsePipelineSpec(kfpbench::fuzz::Text(data, size));
  (void)spec;
  return 0;
}
