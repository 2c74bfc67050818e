// KFP's list parameters as the embedded server receives them: page size,
// page token, sort and filter, one per line, planned over the runs' fields
// (KFP's runAPIToModelFieldMap, tags and metric sorts included); a fifth line
// "v1" reads the filter as v1beta1's.
#include "fuzz/fuzz_support.h"
#include "store/list_query.h"
#include "store/store_internal.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kfpbench;
  std::string_view text = fuzz::Text(data, size);
  std::string parts[5];
  for (auto& part : parts) {
    size_t nl = text.find('\n');
    part = std::string(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  }
  store::ListRequest request{
      parts[0], parts[1], parts[2], parts[3],
      parts[4] == "v1" ? store::FilterApi::kV1beta1 : store::FilterApi::kV2beta1};
  if (auto plan = store::PlanList(request, store::internal::RunListable()); plan.ok()) {
    (void)store::NextPageToken(*plan, store::SqlValue(int64_t{42}), "id-1");
  }
  return 0;
}
