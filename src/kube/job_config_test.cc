#include "kube/job_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "ir/test_support.h"

namespace kfpbench::kube {
namespace {

using ::testing::HasSubstr;

const char* kConfig = R"(
name: ddp
kind: PyTorchJob
image: example:1
command: [python3, "{{config_dir}}/train.py", "--batch-size={{ batch_size }}", "--model={{model}}"]
env:
  STEPS: "{{steps}}"
replicas: {Master: 1, Worker: 2}
resources: {requests: {cpu: "1"}, limits: {memory: 1Gi}}
parameters: {batch_size: 8, steps: 10, model: mlp}
sweep:
  grid:
    batch_size: [16, 32]
    model: [mlp, cnn]
metrics:
  samples_per_sec: {regex: 'samples/sec: (?<value>[0-9.]+)'}
  step_time: {jsonl: step_time, per_replica: mean, across: mean, roles: [Master]}
)";

// One row per kind, each row its own kind, names read back.
TEST(JobConfig, EveryKindHasOneRow) {
  for (JobKind kind : {JobKind::kJob, JobKind::kTFJob, JobKind::kPyTorchJob, JobKind::kMPIJob}) {
    const JobKindInfo& info = KindInfo(kind);
    EXPECT_EQ(info.kind, kind) << info.name;
    EXPECT_EQ(FindKind(info.name), &info);
    EXPECT_FALSE(info.roles.empty());
    EXPECT_FALSE(info.container.empty());
  }
  EXPECT_EQ(KindInfo(JobKind::kPyTorchJob).resource, "pytorchjobs.kubeflow.org");
  EXPECT_EQ(KindInfo(JobKind::kJob).api_version, "batch/v1");
  EXPECT_EQ(FindKind("PytorchJob"), nullptr);
}

TEST(JobConfig, ParsesEveryField) {
  auto c = ParseJobConfig(kConfig, "/cfg");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->name, "ddp");
  EXPECT_EQ(c->kind, JobKind::kPyTorchJob);
  EXPECT_EQ(c->namespace_, "default");
  ASSERT_EQ(c->replicas.size(), 2u);
  EXPECT_EQ(c->replicas[0].role, "Master");
  EXPECT_EQ(c->replicas[1].count, 2);
  EXPECT_EQ(c->resources_json, R"({"limits":{"memory":"1Gi"},"requests":{"cpu":"1"}})");
  ASSERT_EQ(c->metrics.size(), 2u);
  EXPECT_EQ(c->metrics[1].roles, std::vector<std::string>{"Master"});
}

TEST(JobConfig, GridIsCartesianProductFirstKeySlowest) {
  auto c = ParseJobConfig(kConfig, "/cfg");
  ASSERT_TRUE(c.ok()) << c.error().message;
  auto points = ExpandSweep(*c);
  ASSERT_EQ(points.size(), 4u);
  EXPECT_EQ(points[0].params.at("batch_size"), "16");
  EXPECT_EQ(points[0].params.at("model"), "mlp");
  EXPECT_EQ(points[1].params.at("model"), "cnn");
  EXPECT_EQ(points[2].params.at("batch_size"), "32");
  EXPECT_EQ(points[3].job_name, "ddp-3");
  EXPECT_EQ(points[3].params.at("steps"), "10");  // defaults stay
  EXPECT_EQ(*Substitute(c->command[1], points[0].params), "/cfg/train.py");
  EXPECT_EQ(*Substitute(c->command[2], points[2].params), "--batch-size=32");
}

TEST(JobConfig, ListSweepAndNoSweep) {
  std::string base =
      "name: a\nkind: Job\nimage: i\ncommand: [echo, '{{x}}']\nreplicas: {Worker: 1}\n";
  auto one = ParseJobConfig(base + "parameters: {x: 1}\n");
  ASSERT_TRUE(one.ok()) << one.error().message;
  EXPECT_EQ(ExpandSweep(*one).size(), 1u);
  auto list = ParseJobConfig(base + "sweep: {list: [{x: 1}, {x: 5}, {x: 9}]}\n");
  ASSERT_TRUE(list.ok()) << list.error().message;
  auto points = ExpandSweep(*list);
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[2].params.at("x"), "9");
}

TEST(JobConfig, SubstituteRejectsUnknownAndUnclosed) {
  EXPECT_EQ(Substitute("{{nope}}", {}).error().message, "unknown parameter '{{nope}}'");
  EXPECT_FALSE(Substitute("{{a", {{"a", "1"}}).ok());
  EXPECT_EQ(*Substitute("x{{a}}y{{a}}", {{"a", "1"}}), "x1y1");
}

void ExpectError(const std::string& yaml, const std::string& needle) {
  auto c = ParseJobConfig(yaml);
  ASSERT_FALSE(c.ok()) << yaml;
  EXPECT_THAT(c.error().message, HasSubstr(needle)) << c.error().message;
}

TEST(JobConfig, BadInputNamesTheKey) {
  std::string ok = "name: a\nkind: Job\nimage: i\ncommand: [echo]\nreplicas: {Worker: 1}\n";
  ASSERT_TRUE(ParseJobConfig(ok).ok());
  ExpectError(ok + "colour: red\n", "colour: unknown field (known: name, kind");
  ExpectError("name: a\nkind: Pod\nimage: i\ncommand: [echo]\nreplicas: {Worker: 1}\n",
              "kind: must be");
  ExpectError("name: A_b\nkind: Job\nimage: i\ncommand: [echo]\nreplicas: {Worker: 1}\n", "name:");
  ExpectError("name: a\nkind: Job\ncommand: [echo]\nreplicas: {Worker: 1}\n", "image: is required");
  ExpectError("name: a\nkind: Job\nimage: i\ncommand: [echo]\nreplicas: {Master: 1}\n",
              "replicas.Master: unknown field (known: Worker)");
  ExpectError("name: a\nkind: Job\nimage: i\ncommand: [echo]\nreplicas: {Worker: two}\n",
              "replicas.Worker: must be an integer");
  ExpectError("name: a\nkind: PyTorchJob\nimage: i\ncommand: [echo]\nreplicas: {Worker: 2}\n",
              "replicas.Master");
  ExpectError("name: a\nkind: MPIJob\nimage: i\ncommand: [echo]\nreplicas: {Worker: 2}\n",
              "replicas.Launcher");
  ExpectError(ok + "env: {A: '{{typo}}'}\n", "env.A: unknown parameter '{{typo}}'");
  ExpectError(ok + "annotations: [a]\n", "annotations: must be a mapping");
  ExpectError(ok + "annotations: {a: '{{typo}}'}\n", "annotations.a: unknown parameter");
  ExpectError(ok + "annotations: {'a b': x}\n", "annotations.a b: is not an annotation key");
  ExpectError(ok + "sweep: {grid: {x: []}}\n", "sweep.grid.x: must be a non-empty list");
  ExpectError(ok + "sweep: {grid: {x: [1]}, lists: []}\n",
              "sweep.lists: unknown field (known: list, grid)");
  ExpectError(ok + "metrics: {m: {regex: a, jsonl: b}}\n", "metrics.m: needs exactly one");
  ExpectError(ok + "metrics: {m: {jsonl: b, across: last}}\n", "metrics.m.across");
  ExpectError(ok + "metrics: {m: {jsonl: b, roles: [PS]}}\n", "'PS' is not a role of Job");
  ExpectError(ok + "resources: {requests: {cpu: [1]}}\n", "resources.requests.cpu");
  ExpectError(ok + "resources: {limits: {memory: 1Gx}}\n",
              "resources.limits.memory: invalid memory quantity '1Gx'");
  // Found by fuzzing: a value that is not UTF-8 once aborted the reader.
  ExpectError(ok + "resources: {limits: {cpu: \"1\xff\"}}\n", "resources.limits.cpu");
  ExpectError(ok + "resources: {limits: {\"c\xffpu\": \"1\"}}\n", "is not a resource name");
  ExpectError(ok + "timeoutSeconds: 0\n", "timeoutSeconds: must be at least 1");
  ExpectError("[1, 2", "invalid YAML at line");
  // Once read through yaml-cpp's node tree, which expanded every alias: this
  // 300-byte file grew past 4 GB.
  ExpectError(ok + ir::testing::YamlAliasBomb(), "alias bomb");
}

// Read as JSON, whose objects sort their keys: where the order written
// matters it is kept (an env value may name an earlier variable; a grid's
// first key varies slowest; metrics are reported in order).
TEST(JobConfig, KeepsTheOrderWrittenWhereItMatters) {
  auto c = ParseJobConfig(
      "name: a\nkind: Job\nimage: i\ncommand: [echo, '{{z}}{{a}}']\nreplicas: {Worker: 1}\n"
      "env: {ZED: '1', ALPHA: '$(ZED)'}\nmetrics: {zz: {jsonl: a}, aa: {jsonl: b}}\n"
      "sweep: {grid: {z: [1, 2], a: [x, y]}}\n");
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_EQ(c->env.size(), 2u);
  EXPECT_EQ(c->env[0].first, "ZED");
  EXPECT_EQ(c->env[1].first, "ALPHA");
  ASSERT_EQ(c->metrics.size(), 2u);
  EXPECT_EQ(c->metrics[0].name, "zz");
  auto points = ExpandSweep(*c);
  ASSERT_EQ(points.size(), 4u);
  EXPECT_EQ(points[1].params.at("z"), "1");
  EXPECT_EQ(points[1].params.at("a"), "y");
}

TEST(JobConfig, AMisspeltKeyIsNamedBeforeWhatItLeavesMissing) {
  ExpectError("name: a\nkind: Job\nimgae: i\ncommand: [echo]\nreplicas: {Worker: 1}\n",
              "imgae: unknown field (known: name, kind, namespace, image,");
}

TEST(JobConfig, AnEmptyValueIsRefusedNotDropped) {
  std::string ok = "name: a\nkind: Job\nimage: i\ncommand: [echo]\nreplicas: {Worker: 1}\n";
  ExpectError(ok + "metrics: {m: }\n", "metrics.m: must be a mapping");
  ExpectError(ok + "sweep: {grid: {x: }}\n", "sweep.grid.x: must be a non-empty list");
  ExpectError(ok + "env: {A: }\n", "env.A: must be a scalar");
  ExpectError(ok + "sweep: {list: [{x: 1}, 3]}\n", "sweep.list");
}

TEST(JobConfig, EachProblemOfAFileNamesTheFile) {
  auto path = std::filesystem::temp_directory_path() / "kfpbench-job-config-test-two-typos.yaml";
  std::ofstream(path) << "name: a\nkind: Job\nimage: i\ncommand: [echo]\nreplicas: {Worker: 1}\n"
                         "colour: red\nshade: dark\n";
  auto c = LoadJobConfig(path);
  std::filesystem::remove(path);
  ASSERT_FALSE(c.ok());
  std::istringstream lines(c.error().message);
  int n = 0;
  for (std::string line; std::getline(lines, line); ++n) {
    EXPECT_EQ(line.rfind(path.string() + ": ", 0), 0u) << line;
  }
  EXPECT_EQ(n, 2);
}

TEST(JobConfig, SetParameterOverridesDefaultsAndConfigDir) {
  auto c = ParseJobConfig(kConfig, "/cfg");
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(SetParameter(*c, "steps=3").ok());
  ASSERT_TRUE(SetParameter(*c, "config_dir=/opt/x").ok());
  auto points = ExpandSweep(*c);
  EXPECT_EQ(points[0].params.at("steps"), "3");
  EXPECT_EQ(points[0].params.at("config_dir"), "/opt/x");
  EXPECT_EQ(SetParameter(*c, "batch_size=1").error().message,
            "--set: 'batch_size' is swept; edit the sweep instead");
  EXPECT_FALSE(SetParameter(*c, "novalue").ok());
  EXPECT_FALSE(SetParameter(*c, "job_name=x").ok());
}

TEST(JobConfig, SweepTemplatesCheckedForEveryPoint) {
  std::string yaml =
      "name: a\nkind: Job\nimage: i\ncommand: [echo, '{{x}}']\nreplicas: {Worker: 1}\n"
      "sweep: {list: [{x: 1}, {y: 2}]}\n";
  ExpectError(yaml, "command[1]: unknown parameter '{{x}}'");
}

}  // namespace
}  // namespace kfpbench::kube
