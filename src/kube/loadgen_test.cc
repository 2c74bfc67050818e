#include "kube/loadgen.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "kube/json_schema.h"
#include "kube/manifest.h"

namespace kfpbench::kube {
namespace {

using nlohmann::json;

LoadgenOptions Options() {
  LoadgenOptions o;
  o.scenario_file = "/home/me/scenarios/smoke.json";
  o.scenario_text = "{\"scenarios\": []}";
  o.host = "http://ml-pipeline.kubeflow:8888";
  o.shards = 4;
  return o;
}

TEST(Loadgen, IndexedJobRunsOneShardPerPod) {
  auto docs = RenderLoadgen(Options());
  ASSERT_TRUE(docs.ok()) << docs.error().message;
  ASSERT_EQ(docs->size(), 3u);
  const auto& job = (*docs)[2];
  EXPECT_EQ(job["spec"]["completionMode"], "Indexed");
  EXPECT_EQ(job["spec"]["parallelism"], 4);
  EXPECT_EQ(job["spec"]["completions"], 4);
  std::string script = job["spec"]["template"]["spec"]["containers"][0]["command"][2];
  EXPECT_NE(
      script.find(
          "kfpbench run /etc/kfpbench/scenario/smoke.json --host http://ml-pipeline.kubeflow:8888 "
          "--shard \"${JOB_COMPLETION_INDEX}/4\""),
      std::string::npos)
      << script;
  EXPECT_EQ((*docs)[0]["data"]["smoke.json"], "{\"scenarios\": []}");
  EXPECT_EQ((*docs)[1]["metadata"]["name"], "kfpbench-loadgen-results");
}

TEST(Loadgen, BadOptions) {
  auto o = Options();
  o.shards = 0;
  EXPECT_FALSE(RenderLoadgen(o).ok());
  o = Options();
  o.host.clear();
  EXPECT_NE(RenderLoadgen(o).error().message.find("--host"), std::string::npos);
}

TEST(Loadgen, ValidatesAgainstStrictSchemas) {
  std::filesystem::path dir =
      KFPBENCH_SOURCE_DIR "/../shared/kube/jsonschema/v1.33-standalone-strict";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << dir << " absent";
  auto docs = RenderLoadgen(Options());
  ASSERT_TRUE(docs.ok());
  const char* schemas[] = {"configmap-v1.json", "persistentvolumeclaim-v1.json",
                           "job-batch-v1.json"};
  for (size_t i = 0; i < 3; ++i) {
    std::ifstream in(dir / schemas[i]);
    auto schema = json::parse(in);
    auto back = YamlToJson(ToYaml((*docs)[i]));
    ASSERT_TRUE(back.ok());
    auto errors = ValidateJson(schema, *back);
    EXPECT_TRUE(errors.empty()) << schemas[i] << ": " << json(errors).dump(1);
  }
}

}  // namespace
}  // namespace kfpbench::kube
