#include "kube/loadgen.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "ir/yaml_json.h"
#include "kube/json_schema.h"
#include "kube/manifest.h"

namespace kfpbench::kube {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

namespace fs = std::filesystem;
using nlohmann::json;

LoadgenOptions DefaultLoadgenOptions() {
  LoadgenOptions o;
  o.scenario_path = "smoke.json";
  o.files = {{"smoke.json", "{\"scenarios\": []}"}, {"pipelines/a.yaml", "pipelineInfo: {}"}};
  // Text a YAML block scalar cannot hold as is: trailing spaces and tabs, no
  // final newline, leading blank lines and indentation.
  o.files.push_back({"odd.txt", "\n\n  indented\ntrailing  \n\ttab\nno newline"});
  o.host = "http://ml-pipeline.kubeflow:8888";
  o.image = "registry.example.com/kfpbench/kfpbench:0.1.0";
  o.shards = 4;
  o.start_at = WallTime(std::chrono::seconds(1800000000));
  return o;
}

std::string Script(const json& job) {
  return job["spec"]["template"]["spec"]["containers"][0]["command"][2];
}

TEST(Loadgen, IndexedJobRunsOneShardPerPod) {
  auto docs = RenderLoadgen(DefaultLoadgenOptions());
  ASSERT_TRUE(docs.ok()) << docs.error().message;
  ASSERT_EQ(docs->size(), 2u);
  const auto& job = (*docs)[1];
  EXPECT_EQ(job["spec"]["completionMode"], "Indexed");
  EXPECT_EQ(job["spec"]["parallelism"], 4);
  EXPECT_EQ(job["spec"]["completions"], 4);
  EXPECT_EQ(job["spec"]["backoffLimitPerIndex"], 0);
  std::string script = Script(job);
  EXPECT_THAT(script, HasSubstr("kfpbench run '/etc/kfpbench/scenario/smoke.json' --host "
                                "'http://ml-pipeline.kubeflow:8888' --shard \"$i/4\""))
      << script;
  EXPECT_THAT(script, HasSubstr("i=\"${JOB_COMPLETION_INDEX}\"")) << script;
  const auto& cm = (*docs)[0];
  EXPECT_EQ(cm["data"]["smoke.json"], "{\"scenarios\": []}");
  EXPECT_EQ(cm["data"]["pipelines.a.yaml"], "pipelineInfo: {}");
  const auto& volumes = job["spec"]["template"]["spec"]["volumes"];
  EXPECT_EQ(volumes[0]["configMap"]["items"][1],
            json({{"key", "pipelines.a.yaml"}, {"path", "pipelines/a.yaml"}}));
  // No storage class needed: each shard writes to its own emptyDir.
  EXPECT_EQ(volumes[1]["emptyDir"]["sizeLimit"], "1Gi");
  const auto& container = job["spec"]["template"]["spec"]["containers"][0];
  EXPECT_EQ(container["image"], "registry.example.com/kfpbench/kfpbench:0.1.0");
  // Guaranteed QoS (CPU and memory requested as limited), the emptyDir asked for.
  const auto& resources = container["resources"];
  for (const char* r : {"cpu", "memory"})
    EXPECT_EQ(resources["requests"][r], resources["limits"][r]);
  EXPECT_EQ(resources["requests"]["cpu"], "1");
  EXPECT_EQ(resources["requests"]["ephemeral-storage"], "1Gi");
  EXPECT_FALSE(resources["limits"].contains("ephemeral-storage"));
  const auto& spread = job["spec"]["template"]["spec"]["topologySpreadConstraints"][0];
  EXPECT_EQ(spread["topologyKey"], "kubernetes.io/hostname");
  EXPECT_EQ(spread["labelSelector"]["matchLabels"], job["spec"]["template"]["metadata"]["labels"]);
  EXPECT_EQ(container["readinessProbe"]["exec"]["command"][2], "/results/ready");
}

TEST(Loadgen, ShardsWaitForOneStartTime) {
  std::string script = Script((*RenderLoadgen(DefaultLoadgenOptions()))[1]);
  EXPECT_THAT(script, HasSubstr("start_ns=1800000000000000000\n")) << script;
  EXPECT_THAT(script, HasSubstr("2027-01-15T08:00:00Z")) << script;
  EXPECT_THAT(script, HasSubstr("exit 3"));
  auto o = DefaultLoadgenOptions();
  o.start_at = {};
  EXPECT_FALSE(RenderLoadgen(o).ok());
}

TEST(Loadgen, TokenComesFromASecretFile) {
  auto o = DefaultLoadgenOptions();
  o.token_secret = "kfp-token";
  auto docs = RenderLoadgen(o);
  ASSERT_TRUE(docs.ok());
  const auto& spec = (*docs)[1]["spec"]["template"]["spec"];
  EXPECT_EQ(spec["volumes"][2]["secret"]["secretName"], "kfp-token");
  EXPECT_EQ(spec["containers"][0]["volumeMounts"][2]["mountPath"], "/var/run/secrets/kfpbench");
  EXPECT_THAT(Script((*docs)[1]), HasSubstr("--token-file '/var/run/secrets/kfpbench/token'"));
  EXPECT_EQ(TokenSecretCommand(o, "/home/me/my token"),
            "kubectl create secret generic kfp-token -n default --from-file=token='/home/me/my "
            "token'");
  EXPECT_THAT(Script((*RenderLoadgen(DefaultLoadgenOptions()))[1]), Not(HasSubstr("--token-file")));
}

// A namespace enforcing the `restricted` Pod Security Standard admits the
// pods: non-root (the Dockerfile's user), no privilege escalation, every
// capability dropped, seccomp RuntimeDefault; the token stays readable by
// that user alone (its group, through fsGroup).
TEST(Loadgen, PodsMeetTheRestrictedPodSecurityStandard) {
  auto o = DefaultLoadgenOptions();
  o.token_secret = "kfp-token";
  auto docs = RenderLoadgen(o);
  ASSERT_TRUE(docs.ok()) << docs.error().message;
  const auto& spec = (*docs)[1]["spec"]["template"]["spec"];
  EXPECT_EQ(spec["securityContext"]["runAsNonRoot"], true);
  EXPECT_EQ(spec["securityContext"]["runAsUser"], kLoadgenUid);
  EXPECT_NE(spec["securityContext"]["runAsUser"], 0);
  EXPECT_EQ(spec["securityContext"]["fsGroup"], kLoadgenUid);
  EXPECT_EQ(spec["securityContext"]["seccompProfile"]["type"], "RuntimeDefault");
  const auto& container = spec["containers"][0]["securityContext"];
  EXPECT_EQ(container["allowPrivilegeEscalation"], false);
  EXPECT_EQ(container["capabilities"]["drop"], json({"ALL"}));
  EXPECT_FALSE(container["capabilities"].contains("add"));
  EXPECT_EQ(spec["volumes"][2]["secret"]["defaultMode"], 0440);
  for (const auto& v : spec["volumes"]) EXPECT_FALSE(v.contains("hostPath")) << v.dump();
}

// What `run` is told on this machine reaches every shard's `run`: KFP's
// namespace, the time scale and the CA file (shipped beside the scenario).
TEST(Loadgen, ShardsGetTheKfpNamespaceTimeScaleAndCaFile) {
  auto o = DefaultLoadgenOptions();
  std::string plain = Script((*RenderLoadgen(o))[1]);
  EXPECT_THAT(plain, Not(HasSubstr("--namespace"))) << plain;
  EXPECT_THAT(plain, Not(HasSubstr("--time-scale"))) << plain;
  EXPECT_THAT(plain, Not(HasSubstr("--ca-file"))) << plain;
  o.kube_namespace = "loadgen";
  o.kfp_namespace = "team a";
  o.time_scale = 0.25;
  auto ca = fs::temp_directory_path() / ("kfpbench-ca-" + std::to_string(::getpid()) + ".crt");
  { std::ofstream(ca) << "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"; }
  ASSERT_TRUE(ShipCaFile(ca, o).ok());
  fs::remove(ca);
  auto docs = RenderLoadgen(o);
  ASSERT_TRUE(docs.ok()) << docs.error().message;
  std::string script = Script((*docs)[1]);
  EXPECT_THAT(script, HasSubstr(" --namespace 'team a'")) << script;
  EXPECT_THAT(script, HasSubstr(" --time-scale 0.25")) << script;
  EXPECT_THAT(script,
              HasSubstr(" --ca-file '/etc/kfpbench/scenario/ca/" + ca.filename().string() + "'"))
      << script;
  EXPECT_EQ((*docs)[0]["metadata"]["namespace"], "loadgen");
  EXPECT_EQ((*docs)[1]["metadata"]["namespace"], "loadgen");
  bool shipped = false;
  for (const auto& [key, text] : (*docs)[0]["data"].items()) {
    shipped |= text.get<std::string>().find("BEGIN CERTIFICATE") != std::string::npos;
  }
  EXPECT_TRUE(shipped);
  o.time_scale = 0;
  EXPECT_THAT(RenderLoadgen(o).error().message, HasSubstr("--time-scale"));
  EXPECT_FALSE(ShipCaFile("/nonexistent/ca.crt", o).ok());
}

TEST(Loadgen, BadOptions) {
  auto o = DefaultLoadgenOptions();
  o.shards = 0;
  EXPECT_FALSE(RenderLoadgen(o).ok());
  o = DefaultLoadgenOptions();
  o.host.clear();
  EXPECT_THAT(RenderLoadgen(o).error().message, HasSubstr("--host"));
  o = DefaultLoadgenOptions();
  o.memory = "lots";
  EXPECT_THAT(RenderLoadgen(o).error().message, HasSubstr("--memory"));
  o = DefaultLoadgenOptions();
  o.cpu = "1 core";
  EXPECT_THAT(RenderLoadgen(o).error().message, HasSubstr("--cpu"));
}

// No kfpbench image is published: a set naming none, or the placeholder, would
// sit in ImagePullBackOff.
TEST(Loadgen, RefusesAnImageNoNodeCouldPull) {
  auto o = DefaultLoadgenOptions();
  o.image.clear();
  EXPECT_THAT(RenderLoadgen(o).error().message, HasSubstr("--image is required"));
  o.image = "ghcr.io/kfpbench/kfpbench:0.1.0";
  EXPECT_THAT(RenderLoadgen(o).error().message, HasSubstr("published nowhere"));
}

TEST(Loadgen, HostIsQuotedForTheShell) {
  auto o = DefaultLoadgenOptions();
  o.host = "http://x/'; rm -rf /";
  EXPECT_THAT(Script((*RenderLoadgen(o))[1]), HasSubstr(R"(--host 'http://x/'\''; rm -rf /')"));
}

TEST(Loadgen, ConfigMapKeysAreValidAndUnique) {
  EXPECT_EQ(ConfigMapKey("a/b c.yaml", {}), "a.b_c.yaml");
  EXPECT_EQ(ConfigMapKey("a/b.yaml", {"a.b.yaml"}), "a.b.yaml-2");
}

class ShipScenarioTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kfpbench-loadgen-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path Write(const fs::path& rel, const std::string& text) {
    fs::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel) << text;
    return dir_ / rel;
  }
  fs::path dir_;
};

TEST_F(ShipScenarioTest, FilesKeepThePathsTheScenarioNames) {
  auto scenario = Write("s/sc.json", "[]");
  Write("s/p/a.yaml", "a");
  Write("up.yaml", "up");
  Write("lib/b.yaml", "b");
  LoadgenOptions o;
  ASSERT_TRUE(ShipScenario(scenario,
                           {{"[0]", "p/a.yaml", dir_ / "s/p/a.yaml", -1},
                            {"[1]", "../up.yaml", dir_ / "up.yaml", -1},
                            {"[2]", "b.yaml", dir_ / "lib/b.yaml", 1},
                            {"[3]", "p/a.yaml", dir_ / "s/p/a.yaml", -1}},
                           o)
                  .ok());
  // One level of "..": the scenario sits one folder deep, so ../up.yaml resolves.
  EXPECT_EQ(o.scenario_path, "d1/sc.json");
  ASSERT_EQ(o.files.size(), 4u);
  EXPECT_EQ(o.files[1].path, "d1/p/a.yaml");
  EXPECT_EQ(o.files[2].path, "up.yaml");
  EXPECT_EQ(o.files[3].path, "pipelines-1/b.yaml");
  EXPECT_EQ(o.pipeline_dirs, std::vector<std::string>{"pipelines-1"});
}

// KFP starts the shipped pipelines' steps on the cluster: they must name an
// image its nodes can pull, the one the load pods run.
TEST_F(ShipScenarioTest, PipelineStepsRunTheGivenImage) {
  auto scenario = Write("sc.json", "[\"ghcr.io/kfpbench/kfpbench:latest\"]");
  Write("p.yaml", "a:\n  image: ghcr.io/kfpbench/kfpbench:latest\nb:\n  image: python:3.11\n");
  LoadgenOptions o;
  o.image = "reg.example/kfpbench:1";
  ASSERT_TRUE(
      ShipScenario(scenario,
                   {{"[0]", "p.yaml", dir_ / "p.yaml", -1}, {"[1]", "p.yaml", dir_ / "p.yaml", -1}},
                   o)
          .ok());
  ASSERT_EQ(o.files.size(), 2u);
  EXPECT_EQ(o.files[1].text, "a:\n  image: reg.example/kfpbench:1\nb:\n  image: python:3.11\n");
  EXPECT_EQ(o.step_images_pointed, 1) << "one file, shipped once";
  EXPECT_EQ(o.files[0].text, "[\"ghcr.io/kfpbench/kfpbench:latest\"]") << "the scenario as written";
}

TEST_F(ShipScenarioTest, RefusesWhatNoPodCouldBeGiven) {
  auto scenario = Write("sc.json", "[]");
  LoadgenOptions o;
  auto absolute =
      ShipScenario(scenario, {{"[0].pipelineFileName", "/abs/p.yaml", "/abs/p.yaml"}}, o);
  ASSERT_FALSE(absolute.ok());
  EXPECT_THAT(absolute.error().message,
              HasSubstr("[0].pipelineFileName: '/abs/p.yaml' is a path on this"))
      << absolute.error().message;
  Write("big.yaml", std::string(kConfigMapMaxBytes, 'x'));
  auto big = ShipScenario(scenario, {{"[0]", "big.yaml", dir_ / "big.yaml"}}, o);
  ASSERT_FALSE(big.ok());
  EXPECT_THAT(big.error().message, HasSubstr("over the 1 MiB (1048576 bytes) a ConfigMap holds"))
      << big.error().message;
  EXPECT_THAT(big.error().message, HasSubstr("big.yaml (1048576 bytes)"));
  Write("bin.yaml", std::string("\xff\xfe", 2));
  auto binary = ShipScenario(scenario, {{"[0]", "bin.yaml", dir_ / "bin.yaml"}}, o);
  ASSERT_FALSE(binary.ok());
  EXPECT_THAT(binary.error().message, HasSubstr("not UTF-8"));
}

TEST(Loadgen, ValidatesAgainstStrictSchemas) {
  fs::path dir = KFPBENCH_SOURCE_DIR "/../shared/kube/jsonschema/v1.33-standalone-strict";
  if (!fs::exists(dir)) GTEST_SKIP() << dir << " absent";
  auto o = DefaultLoadgenOptions();
  o.token_secret = "kfp-token";
  auto docs = RenderLoadgen(o);
  ASSERT_TRUE(docs.ok());
  const char* schemas[] = {"configmap-v1.json", "job-batch-v1.json"};
  for (size_t i = 0; i < 2; ++i) {
    std::ifstream in(dir / schemas[i]);
    auto schema = json::parse(in);
    auto back = ir::YamlToJson(ToYaml((*docs)[i]));
    ASSERT_TRUE(back.ok() && back->size() == 1);
    EXPECT_EQ(back->front(), (*docs)[i]) << "the YAML must carry the script and files exactly";
    auto errors = ValidateJson(schema, back->front());
    EXPECT_TRUE(errors.empty()) << schemas[i] << ": " << json(errors).dump(1);
  }
}

}  // namespace
}  // namespace kfpbench::kube
