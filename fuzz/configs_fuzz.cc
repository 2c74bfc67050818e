// The YAML configurations users write: training-job configs, the simulator's
// cluster and workload, calibration files and arrival CSVs, and the sizes and
// bandwidths flags take. A cluster that parses is then checked and, when its
// ticks are few, simulated with a small workload: no cluster file may crash,
// hang or exhaust the simulator.
#include "exec/artifact_store.h"
#include "exec/stub_executor.h"
#include "fuzz/fuzz_support.h"
#include "kube/job_config.h"
#include "sim/budget.h"
#include "sim/config.h"
#include "sim/simulator.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kfpbench;
  std::string_view text = fuzz::Text(data, size);
  (void)kube::ParseJobConfig(std::string(text), "/nonexistent");
  if (auto cluster = sim::ParseCluster(text); cluster.ok()) {
    static const std::shared_ptr<const ir::PipelineSpec> pipeline = [] {
      auto spec = ir::ParsePipelineSpec(R"(pipelineInfo: {name: one}
schemaVersion: 2.1.0
root: {dag: {tasks: {step: {componentRef: {name: comp-step}, taskInfo: {name: step}}}}}
components: {comp-step: {executorLabel: exec-step}}
deploymentSpec: {executors: {exec-step: {container: {image: x, command: ["true"]}}}}
)");
      return std::make_shared<const ir::PipelineSpec>(std::move(*spec));
    }();
    sim::WorkloadSpec workload;
    workload.pipeline = pipeline;
    workload.runs = 3;
    int64_t nodes = 0;
    for (const auto& pool : cluster->pools) nodes += std::max(pool.initial, pool.min);
    const auto& scaler = cluster->autoscaler;
    const bool few_ticks =
        scaler.scan_interval > Duration::zero() &&
        (scaler.provisioning_delay + scaler.scale_down_idle) / scaler.scan_interval < 10'000;
    if (nodes <= 1'000 && few_ticks) {
      sim::SimOptions options;
      options.memory_budget = 64 << 20;
      (void)sim::Simulate(*cluster, workload, options);
    }
  }
  (void)sim::ParseWorkload(text, "/nonexistent");
  (void)sim::ParseCalibration(text);
  (void)sim::ParseArrivalsCsv(text);
  (void)exec::ParseBandwidth(text);
  exec::StubExecutorOptions options;
  (void)exec::AddStubArtifactBytes({std::string(text)}, options);
  return 0;
}
