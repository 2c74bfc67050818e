// Runs examples/jobs/pytorch-ddp-cpu.yaml with the local driver: a real
// 2-replica DDP job (gloo on CPU), briefly. Skipped without python3-torch.
#include <gtest/gtest.h>

#include "kube/driver.h"
#include "kube/job_runner.h"
#include "kube/process.h"

namespace kfpbench::kube {
namespace {

// The example's own interpreter, Debian's /usr/bin/python3 (python3-torch
// is installed for it, not for a pyenv python3 that may come first on PATH).
bool ExamplePythonHasTorch() {
  auto r = RunCapture(
      {"/usr/bin/python3", "-c", "import torch.distributed as d; assert d.is_gloo_available()"},
      std::chrono::seconds(60));
  return r.ok() && r->exit_code == 0;
}

TEST(DdpExample, TwoReplicasTrainAndReportSamplesPerSec) {
  if (!ExamplePythonHasTorch())
    GTEST_SKIP() << "/usr/bin/python3 cannot import torch (python3-torch)";
  auto c = LoadJobConfig(KFPBENCH_SOURCE_DIR "/examples/jobs/pytorch-ddp-cpu.yaml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_TRUE(SetParameter(*c, "steps=3").ok());
  c->sweep = {{{"batch_size", "8"}}, {{"batch_size", "32"}}};  // brief
  c->metrics.push_back({"world_size", "", "world_size", "last", "max", {}});
  LocalDriver driver({});
  auto result = RunSweep(*c, driver);
  ASSERT_TRUE(result.ok()) << result.error().message;
  ASSERT_EQ(result->runs.size(), 2u);
  for (const auto& run : result->runs) {
    ASSERT_TRUE(run.succeeded) << run.error;
    EXPECT_EQ(run.metrics.at("world_size"), 2.0);
    ASSERT_TRUE(run.metrics.at("samples_per_sec").has_value());
    EXPECT_GT(*run.metrics.at("samples_per_sec"), 0);
    ASSERT_TRUE(run.metrics.at("step_time_s").has_value());
    EXPECT_GT(*run.metrics.at("step_time_s"), 0);
    EXPECT_TRUE(run.metrics.at("last_loss").has_value());
  }
  EXPECT_EQ(result->runs[1].params.at("batch_size"), "32");
}

}  // namespace
}  // namespace kfpbench::kube
