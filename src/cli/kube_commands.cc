#include "cli/kube_commands.h"

#include <iostream>
#include <memory>

#include "cli/cli.h"
#include "cli/common.h"
#include "kube/job_config.h"
#include "kube/manifest.h"

namespace kfpbench::cli {
namespace {

int Render(const std::string& file) {
  auto config = kube::LoadJobConfig(file);
  if (!config.ok()) return Fail(config.error().message);
  bool first = true;
  for (const auto& point : kube::ExpandSweep(*config)) {
    auto doc = kube::RenderManifest(*config, point);
    if (!doc.ok()) return Fail(file + ": " + point.job_name + ": " + doc.error().message);
    if (!first) std::cout << "---\n";
    first = false;
    std::cout << kube::ToYaml(*doc);
  }
  return kExitOk;
}

}  // namespace

Command AddJobCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("job", "benchmark ML training jobs from a config (docs/JOBS.md)");
  cmd->require_subcommand(1);
  auto render_file = std::make_shared<std::string>();
  auto* render = cmd->add_subcommand("render", "print the manifest of every sweep point");
  render->add_option("config", *render_file, "job config (YAML)")->required();
  return {cmd, [render, render_file]() -> int {
            if (render->parsed()) return Render(*render_file);
            return kExitBadInput;
          }};
}

}  // namespace kfpbench::cli
