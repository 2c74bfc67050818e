// kubectl's JSON as kfpbench reads it: a Pod, and an EventList about pods.
#include "fuzz/fuzz_support.h"
#include "kube/pod_timeline.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kfpbench;
  nlohmann::json j = fuzz::Json(data, size);
  if (j.is_discarded()) return 0;
  auto events = kube::EventsByPod(j);
  std::vector<nlohmann::json> all;
  for (auto& [pod, list] : events) all.insert(all.end(), list.begin(), list.end());
  (void)kube::ReadPodTimeline(j, all);
  return 0;
}
