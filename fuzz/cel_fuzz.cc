// The CEL subset of trigger conditions and parameter selectors.
#include "fuzz/fuzz_support.h"
#include "ir/cel.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto expr = kfpbench::ir::ParseCel(kfpbench::fuzz::Text(data, size));
  if (expr.ok()) {
    static const nlohmann::json value = {
        {"a", 1}, {"b", {1, 2.5, "x"}}, {"c", {{"d", true}}}, {"s", "text"}};
    auto v = kfpbench::ir::EvalSelector(*expr, value);
    (void)v;
  }
  return 0;
}
