// What a container task is launched with: its work directories.
#include <filesystem>

#include <gtest/gtest.h>

#include "engine/engine.h"
#include "engine/engine_test_fixture.h"
#include "engine/engine_test_util.h"

namespace kfpbench::engine {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using namespace testing;  // the part's test helpers

TEST_F(EngineTest, CreatesWorkDirectories) {
  auto root = std::filesystem::temp_directory_path() /
              ("kfpbench-engine-test-" + std::to_string(::getpid()));
  EngineOptions options;
  options.work_root = root;
  MakeEngine(options);
  ASSERT_TRUE(Submit(kPipeline, {{"text", "x"}}).ok());
  loop_.Run();
  const TaskLaunch* producer = executor_.FirstLaunchOf("exec-producer");
  ASSERT_NE(producer, nullptr);
  EXPECT_EQ(producer->work_dir, root / "run-1" / "producer");
  EXPECT_TRUE(
      std::filesystem::is_directory(producer->output_parameter_files.at("out").parent_path()));
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace kfpbench::engine
