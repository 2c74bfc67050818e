#include "kube/manifest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "ir/yaml_json.h"
#include "kube/json_schema.h"

namespace kfpbench::kube {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

const std::filesystem::path kShared = KFPBENCH_SOURCE_DIR "/../shared";

JobConfig Config(const std::string& kind, const std::string& replicas) {
  auto c = ParseJobConfig("name: bench\nkind: " + kind +
                          "\nimage: example:1\ncommand: [run, '--batch={{batch_size}}']\n"
                          "env: {BATCH: '{{batch_size}}', FLAG: 'true'}\n"
                          "replicas: " +
                          replicas +
                          "\nresources: {requests: {cpu: '1', memory: 512Mi}, limits: {cpu: 2}}\n"
                          "parameters: {batch_size: 32}\nsweep: {grid: {batch_size: [16, 32]}}\n");
  EXPECT_TRUE(c.ok()) << c.error().message;
  return *c;
}

// Where each kind is held back: a Job's spec.suspend, the training
// operator's runPolicy.suspend (beside the policy already rendered).
TEST(Manifest, SuspendHoldsEveryKindBack) {
  auto job =
      RenderManifest(Config("Job", "{Worker: 1}"), ExpandSweep(Config("Job", "{Worker: 1}"))[0]);
  ASSERT_TRUE(job.ok()) << job.error().message;
  EXPECT_FALSE(job->at("spec").contains("suspend"));
  Suspend(*job);
  EXPECT_EQ((*job)["spec"]["suspend"], true);
  EXPECT_FALSE((*job)["spec"].contains("runPolicy"));
  auto c = Config("PyTorchJob", "{Master: 1, Worker: 2}");
  auto pytorch = RenderManifest(c, ExpandSweep(c)[0]);
  ASSERT_TRUE(pytorch.ok());
  Suspend(*pytorch);
  EXPECT_EQ((*pytorch)["spec"]["runPolicy"]["suspend"], true);
  EXPECT_EQ((*pytorch)["spec"]["runPolicy"]["cleanPodPolicy"], "None");
  EXPECT_FALSE((*pytorch)["spec"].contains("suspend"));
}

// Pod annotations, with each point's parameters, on every replica's pods.
TEST(Manifest, AnnotationsReachEveryPod) {
  auto c = *ParseJobConfig(
      "name: a\nkind: PyTorchJob\nimage: i\ncommand: [echo]\nreplicas: {Master: 1, Worker: 1}\n"
      "annotations: {kfpbench.dev/run-seconds: '{{secs}}', sidecar.istio.io/inject: 'false'}\n"
      "parameters: {secs: 1}\nsweep: {grid: {secs: [2, 5]}}\n");
  auto doc = RenderManifest(c, ExpandSweep(c)[1]);
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  for (const char* role : {"Master", "Worker"}) {
    const auto& meta = (*doc)["spec"]["pytorchReplicaSpecs"][role]["template"]["metadata"];
    EXPECT_EQ(meta["annotations"]["kfpbench.dev/run-seconds"], "5") << role;
    EXPECT_EQ(meta["annotations"]["sidecar.istio.io/inject"], "false") << role;
    EXPECT_TRUE(meta.contains("labels"));
  }
  auto plain =
      RenderManifest(Config("Job", "{Worker: 1}"), ExpandSweep(Config("Job", "{Worker: 1}"))[0]);
  EXPECT_FALSE((*plain)["spec"]["template"]["metadata"].contains("annotations"));
}

TEST(Manifest, PyTorchJobShape) {
  auto c = Config("PyTorchJob", "{Master: 1, Worker: 2}");
  auto points = ExpandSweep(c);
  auto doc = RenderManifest(c, points[1]);
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  EXPECT_EQ((*doc)["metadata"]["name"], "bench-1");
  const auto& specs = (*doc)["spec"]["pytorchReplicaSpecs"];
  EXPECT_EQ(specs["Worker"]["replicas"], 2);
  const auto& container = specs["Master"]["template"]["spec"]["containers"][0];
  EXPECT_EQ(container["name"], "pytorch");
  EXPECT_EQ(container["command"][1], "--batch=32");
  EXPECT_EQ(container["env"][0]["value"], "32");
  EXPECT_EQ(container["resources"]["limits"]["cpu"], "2");
}

TEST(Manifest, YamlKeepsAmbiguousStringsStrings) {
  auto c = Config("Job", "{Worker: 2}");
  auto doc = RenderManifest(c, ExpandSweep(c)[0]);
  ASSERT_TRUE(doc.ok());
  std::string yaml = ToYaml(*doc);
  EXPECT_THAT(yaml, HasSubstr("value: \"16\"")) << yaml;
  EXPECT_THAT(yaml, HasSubstr("value: \"true\"")) << yaml;
  auto back = ir::YamlToJson(yaml);
  ASSERT_TRUE(back.ok() && back->size() == 1);
  EXPECT_EQ(back->front(), *doc);
}

TEST(Manifest, MpiWorkersGetNoCommand) {
  auto c = Config("MPIJob", "{Launcher: 1, Worker: 2}");
  auto doc = RenderManifest(c, ExpandSweep(c)[0]);
  ASSERT_TRUE(doc.ok());
  const auto& specs = (*doc)["spec"]["mpiReplicaSpecs"];
  EXPECT_TRUE(specs["Launcher"]["template"]["spec"]["containers"][0].contains("command"));
  EXPECT_FALSE(specs["Worker"]["template"]["spec"]["containers"][0].contains("command"));
}

json LoadSchema(const std::filesystem::path& file) {
  std::ifstream in(file);
  return json::parse(in);
}

// Every kind, rendered and read back from its YAML, against the official
// strict schemas (Kubernetes 1.33, training-operator v1.9.0 CRDs).
TEST(Manifest, EveryKindValidatesAgainstOfficialSchemas) {
  if (!std::filesystem::exists(kShared / "kube/jsonschema")) GTEST_SKIP() << kShared << " absent";
  struct Case {
    std::string kind, replicas, schema;
  };
  std::vector<Case> cases = {
      {"Job", "{Worker: 3}", "v1.33-standalone-strict/job-batch-v1.json"},
      {"TFJob", "{Chief: 1, PS: 1, Worker: 2}", "training-operator-v1.9.0/tfjob_v1.json"},
      {"PyTorchJob", "{Master: 1, Worker: 2}", "training-operator-v1.9.0/pytorchjob_v1.json"},
      {"MPIJob", "{Launcher: 1, Worker: 2}", "training-operator-v1.9.0/mpijob_v1.json"},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.kind);
    auto schema = LoadSchema(kShared / "kube/jsonschema" / tc.schema);
    auto c = Config(tc.kind, tc.replicas);
    for (const auto& point : ExpandSweep(c)) {
      auto doc = RenderManifest(c, point);
      ASSERT_TRUE(doc.ok()) << doc.error().message;
      auto back = ir::YamlToJson(ToYaml(*doc));
      ASSERT_TRUE(back.ok() && back->size() == 1);
      auto errors = ValidateJson(schema, back->front());
      EXPECT_TRUE(errors.empty()) << json(errors).dump(1);
    }
    // And the validator really is strict on these schemas.
    auto doc = *RenderManifest(c, ExpandSweep(c)[0]);
    doc["spec"]["bogus"] = 1;
    EXPECT_FALSE(ValidateJson(schema, doc).empty());
  }
}

// The example configs in examples/jobs render schema-valid manifests.
TEST(Manifest, ExampleConfigsValidate) {
  if (!std::filesystem::exists(kShared / "kube/jsonschema")) GTEST_SKIP() << kShared << " absent";
  const std::map<JobKind, std::string> schema_of = {
      {JobKind::kJob, "v1.33-standalone-strict/job-batch-v1.json"},
      {JobKind::kTFJob, "training-operator-v1.9.0/tfjob_v1.json"},
      {JobKind::kPyTorchJob, "training-operator-v1.9.0/pytorchjob_v1.json"},
      {JobKind::kMPIJob, "training-operator-v1.9.0/mpijob_v1.json"}};
  int rendered = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(KFPBENCH_SOURCE_DIR "/examples/jobs")) {
    if (entry.path().extension() != ".yaml") continue;
    auto c = LoadJobConfig(entry.path());
    ASSERT_TRUE(c.ok()) << c.error().message;
    auto schema = LoadSchema(kShared / "kube/jsonschema" / schema_of.at(c->kind));
    for (const auto& point : ExpandSweep(*c)) {
      auto doc = RenderManifest(*c, point);
      ASSERT_TRUE(doc.ok()) << doc.error().message;
      auto back = ir::YamlToJson(ToYaml(*doc));
      ASSERT_TRUE(back.ok() && back->size() == 1);
      auto errors = ValidateJson(schema, back->front());
      EXPECT_TRUE(errors.empty()) << entry.path() << ": " << json(errors).dump(1);
      ++rendered;
    }
  }
  EXPECT_GE(rendered, 4);
}

TEST(Manifest, StrictSchemaCatchesWrongTypes) {
  if (!std::filesystem::exists(kShared / "kube/jsonschema")) GTEST_SKIP() << kShared << " absent";
  auto schema = LoadSchema(kShared / "kube/jsonschema/v1.33-standalone-strict/job-batch-v1.json");
  auto c = Config("Job", "{Worker: 1}");
  auto doc = *RenderManifest(c, ExpandSweep(c)[0]);
  doc["spec"]["template"]["spec"]["containers"][0]["env"][0]["value"] = 16;  // unquoted
  auto errors = ValidateJson(schema, doc);
  ASSERT_EQ(errors.size(), 1u) << json(errors).dump(1);
  EXPECT_EQ(errors[0],
            "$.spec.template.spec.containers[0].env[0].value: expected string, got number");
}

}  // namespace
}  // namespace kfpbench::kube
