// Runs examples/jobs/pytorch-ddp-cpu.yaml with the local driver: a real
// 2-replica DDP job (gloo on CPU), briefly. Skipped without python3-torch.
#include <gtest/gtest.h>

#include "kube/driver.h"
#include "kube/job_runner.h"
#include "kube/process.h"

namespace kfpbench::kube {
namespace {

std::string PythonWithTorch() {
  // /usr/bin/python3 too: Debian's python3-torch is not seen by a pyenv python3.
  for (const char* python : {"python3", "/usr/bin/python3"}) {
    auto r =
        RunCapture({python, "-c", "import torch.distributed as d; assert d.is_gloo_available()"},
                   std::chrono::seconds(60));
    if (r.ok() && r->exit_code == 0) return python;
  }
  return "";
}

TEST(DdpExample, TwoReplicasTrainAndReportSamplesPerSec) {
  std::string python = PythonWithTorch();
  if (python.empty()) GTEST_SKIP() << "python3 with torch (python3-torch) not available";
  auto c = LoadJobConfig(KFPBENCH_SOURCE_DIR "/examples/jobs/pytorch-ddp-cpu.yaml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_TRUE(SetParameter(*c, "python=" + python).ok());
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
