// What KFP's driver does itself rather than in a pod: importers,
// kfp-kubernetes' CreatePVC/DeletePVC, the run placeholders it substitutes
// in constant inputs, resource fields from inputs, and pipeline input
// artifacts (which a run cannot give). Each pipeline here is hand-written
// after the shape KFP's compiler emits (test_data/sdk_compiled_pipelines).
#include <unistd.h>

#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/dag_test_fixture.h"
#include "util/test_support.h"

namespace kfpbench::engine {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;
using nlohmann::json;
using namespace testing;  // the part's test helpers

// The DAG fixture, its work folders in a temporary folder of its own.
class DriverTaskTest : public DagTest {
 protected:
  DriverTaskTest() : DagTest(WithWorkRoot()) {}
  ~DriverTaskTest() override { std::filesystem::remove_all(work_root_); }

  static std::filesystem::path WorkRoot() {
    return std::filesystem::temp_directory_path() /
           ("kfpbench-driver-test-" + std::to_string(::getpid()));
  }
  static EngineOptions WithWorkRoot() {
    EngineOptions options = Options();
    options.work_root = WorkRoot();
    std::filesystem::remove_all(options.work_root);
    return options;
  }

  const std::filesystem::path work_root_ = WorkRoot();
};

// An importer (constant or runtime-parameter URI) feeding a container that
// prints the artifact's URI and path.
const std::string kImporterPipeline =
    kfpbench::testing::TestData("engine/testdata/importer_pipeline.yaml");

TEST_F(DriverTaskTest, AnImporterHandsItsUriToTheNextTaskWithoutAPod) {
  const RunSnapshot& snap = RunToEnd(kImporterPipeline);
  ASSERT_EQ(snap.state, RuntimeState::kSucceeded) << snap.error;
  // Only the container ran; the importer took no pod and no node.
  ASSERT_EQ(executor_.launched.size(), 1u);
  const TaskLaunch* show = executor_.FirstLaunchOf("exec-show");
  ASSERT_NE(show, nullptr);
  // KFP's in-pod path (/gcs/bucket/data.csv), below the work root's stand-in
  // for the object stores.
  const std::string path =
      (std::filesystem::weakly_canonical(work_root_) / "objects/gcs/bucket/data.csv").string();
  EXPECT_EQ(show->argv, (std::vector<std::string>{"echo", "gs://bucket/data.csv", path}));
  const TaskRecord* importer = FindTask(snap, "importer");
  ASSERT_NE(importer, nullptr);
  EXPECT_EQ(importer->state, RuntimeState::kSucceeded);
  EXPECT_TRUE(importer->pod_name.empty());
  const json& artifact = importer->outputs["artifacts"]["artifact"][0];
  EXPECT_EQ(artifact["uri"], "gs://bucket/data.csv");
  EXPECT_EQ(artifact["schema_title"], "system.Dataset");  // typeSchema wins
  // KFP's importer launcher keeps metadata as written: no placeholder resolved.
  EXPECT_EQ(artifact["metadata"]["owner"], "{{$.inputs.parameters['uri']}}");
  EXPECT_EQ(artifact["metadata"]["rows"], 3);
}

TEST_F(DriverTaskTest, AnImporterWithAnEmptyUriFailsAsKfpsLauncherDoes) {
  const RunSnapshot& snap = RunToEnd(kImporterPipeline, {{"dataset_uri", ""}});
  EXPECT_EQ(snap.state, RuntimeState::kFailed);
  EXPECT_THAT(snap.error, HasSubstr("empty artifact URI runtime value for parameter uri"))
      << snap.error;
  EXPECT_TRUE(executor_.launched.empty());
}

TEST_F(DriverTaskTest, AnImporterUriFromAnUpstreamOutputIsRefusedAsKfpRefusesIt) {
  // KFP reads a runtimeParameter URI from the parent DAG's inputs only.
  std::string yaml = kImporterPipeline;
  yaml.replace(yaml.find("  comp-show:"), 0, R"(  comp-name:
    executorLabel: exec-name
    outputDefinitions:
      parameters:
        Output: {parameterType: STRING}
)");
  yaml.replace(yaml.find("    exec-show:"), 0, R"(    exec-name:
      container: {image: alpine, command: [echo]}
)");
  yaml.replace(yaml.find("            uri: {componentInputParameter: dataset_uri}"),
               std::string("            uri: {componentInputParameter: dataset_uri}").size(),
               "            uri: {taskOutputParameter: {producerTask: name, outputParameterKey: "
               "Output}}");
  yaml.replace(yaml.find("      show:"), 0, R"(      name:
        componentRef: {name: comp-name}
        taskInfo: {name: name}
)");
  const RunSnapshot& snap = RunToEnd(yaml);
  EXPECT_EQ(snap.state, RuntimeState::kFailed);
  EXPECT_THAT(snap.error, HasSubstr("parent DAG does not have input parameter")) << snap.error;
}

const std::string kPvcPipeline = kfpbench::testing::TestData("engine/testdata/pvc_pipeline.yaml");

TEST_F(DriverTaskTest, CreatePvcMakesAFolderNamedAsKfpNamesItAndDeletePvcRemovesIt) {
  const RunSnapshot& snap = RunToEnd(kPvcPipeline);
  ASSERT_EQ(snap.state, RuntimeState::kSucceeded) << snap.error;
  ASSERT_EQ(executor_.launched.size(), 1u);  // only `use` is a pod
  const TaskRecord* create = FindTask(snap, "createpvc");
  ASSERT_NE(create, nullptr);
  std::string name = create->outputs["parameters"]["name"];
  EXPECT_EQ(name.size(), 36 + std::string("-my-pvc").size());  // a UUID and the suffix
  EXPECT_EQ(name.substr(36), "-my-pvc");
  EXPECT_EQ(executor_.FirstLaunchOf("exec-use")->argv, (std::vector<std::string>{"echo", name}));
  EXPECT_FALSE(std::filesystem::exists(work_root_ / "pvcs" / name));  // deleted again
  EXPECT_TRUE(std::filesystem::is_directory(work_root_ / "pvcs"));
}

TEST_F(DriverTaskTest, CreatePvcRefusesBothANameAndASuffixWithKfpsReason) {
  std::string yaml = kPvcPipeline;
  yaml.replace(yaml.find("            pvc_name_suffix:"), 0,
               "            pvc_name: {runtimeValue: {constant: fixed}}\n");
  const RunSnapshot& snap = RunToEnd(yaml);
  EXPECT_EQ(snap.state, RuntimeState::kFailed);
  EXPECT_THAT(snap.error, HasSubstr("at most one of pvc_name and pvc_name_suffix can be non-empty"))
      << snap.error;
}

// A claim's name reaches the filesystem here: only a Kubernetes object name
// may, never a path.
TEST_F(DriverTaskTest, APvcNameThatIsNotAKubernetesNameIsRefusedBeforeAnyFileIsTouched) {
  std::filesystem::create_directories(work_root_ / "keep");
  const std::vector<std::string> bad = {"../keep", "a/b", "Upper", "-dash", ".."};
  const std::string suffix_line =
      "            pvc_name_suffix: {runtimeValue: {constant: -my-pvc}}";
  for (size_t n = 0; n < bad.size(); ++n) {
    std::string yaml = kPvcPipeline;
    yaml.replace(yaml.find(suffix_line), suffix_line.size(),
                 "            pvc_name: {runtimeValue: {constant: '" + bad[n] + "'}}");
    const RunSnapshot& snap = SubmitAndRun(Request("run-" + std::to_string(n), yaml));
    EXPECT_EQ(snap.state, RuntimeState::kFailed) << bad[n];
    EXPECT_THAT(snap.error, HasSubstr("is invalid: metadata.name")) << snap.error;
  }
  EXPECT_TRUE(std::filesystem::is_directory(work_root_ / "keep"));
  EXPECT_FALSE(std::filesystem::exists(work_root_ / "pvcs"));
}

const std::string kPlaceholderPipeline =
    kfpbench::testing::TestData("engine/testdata/placeholder_pipeline.yaml");

TEST_F(DriverTaskTest, RunPlaceholdersInConstantsAreWhatKfpsDriverSubstitutes) {
  RunRequest req;
  req.display_name = "my run";
  req.created_at = VirtualLoop::Epoch();
  const RunSnapshot& snap = RunToEnd(kPlaceholderPipeline, json::object(), std::move(req));
  ASSERT_EQ(snap.state, RuntimeState::kSucceeded) << snap.error;
  const TaskLaunch* print = executor_.FirstLaunchOf("exec-print");
  ASSERT_NE(print, nullptr);
  ASSERT_EQ(print->argv.size(), 7u);
  EXPECT_EQ(print->argv[1], "my run");
  // The resource name stands for the workflow's: pods are named after it.
  EXPECT_EQ(print->pod_name.rfind(print->argv[2] + "-system-container-impl-", 0), 0u)
      << print->argv[2] << " vs " << print->pod_name;
  EXPECT_EQ(print->argv[2].rfind("placeholders-", 0), 0u);
  EXPECT_EQ(print->argv[3], "run");
  EXPECT_EQ(print->argv[4], "print-all-placeholders");
  EXPECT_EQ(print->argv[5], "2023-11-14T22:13:20Z");
  EXPECT_EQ(print->argv[6], (work_root_ / "run" / "workspace").string() + "/data.txt");
  EXPECT_TRUE(std::filesystem::is_directory(work_root_ / "run" / "workspace"));
}

const std::string kTemplatedResources =
    kfpbench::testing::TestData("engine/testdata/templated_resources.yaml");

TEST_F(DriverTaskTest, ResourceFieldsFromPipelineInputsAreResolvedWhenTheTaskStarts) {
  const RunSnapshot& snap = RunToEnd(kTemplatedResources, {{"cpu", "2"}, {"memory", "1Gi"}});
  ASSERT_EQ(snap.state, RuntimeState::kSucceeded) << snap.error;
  const TaskLaunch* sum = executor_.FirstLaunchOf("exec-sum");
  ASSERT_NE(sum, nullptr);
  EXPECT_DOUBLE_EQ(sum->resources.cpu_limit, 2);
  EXPECT_EQ(sum->resources.memory_limit, int64_t{1} << 30);
}

TEST_F(DriverTaskTest, AResourceFieldThatResolvesToNonsenseFailsTheTaskNamingIt) {
  const RunSnapshot& snap = RunToEnd(kTemplatedResources, {{"cpu", "lots"}, {"memory", "1Gi"}});
  EXPECT_EQ(snap.state, RuntimeState::kFailed);
  EXPECT_THAT(snap.error, HasSubstr("resources.resourceCpuLimit = 'lots'")) << snap.error;
}

TEST_F(DriverTaskTest, APipelineInputArtifactHasNoValueAndItsReaderFailsAsInKfp) {
  const std::string kYaml = kfpbench::testing::TestData("engine/testdata/input_artifact.yaml");
  // The run is accepted (KFP's CreateRun takes it), and fails at the task.
  const RunSnapshot& snap = RunToEnd(kYaml);
  EXPECT_EQ(snap.state, RuntimeState::kFailed);
  EXPECT_THAT(snap.error, HasSubstr("parent DAG does not have input artifact data")) << snap.error;
  EXPECT_TRUE(executor_.launched.empty());
}

}  // namespace
}  // namespace kfpbench::engine
