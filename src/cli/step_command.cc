#include <algorithm>
#include <iostream>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "exec/step_workload.h"
#include "harness/preflight.h"
#include "harness/scenario.h"
#include "harness/session.h"

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
  struct Flags {
    std::vector<std::string> files;
    std::vector<std::string> dirs;
    harness::TargetOptions target;  // what decides the target, as run reads it
    std::string executor;
  };
  auto f = std::make_shared<Flags>();
  auto* cmd = app.add_subcommand("validate", "check scenario files and name every problem");
  cmd->add_option("files", f->files, "scenario files")->required();
  cmd->add_option("--pipelines", f->dirs, "folder to look for pipeline files in");
  cmd->add_option("--host", f->target.host, "as run --host: a real KFP runs the steps");
  cmd->add_option("--config", f->target.config_path,
                  "as run --config (default: ./kfpbench.yaml if present)");
  cmd->add_option("--target", f->target.target, "as run --target");
  cmd->add_flag("--allow-file-credentials", f->target.allow_file_credentials,
                "as run --allow-file-credentials");
  cmd->add_option("--executor", f->executor,
                  "as run --executor: the embedded backend's; process refuses pipelines it "
                  "cannot run on this host")
      ->check(CLI::IsMember({"process", "stub"}));
  return {
      cmd, [f] {
        harness::LoadOptions load;
        for (const auto& d : f->dirs) load.pipeline_dirs.emplace_back(d);
        int code = kExitOk;
        for (const auto& file : f->files) {
          // The same checks as run, in the same words (harness/preflight.h).
          auto s = harness::LoadScenarioFile(file, load);
          if (!s.ok()) {
            code = Fail(s.error().message);
            continue;
          }
          // The target as run resolves it; a file's bad "target" is
          // one of the preflight's problems, said with the others.
          auto target = harness::ResolveTarget(f->target, s->target, file);
          const bool remote = target.ok() ? !target->host.empty()
                                          : s->target.is_object() && s->target.contains("host");
          auto preflight =
              harness::CheckScenarioFile(*s, {.remote_target = remote, .executor = f->executor});
          if (!target.ok() && std::find(preflight.problems.begin(), preflight.problems.end(),
                                        target.error().message) == preflight.problems.end()) {
            code = Fail(target.error().message);
          }
          for (const auto& p : preflight.problems) code = Fail(p);
          for (const auto& n : preflight.notes) std::cout << "note: " << n << "\n";
          // Where run would send what: a file may name a host of its own.
          if (target.ok() && !target->host.empty()) {
            std::cout << "note: " << file << ": run sends its requests to " << target->host << " ("
                      << target->origin << ")"
                      << (target->token_file.empty() ? std::string(", with no token from a file")
                                                     : ", with the token in " + target->token_file)
                      << (target->namespace_.empty() ? "" : ", namespace " + target->namespace_)
                      << "\n";
          }
          if (preflight.problems.empty()) {
            std::cout << file << ": ok (" << s->scenarios.size() << " scenarios)\n";
          }
        }
        return code;
      }};
}

}  // namespace kfpbench::cli
