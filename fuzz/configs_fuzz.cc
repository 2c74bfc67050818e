// The YAML configurations users write: training-job configs, the simulator's
// cluster and workload, calibration files and arrival CSVs, and the sizes and
// bandwidths flags take.
#include "exec/artifact_store.h"
#include "exec/stub_executor.h"
#include "fuzz/fuzz_support.h"
#include "kube/job_config.h"
#include "sim/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kfpbench;
  std::string_view text = fuzz::Text(data, size);
  (void)kube::ParseJobConfig(std::string(text), "/nonexistent");
  (void)sim::ParseCluster(text);
  (void)sim::ParseWorkload(text, "/nonexistent");
  (void)sim::ParseCalibration(text);
  (void)sim::ParseArrivalsCsv(text);
  (void)exec::ParseBandwidth(text);
  exec::StubExecutorOptions options;
  (void)exec::AddStubArtifactBytes({std::string(text)}, options);
  return 0;
}
