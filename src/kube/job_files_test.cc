#include "kube/job_files.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "kube/manifest.h"

namespace kfpbench::kube {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

namespace fs = std::filesystem;
using nlohmann::json;

class JobFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kfpbench-job-files-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "lib");
    std::ofstream(dir_ / "train.py") << "print('train')\n";
    std::ofstream(dir_ / "lib" / "util.py") << "X = 1\n";
  }
  void TearDown() override { fs::remove_all(dir_); }
  JobConfig Config(const std::string& command, const std::string& extra = "") {
    auto c = ParseJobConfig("name: bench\nkind: PyTorchJob\nimage: example:1\ncommand: " + command +
                                "\nreplicas: {Master: 1, Worker: 2}\n" + extra,
                            dir_);
    EXPECT_TRUE(c.ok()) << c.error().message;
    return *c;
  }
  fs::path dir_;
};

TEST_F(JobFilesTest, ScriptsTheCommandNamesAreShippedAndMounted) {
  auto c = Config("[python3, '{{config_dir}}/train.py', '--lib={{config_dir}}/lib/util.py']",
                  "env: {PYTHONPATH: '{{config_dir}}/lib/util.py:/usr/lib'}\n");
  auto cluster = PrepareClusterJob(c);
  ASSERT_TRUE(cluster.ok()) << cluster.error().message;
  ASSERT_TRUE(cluster->config_map.has_value());
  ASSERT_EQ(cluster->files.size(), 2u);
  EXPECT_EQ((*cluster->config_map)["metadata"]["name"], "bench-files");
  EXPECT_EQ((*cluster->config_map)["data"]["train.py"], "print('train')\n");
  EXPECT_EQ((*cluster->config_map)["data"]["lib.util.py"], "X = 1\n");
  auto doc = RenderClusterManifest(c, *cluster, ExpandSweep(c).front());
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  for (const char* role : {"Master", "Worker"}) {
    const auto& pod = (*doc)["spec"]["pytorchReplicaSpecs"][role]["template"]["spec"];
    EXPECT_EQ(pod["volumes"][0]["configMap"]["name"], "bench-files") << role;
    EXPECT_EQ(pod["containers"][0]["volumeMounts"][0]["mountPath"], "/etc/kfpbench/job");
    EXPECT_EQ(pod["containers"][0]["command"][1], "/etc/kfpbench/job/train.py");
    EXPECT_EQ(pod["containers"][0]["command"][2], "--lib=/etc/kfpbench/job/lib/util.py");
  }
  // Never this machine's folder.
  EXPECT_THAT(doc->dump(), Not(HasSubstr(dir_.string())));
}

TEST_F(JobFilesTest, AFolderInTheImageShipsNothing) {
  auto c = Config("[python3, '{{config_dir}}/train.py']");
  c.parameters["config_dir"] = "/opt/kfpbench/examples/jobs";
  auto cluster = PrepareClusterJob(c);
  ASSERT_TRUE(cluster.ok());
  EXPECT_FALSE(cluster->config_map.has_value());
  auto doc = RenderClusterManifest(c, *cluster, ExpandSweep(c).front());
  EXPECT_EQ((*doc)["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]
                  ["command"][1],
            "/opt/kfpbench/examples/jobs/train.py");
}

TEST_F(JobFilesTest, WhatCannotBeShippedIsRefusedWithTheFlagToSet) {
  auto missing = PrepareClusterJob(Config("[python3, '{{config_dir}}/gone.py']"));
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr("{{config_dir}}/gone.py"))
      << missing.error().message;
  EXPECT_THAT(missing.error().message, HasSubstr("--set config_dir=FOLDER"));
  auto folder = PrepareClusterJob(Config("[python3, x.py, '--data={{config_dir}}']"));
  ASSERT_FALSE(folder.ok());
  EXPECT_THAT(folder.error().message, HasSubstr("command[2]: {{config_dir}} must name a file"))
      << folder.error().message;
  auto climbs = PrepareClusterJob(Config("[python3, '{{config_dir}}/../x.py']"));
  ASSERT_FALSE(climbs.ok());
  std::ofstream(dir_ / "big.py") << std::string(kConfigMapMaxBytes, '#');
  auto big = PrepareClusterJob(Config("[python3, '{{config_dir}}/big.py']"));
  ASSERT_FALSE(big.ok());
  EXPECT_THAT(big.error().message, HasSubstr("a ConfigMap holds"));
  EXPECT_THAT(big.error().message, HasSubstr("--set config_dir=FOLDER"));
}

TEST_F(JobFilesTest, NothingNamedNothingShipped) {
  auto c = Config("[python3, train.py]");
  auto cluster = PrepareClusterJob(c);
  ASSERT_TRUE(cluster.ok());
  EXPECT_FALSE(cluster->config_map.has_value());
  auto doc = RenderClusterManifest(c, *cluster, ExpandSweep(c).front());
  EXPECT_FALSE(
      (*doc)["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"].contains("volumes"));
}

}  // namespace
}  // namespace kfpbench::kube
