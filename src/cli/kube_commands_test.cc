// End to end through the real binary: `run --kube-context` with a fake
// kubectl on PATH, `job` writing its HTML report, and every example rendered
// for a cluster with everything its pods read shipped in the set.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <regex>
#include <set>

#include "harness/e2e_support.h"
#include "ir/yaml_json.h"
#include "kube/images.h"
#include "kube/json_schema.h"
#include "kube/manifest.h"
#include "kube/testdata/fixtures.h"
#include "util/ids.h"

namespace kfpbench::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace kfpbench::testing;  // Kfpbench(), ScratchDirTest, ReadJson, ...

class KubeCliTest : public ScratchDirTest {
 protected:
  void SetUp() override {
    ScratchDirTest::SetUp();
    fs::create_directories(dir_ / "bin");
  }
};

TEST_F(KubeCliTest, RunReadsPodsThroughKubectlAndGonePodsAreNotFatal) {
  // The embedded backend's pods exist on no cluster: every pod is reported
  // missing, and the benchmark still succeeds.
  fs::create_symlink(kube::testdata::FakeKubectl(), dir_ / "bin" / "kubectl");
  kube::testdata::FakeKubectlEnv env;
  std::string old_path = std::getenv("PATH");
  ::setenv("PATH", ((dir_ / "bin").string() + ":" + old_path).c_str(), 1);
  std::string scenario = Write("s.json", R"({"scenarios": [{"mode": "PIPELINE_RUN",
      "runTime": "1s", "numTimes": 2, "pipelineFileName": "sleep_chain.yaml",
      "params": {"duration": "10ms"}}]})");
  fs::path out = dir_ / "out";
  auto r = Kfpbench("run " + scenario + " --pipelines " + KFPBENCH_SOURCE_DIR +
                    "/examples/pipelines --executor stub --stub-duration constant:50ms --quiet "
                    "--poll-interval 50ms --kube-context test-ctx --out " +
                    out.string());
  ::setenv("PATH", old_path.c_str(), 1);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(ReadText(out / "results.json"));
  const auto& pods = j["pod_lifecycle"];
  ASSERT_TRUE(pods.is_object()) << j.dump().substr(0, 2000);
  EXPECT_EQ(pods["context"], "test-ctx");
  EXPECT_EQ(pods["namespace"], "kubeflow");
  int requested = pods["pods_requested"];
  EXPECT_GE(requested, 2);  // at least one step pod per run
  EXPECT_EQ(pods["pods_missing"], requested);
  EXPECT_EQ(pods["pods_read"], 0);
  EXPECT_EQ(pods["missing_pods"].size(), static_cast<size_t>(requested));
  auto calls = env.Calls();
  // By name, then by workflow (in case they are Argo node IDs); no pod
  // found, so no events call.
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].rfind("--context=test-ctx get pods ", 0), 0u) << calls[0];
  EXPECT_THAT(calls[0], HasSubstr(" -n kubeflow --ignore-not-found -o json"));
  EXPECT_THAT(calls[1], HasSubstr(" -l workflows.argoproj.io/workflow in (")) << calls[1];
  EXPECT_THAT(r.output, HasSubstr("pod lifecycle: ")) << r.output;
}

TEST_F(KubeCliTest, JobWritesCsvJsonAndHtmlReport) {
  std::string config = Write("echo.yaml", R"(
name: echo
kind: Job
image: busybox:1.36
command: [/bin/sh, -c, "echo '{\"v\": {{n}}}'"]
replicas: {Worker: 1}
timeoutSeconds: 60
sweep:
  grid:
    n: [1, 4]
metrics:
  v: {jsonl: v}
)");
  fs::path out = dir_ / "job";
  auto r = Kfpbench("job " + config + " --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("report.html")) << r.output;
  // Its own name: results.json is the benchmark's file, of another shape.
  EXPECT_FALSE(fs::exists(out / "results.json"));
  EXPECT_TRUE(fs::exists(out / "results.csv"));
  std::ifstream in(out / "job_results.json");
  auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["jobs"]["swept"], nlohmann::json::array({"n"}));
  EXPECT_EQ(j["jobs"]["runs"][1]["metrics"]["v"], 4.0);
  std::ifstream html_in(out / "report.html");
  std::string html((std::istreambuf_iterator<char>(html_in)), std::istreambuf_iterator<char>());
  EXPECT_THAT(html, HasSubstr("id=\"kfpbench-jobs\""));
  EXPECT_THAT(html, HasSubstr("\"swept\":[\"n\"]"));
}

// The documents of a stream `kubectl apply -f -` reads.
std::vector<nlohmann::json> Documents(const std::string& yaml) {
  auto docs = ir::YamlToJson(yaml);
  EXPECT_TRUE(docs.ok()) << docs.error().message;
  if (!docs.ok()) return {};
  std::erase_if(*docs, [](const nlohmann::json& doc) { return doc.is_null(); });
  return *docs;
}

// Every pod template of a Job or a training operator's job.
std::vector<nlohmann::json> PodSpecs(const nlohmann::json& doc) {
  std::vector<nlohmann::json> out;
  if (doc.is_object()) {
    if (doc.contains("containers") && doc.contains("restartPolicy")) return {doc};
    for (const auto& [k, v] : doc.items()) {
      for (auto& p : PodSpecs(v)) out.push_back(std::move(p));
    }
  }
  return out;
}

// What a rendered set gives its pods, laid out below `root` as each
// container sees it: ConfigMap items at their paths, Secret items as a
// stand-in file, emptyDirs empty. Everything else is a problem: a volume the
// set relies on but does not hold.
struct PodView {
  std::map<std::string, std::string> mounts;  // mountPath -> volume kind
  std::set<std::string> secrets;              // Secret names the pods need
  std::vector<std::string> problems;
};

PodView Materialize(const nlohmann::json& pod, const std::vector<nlohmann::json>& docs,
                    const fs::path& root) {
  PodView view;
  std::map<std::string, nlohmann::json> config_maps;
  for (const auto& d : docs) {
    if (d.value("kind", "") == "ConfigMap") config_maps[d["metadata"]["name"]] = d;
  }
  std::map<std::string, nlohmann::json> volumes;
  for (const auto& v : pod.value("volumes", nlohmann::json::array())) volumes[v["name"]] = v;
  for (const auto& c : pod["containers"]) {
    for (const auto& m : c.value("volumeMounts", nlohmann::json::array())) {
      std::string at = m["mountPath"];
      fs::path dir = root / fs::path(at).relative_path();
      fs::create_directories(dir);
      const auto& v = volumes[m["name"]];
      if (v.contains("configMap")) {
        view.mounts[at] = "configMap";
        std::string name = v["configMap"]["name"];
        if (!config_maps.count(name)) {
          view.problems.push_back("ConfigMap " + name + " is not in the set");
          continue;
        }
        const auto& data = config_maps[name]["data"];
        for (const auto& item : v["configMap"].value("items", nlohmann::json::array())) {
          std::string key = item["key"];
          if (!data.contains(key)) {
            view.problems.push_back("ConfigMap " + name + " has no key " + key);
            continue;
          }
          fs::create_directories((dir / std::string(item["path"])).parent_path());
          std::ofstream(dir / std::string(item["path"])) << std::string(data[key]);
        }
      } else if (v.contains("secret")) {
        view.mounts[at] = "secret";
        view.secrets.insert(v["secret"]["secretName"].get<std::string>());
        for (const auto& item : v["secret"]["items"]) {
          std::ofstream(dir / std::string(item["path"])) << "stand-in for the Secret's value\n";
        }
      } else if (v.contains("emptyDir")) {
        view.mounts[at] = "emptyDir";
      } else {
        view.problems.push_back("volume " + v.dump() + " is neither shipped nor empty");
      }
    }
  }
  return view;
}

// Absolute paths a command line or script names.
std::vector<std::string> NamedPaths(const std::string& text) {
  static const std::regex kPath(R"((^|[\s'"=:])(/[^\s'":;]+))");
  std::vector<std::string> out;
  for (std::sregex_iterator it(text.begin(), text.end(), kPath), end; it != end; ++it) {
    out.push_back((*it)[2]);
  }
  return out;
}

// Each path a pod reads below a shipped mount exists in what is shipped, and
// none is a path of this machine (the source tree, a temporary folder).
void ExpectShipped(const std::string& what, const std::string& text, const PodView& view,
                   const fs::path& root) {
  for (const auto& path : NamedPaths(text)) {
    for (const char* host :
         {KFPBENCH_SOURCE_DIR, "/tmp/", "/home/", "/root/", KFPBENCH_BINARY_DIR}) {
      EXPECT_NE(path.rfind(host, 0), 0u) << what << " names a path of this machine: " << path;
    }
    for (const auto& [mount, kind] : view.mounts) {
      if (path.rfind(mount + "/", 0) != 0 || kind == "emptyDir") continue;
      // A file, or a folder (--pipelines) that holds shipped files.
      const fs::path shipped = root / fs::path(path).relative_path();
      EXPECT_TRUE(fs::is_regular_file(shipped) ||
                  (fs::is_directory(shipped) && !fs::is_empty(shipped)))
          << what << " reads " << path << ", which the set does not ship at " << mount;
    }
  }
}

void ExpectSchemaValid(const std::vector<nlohmann::json>& docs, const std::string& what) {
  const fs::path schemas = fs::path(KFPBENCH_SOURCE_DIR) / "../shared/kube/jsonschema";
  if (!fs::exists(schemas)) return;  // the "is shipped" checks still run
  const std::map<std::string, std::string> by_kind = {
      {"ConfigMap", "v1.33-standalone-strict/configmap-v1.json"},
      {"Job", "v1.33-standalone-strict/job-batch-v1.json"},
      {"TFJob", "training-operator-v1.9.0/tfjob_v1.json"},
      {"PyTorchJob", "training-operator-v1.9.0/pytorchjob_v1.json"},
      {"MPIJob", "training-operator-v1.9.0/mpijob_v1.json"}};
  for (const auto& doc : docs) {
    std::string kind = doc.value("kind", "");
    ASSERT_TRUE(by_kind.count(kind)) << what << ": no schema for " << kind;
    auto schema = nlohmann::json::parse(ReadText(schemas / by_kind.at(kind)));
    auto errors = kube::ValidateJson(schema, doc);
    EXPECT_TRUE(errors.empty()) << what << " " << kind << ": " << nlohmann::json(errors).dump(1);
  }
}

// What the tests build and push, as docs/KUBERNETES.md does.
constexpr const char* kBuiltImage = "registry.example.com/kfpbench/kfpbench:0.1.0";

// Every `image` a pod spec or a pipeline's executors name.
std::set<std::string> ImagesIn(const nlohmann::json& doc) {
  std::set<std::string> out;
  if (doc.is_object()) {
    for (const auto& [k, v] : doc.items()) {
      if (k == "image" && v.is_string()) out.insert(v.get<std::string>());
      out.merge(ImagesIn(v));
    }
  } else if (doc.is_array()) {
    for (const auto& v : doc) out.merge(ImagesIn(v));
  }
  return out;
}

// Stands in for the image's kfpbench: `run` checks, with the real binary's
// `validate`, that the scenario and every file it names load from what the
// pod was given (the token too), and makes the results folder.
constexpr const char* kPodKfpbench = R"(#!/bin/sh
[ "$1" = run ] || exit 97
shift; scenario=$1; shift; dirs=""
while [ $# -gt 0 ]; do
  case "$1" in
    --pipelines) dirs="$dirs --pipelines $2"; shift 2;;
    --token-file) test -s "$2" || { echo "no token at $2" >&2; exit 96; }; shift 2;;
    --out) mkdir -p "$2"; shift 2;;
    --quiet) shift;;
    *) shift 2;;
  esac
done
exec "$KFPBENCH_REAL" validate "$scenario" $dirs
)";

// Renders `scenario` for a cluster and checks the set as a node would run
// it: schema-valid, every file the shard script reads shipped, the token
// from its Secret and never printed, every image one a node can pull (for
// the examples, whose steps are all kfpbench's, the one built and pushed),
// and the script itself running shard 0 from the shipped files alone.
void ExpectLoadgenSetRuns(const fs::path& scenario, const std::string& flags, const fs::path& token,
                          const fs::path& root, bool kfpbench_steps) {
  SCOPED_TRACE(scenario.string());
  // Growth levels count one target's runs: such a scenario runs as one shard.
  bool growth = ReadText(scenario).find("\"growth\"") != std::string::npos;
  // Manifests on stdout, notes on stderr, as `| kubectl apply -f -` reads them.
  std::string both = flags + " --shards " + std::string(growth ? "1" : "3") +
                     " --host http://ml-pipeline.kubeflow:8888 --token-file " + token.string() +
                     " --image " + kBuiltImage + " --start-at +4s";
  auto r = Kfpbench("kube loadgen " + scenario.string() + both);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, Not(HasSubstr("example-token-value"))) << "the token leaked";
  r.output = CommandOutput(KfpbenchBinary() + " kube loadgen " + scenario.string() + both +
                           " 2>/dev/null");
  auto docs = Documents(r.output);
  ASSERT_EQ(docs.size(), 2u) << r.output;
  ExpectSchemaValid(docs, scenario.filename().string());
  auto pods = PodSpecs(docs[1]);
  ASSERT_EQ(pods.size(), 1u);
  auto view = Materialize(pods[0], docs, root);
  EXPECT_TRUE(view.problems.empty()) << nlohmann::json(view.problems).dump(1);
  EXPECT_EQ(view.secrets, std::set<std::string>{"kfpbench-loadgen-token"});
  // Every image a node pulls, for the load pods and for the steps KFP
  // starts from the shipped pipelines.
  EXPECT_EQ(ImagesIn(pods[0]), std::set<std::string>{kBuiltImage});
  int pipelines = 0;
  for (const auto& [key, text] : docs[0]["data"].items()) {
    if (!key.ends_with(".yaml") && !key.ends_with(".json")) continue;
    auto docs = ir::YamlToJson(text.get<std::string>());
    ASSERT_TRUE(docs.ok() && docs->size() == 1) << key;
    const nlohmann::json* pipeline = &docs->front();
    if (!pipeline->contains("deploymentSpec")) continue;  // the scenario
    ++pipelines;
    for (const auto& image : ImagesIn(*pipeline)) {
      EXPECT_FALSE(kube::IsUnpublishedImage(image)) << key << " runs a step no node could pull";
      if (kfpbench_steps) {
        EXPECT_EQ(image, kBuiltImage) << key;
      }
    }
  }
  EXPECT_GE(pipelines, 1);
  std::string script = pods[0]["containers"][0]["command"][2];
  ExpectShipped("the shard script", script, view, root);

  // The script itself, as pod 0 runs it, with the mounts below `root`.
  for (const auto& [mount, kind] : view.mounts) {
    for (size_t at = script.find(mount); at != std::string::npos;
         at = script.find(mount, at + root.string().size() + mount.size())) {
      script.replace(at, mount.size(), (root / fs::path(mount).relative_path()).string());
    }
  }
  fs::create_directories(root / "bin");
  std::ofstream(root / "bin" / "kfpbench") << kPodKfpbench;
  fs::permissions(root / "bin" / "kfpbench", fs::perms::owner_all);
  std::ofstream(root / "results" / "collected");  // collected at once: no wait
  std::ofstream(root / "pod.sh") << script;
  auto ran = CommandOutput("cd " + root.string() + " && PATH=" + (root / "bin").string() +
                           ":$PATH KFPBENCH_REAL=" + KfpbenchBinary() +
                           " JOB_COMPLETION_INDEX=0 /bin/sh pod.sh 2>&1; echo exit=$?");
  EXPECT_THAT(ran, HasSubstr("exit=0")) << ran;
  EXPECT_EQ(ReadText(root / "results" / "exit-code-0"), "0\n") << ran;
  EXPECT_TRUE(fs::exists(root / "results" / "ready"));
  EXPECT_TRUE(fs::is_directory(root / "results" / "shard-0"));
}

TEST_F(KubeCliTest, EveryExampleShipsWhatItsPodsRead) {
  fs::path token = Write("token", "example-token-value\n");
  int scenarios = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(KFPBENCH_SOURCE_DIR) / "examples")) {
    if (entry.path().extension() != ".json") continue;
    ++scenarios;
    ExpectLoadgenSetRuns(entry.path(), "", token, dir_ / ("pod-" + entry.path().stem().string()),
                         true);
  }
  EXPECT_GE(scenarios, 2);

  int configs = 0;
  for (const auto& entry :
       fs::directory_iterator(fs::path(KFPBENCH_SOURCE_DIR) / "examples" / "jobs")) {
    if (entry.path().extension() != ".yaml") continue;
    SCOPED_TRACE(entry.path().string());
    ++configs;
    auto r = Kfpbench("job render " + entry.path().string());
    ASSERT_EQ(r.exit_code, 0) << r.output;
    auto docs = Documents(
        CommandOutput(KfpbenchBinary() + " job render " + entry.path().string() + " 2>/dev/null"));
    // The placeholder is said on stderr; --image replaces it in every pod.
    for (const auto& doc : docs) {
      if (ImagesIn(doc).count("ghcr.io/kfpbench/kfpbench:latest")) {
        EXPECT_THAT(r.output, HasSubstr("is published nowhere")) << r.output;
      }
    }
    for (const auto& doc :
         Documents(CommandOutput(KfpbenchBinary() + " job render " + entry.path().string() +
                                 " --image " + kBuiltImage + " 2>/dev/null"))) {
      if (doc.value("kind", "") == "ConfigMap") continue;
      EXPECT_EQ(ImagesIn(doc), std::set<std::string>{kBuiltImage});
      // `kubectl apply` of the stream starts no sweep point: each is resumed in turn.
      const auto& spec = doc["spec"];
      EXPECT_EQ(spec.contains("runPolicy") ? spec["runPolicy"]["suspend"] : spec["suspend"], true)
          << doc["metadata"]["name"];
    }
    EXPECT_THAT(r.output, HasSubstr("each suspended; after kubectl apply, resume one at a time"))
        << r.output;
    ExpectSchemaValid(docs, entry.path().filename().string());
    fs::path root = dir_ / ("job-" + entry.path().stem().string());
    for (const auto& doc : docs) {
      for (const auto& pod : PodSpecs(doc)) {
        auto view = Materialize(pod, docs, root);
        EXPECT_TRUE(view.problems.empty()) << nlohmann::json(view.problems).dump(1);
        for (const auto& c : pod["containers"]) {
          std::string line;
          for (const auto& a : c.value("command", nlohmann::json::array())) {
            line.append(" ").append(a.get<std::string>());
          }
          for (const auto& e : c.value("env", nlohmann::json::array())) {
            line.append(" ").append(e.value("value", ""));
          }
          ExpectShipped(doc["metadata"]["name"].get<std::string>() + " command", line, view, root);
        }
      }
    }
  }
  EXPECT_GE(configs, 2);
}

// KFP's perf-tests smoke scenario with its compiled SDK pipelines (Python
// components on python:3.9), found through --pipelines: shipped below
// pipelines-0/, their images kept.
TEST_F(KubeCliTest, PerfTestsScenarioShipsWhatItsPodsRead) {
  const fs::path shared = fs::path(KFPBENCH_SOURCE_DIR) / "../shared/kfp";
  if (!fs::exists(shared / "scenarios" / "perf-tests-smoke.json")) {
    GTEST_SKIP() << "../shared is not available";
  }
  ExpectLoadgenSetRuns(shared / "scenarios" / "perf-tests-smoke.json",
                       " --pipelines " + (shared / "pipelines").string(),
                       Write("token", "example-token-value\n"), dir_ / "pod-perf-tests", false);
}

// A shard that arrives after the common start does not load out of step.
TEST_F(KubeCliTest, ALateShardRefusesToStart) {
  auto docs =
      Documents(CommandOutput(KfpbenchBinary() + " kube loadgen " + KFPBENCH_SOURCE_DIR +
                              "/examples/smoke.json --shards 2 --host http://kfp:8888 "
                              "--image reg.example/kfpbench:1 --start-at +1ms 2>/dev/null"));
  ASSERT_EQ(docs.size(), 2u);
  std::string script = PodSpecs(docs[1])[0]["containers"][0]["command"][2];
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  std::ofstream(dir_ / "pod.sh") << script;
  auto ran = CommandOutput("cd " + dir_.string() +
                           " && PATH=/nonexistent:$PATH JOB_COMPLETION_INDEX=1 /bin/sh pod.sh "
                           "2>&1; echo exit=$?");
  EXPECT_THAT(ran, HasSubstr("exit=3")) << ran;
  EXPECT_THAT(ran, HasSubstr("shard 1: started")) << ran;
  EXPECT_THAT(ran, HasSubstr("render again with a later --start-at")) << ran;
}

}  // namespace
}  // namespace kfpbench::cli
