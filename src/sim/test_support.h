// Shared by the sim tests: the six-step example pipeline and small clusters.
#pragma once

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include <gtest/gtest.h>

#include "ir/pipeline_spec.h"
#include "sim/model.h"

namespace kfpbench::sim::testing {

inline std::filesystem::path CapacityExamples() {
  return std::filesystem::path(KFPBENCH_SOURCE_DIR) / "examples" / "capacity";
}

inline std::shared_ptr<const ir::PipelineSpec> SixSteps() {
  std::ifstream in(CapacityExamples() / "six_steps.yaml");
  std::stringstream s;
  s << in.rdbuf();
  auto spec = ir::ParsePipelineSpec(s.str());
  EXPECT_TRUE(spec.ok()) << spec.error().message;
  return std::make_shared<const ir::PipelineSpec>(std::move(*spec));
}

inline ClusterSpec FixedCluster(int nodes, double cpu, int64_t memory = int64_t{16} << 30) {
  ClusterSpec c;
  c.pools.push_back({"fixed", cpu, memory, nodes, nodes, nodes, {}, {}, {}});
  c.autoscaler.enabled = false;
  return c;
}

// prepare/evaluate/publish take `step`, each trainer `train`; no overhead.
inline WorkloadSpec SixStepWorkload(int64_t runs, Duration step, Duration train) {
  WorkloadSpec w;
  w.pipeline = SixSteps();
  w.runs = runs;
  w.steps.fallback.duration = exec::DurationDist::Constant(step);
  w.steps.by_label["exec-train"].duration = exec::DurationDist::Constant(train);
  return w;
}

}  // namespace kfpbench::sim::testing
