#include "cli/cli.h"

#include <algorithm>
#include <iostream>
#include <optional>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "cli/cli_reference.h"
#include "cli/commands.h"
#include "cli/common.h"

namespace kfpbench::cli {
namespace {

// Edits (insert, delete, replace) between two short words.
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// The first word that is not an option, when it names no command: CLI11 would
// only say "A subcommand is required".
std::optional<std::string> UnknownCommand(int argc, char** argv, const CLI::App& app) {
  for (int i = 1; i < argc; ++i) {
    std::string_view word = argv[i];
    if (word.starts_with("-")) {
      if (word == "--log-level") ++i;  // its value (--log-level=x is one word)
      continue;
    }
    std::string closest;
    size_t best = 3;  // suggest only near misses
    for (const auto* sub : app.get_subcommands({})) {
      if (sub->get_name() == word) return std::nullopt;
      size_t d = EditDistance(word, sub->get_name());
      if (d < best) best = d, closest = sub->get_name();
    }
    return fmt::format("unknown command '{}'{}; see kfpbench --help", word,
                       closest.empty() ? "" : fmt::format(" (did you mean '{}'?)", closest));
  }
  return std::nullopt;
}

CLI::Option* AddLogLevel(CLI::App& app, std::string& log_level) {
  return app.add_option("--log-level", log_level, "trace, debug, info, warn, error or off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
}

}  // namespace

std::vector<Command> AddCommands(CLI::App& app, std::string& log_level) {
  app.set_version_flag("--version", std::string("kfpbench ") + KFPBENCH_VERSION);
  app.require_subcommand(1);
  AddLogLevel(app, log_level)->capture_default_str();
  std::vector<Command> commands = {
      AddServeCommand(app),    AddRunCommand(app),       AddStepCommand(app),
      AddValidateCommand(app), AddJobCommand(app),       AddKubeCommand(app),
      AddSimulateCommand(app), AddCalibrateCommand(app), AddPlanCommand(app)};
  commands.push_back(AddProfileCommand(app));
  commands.push_back(AddOrchestrateCommand(app));
  commands.push_back(AddGrowthCleanupCommand(app));
  commands.push_back(AddCleanupCommand(app));
  commands.push_back(AddCaptureCommand(app));
  commands.push_back(AddStackPlanCommand(app));
  commands.push_back(AddStackResultCommand(app));
  AddReportCommands(app, commands);
  // --log-level after the command too (kfpbench run s.json --log-level debug),
  // but not for `step`, whose flags pass through to a pipeline's command line.
  for (auto& c : commands) {
    if (c.app->get_name() == "step") continue;
    AddLogLevel(*c.app, log_level);
    // and after a nested command (kfpbench job render x.yaml --log-level debug)
    for (CLI::App* sub : c.app->get_subcommands({})) AddLogLevel(*sub, log_level);
  }
  // Hidden (no group): writes docs/CLI.md.
  auto* reference = app.add_subcommand("cli-reference", "print docs/CLI.md")->group("");
  commands.push_back({reference, [&app] {
                        std::cout << CliReference(app);
                        return kExitOk;
                      }});
  return commands;
}

int Main(int argc, char** argv) {
  CLI::App app{"kfpbench: measure, explain and predict the performance of Kubeflow Pipelines"};
  std::string log_level = "info";
  std::vector<Command> commands = AddCommands(app, log_level);
  if (auto unknown = UnknownCommand(argc, argv, app)) return Fail(*unknown);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitBadInput;
  }
  auto logger = spdlog::stderr_color_mt("kfpbench");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("%H:%M:%S.%e %^%l%$ %v");
  spdlog::set_level(spdlog::level::from_str(log_level));
  for (const auto& c : commands) {
    if (c.app->parsed()) return c.run();
  }
  return kExitBadInput;
}

}  // namespace kfpbench::cli
