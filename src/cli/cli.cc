#include "cli/cli.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "cli/capacity_commands.h"
#include "cli/commands.h"
#include "cli/kube_commands.h"
#include "cli/profile_commands.h"
#include "cli/report_commands.h"

namespace kfpbench::cli {

int Main(int argc, char** argv) {
  CLI::App app{"kfpbench: measure, explain and predict the performance of Kubeflow Pipelines"};
  app.set_version_flag("--version", std::string("kfpbench ") + KFPBENCH_VERSION);
  app.require_subcommand(1);
  std::string log_level = "info";
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error or off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));

  std::vector<Command> commands = {
      AddServeCommand(app),    AddRunCommand(app),       AddStepCommand(app),
      AddValidateCommand(app), AddJobCommand(app),       AddKubeCommand(app),
      AddSimulateCommand(app), AddCalibrateCommand(app), AddPlanCommand(app)};
  commands.push_back(AddProfileCommand(app));
  commands.push_back(AddOrchestrateCommand(app));
  AddReportCommands(app, commands);
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
