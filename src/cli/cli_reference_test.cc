// docs/CLI.md is the reference people read; it is written from the commands'
// own definitions and must not drift from them.
#include "cli/cli_reference.h"

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/commands.h"

namespace kfpbench::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Reference() {
  CLI::App app{"kfpbench: measure, explain and predict the performance of Kubeflow Pipelines"};
  std::string log_level = "info";
  auto commands = AddCommands(app, log_level);
  return CliReference(app);
}

TEST(CliReference, DocsCliMdIsUpToDate) {
  std::filesystem::path doc = std::filesystem::path(KFPBENCH_SOURCE_DIR) / "docs" / "CLI.md";
  std::ifstream in(doc);
  ASSERT_TRUE(in) << doc;
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(text, Reference())
      << "docs/CLI.md is out of date: build/kfpbench cli-reference > docs/CLI.md";
}

TEST(CliReference, ListsEveryCommandAndItsOptions) {
  std::string ref = Reference();
  for (const char* command : {"## `kfpbench run`", "## `kfpbench serve`", "## `kfpbench validate`",
                              "## `kfpbench report`", "## `kfpbench kube loadgen`"}) {
    EXPECT_THAT(ref, HasSubstr(command)) << command;
  }
  EXPECT_THAT(ref, HasSubstr("| `--checkpoint-every` | DURATION | `10s` |"));
  EXPECT_THAT(ref, Not(HasSubstr("cli-reference`")));  // hidden
}

}  // namespace
}  // namespace kfpbench::cli
