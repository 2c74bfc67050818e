#include <iostream>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "exec/step_workload.h"
#include "harness/preflight.h"
#include "harness/scenario.h"

namespace kfpbench::cli {

Command AddStepCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "step", "a benchmark pipeline step: --duration, --cpu, --memory, --output-param FILE=VALUE");
  // The step parses its own flags, so pipelines can pass them straight through.
  cmd->allow_extras();
  cmd->prefix_command();
  cmd->footer(exec::kStepFlags);
  return {cmd, [cmd] {
            auto options = exec::ParseStepArgs(cmd->remaining());
            if (!options.ok()) return Fail("step: " + options.error().message);
            return exec::RunStep(*options);
          }};
}

Command AddValidateCommand(CLI::App& app) {
  auto files = std::make_shared<std::vector<std::string>>();
  auto dirs = std::make_shared<std::vector<std::string>>();
  auto* cmd = app.add_subcommand("validate", "check scenario files and name every problem");
  cmd->add_option("files", *files, "scenario files")->required();
  cmd->add_option("--pipelines", *dirs, "folder to look for pipeline files in");
  return {cmd, [files, dirs] {
            harness::LoadOptions load;
            for (const auto& d : *dirs) load.pipeline_dirs.emplace_back(d);
            int code = kExitOk;
            for (const auto& file : *files) {
              // The same checks as run, in the same words (harness/preflight.h).
              auto s = harness::LoadScenarioFile(file, load);
              if (!s.ok()) {
                code = Fail(s.error().message);
                continue;
              }
              auto preflight = harness::CheckScenarioFile(*s);
              for (const auto& p : preflight.problems) code = Fail(p);
              for (const auto& n : preflight.notes) std::cout << "note: " << n << "\n";
              if (preflight.problems.empty()) {
                std::cout << file << ": ok (" << s->scenarios.size() << " scenarios)\n";
              }
            }
            return code;
          }};
}

}  // namespace kfpbench::cli
