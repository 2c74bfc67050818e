#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "server/backend.h"

namespace kfpbench::cli {

// A subcommand: its flags live on `app`; `run` executes it after parsing and
// returns the exit code.
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

// Options of the embedded backend, shared by `serve` and every command that
// talks to KFP (through TargetFlags).
struct BackendFlags {
  std::string executor;  // empty: not given (process, or run's preflight chooses)
  std::vector<std::string> stub_durations;
  std::vector<std::string> stub_failures;
  std::vector<std::string> stub_artifact_bytes;
  double artifact_bandwidth = 0;  // bytes per second; 0: no limit
  std::string artifact_root;
  std::string package_root;
  int nodes = 0;
  double node_cpu = 0;      // 0: this machine's
  int64_t node_memory = 0;  // 0: this machine's
  std::string cluster_file;

  // Sizes and the bandwidth are parsed as the line is read (a bad value is a
  // usage error naming the flag); the stub's per-label specs stay text until
  // the backend opens, which parses them.
  void Add(CLI::App& app);
  // Fills `out`; a bad value is an Error naming the flag.
  Status Apply(server::BackendOptions& out) const;
};

// The whole command line on `app` (global flags and every command); cli.cc.
std::vector<Command> AddCommands(CLI::App& app, std::string& log_level);

// Every command, each defined in the file of its name or area.
Command AddServeCommand(CLI::App& app);     // serve_command.cc: the embedded backend
Command AddRunCommand(CLI::App& app);       // run_command.cc: a scenario file
Command AddStepCommand(CLI::App& app);      // step_command.cc: a pipeline step's workload
Command AddValidateCommand(CLI::App& app);  // step_command.cc: what run would refuse
// orchestrate_command.cc: one run per CSV row, an ORCHESTRATE scenario
Command AddOrchestrateCommand(CLI::App& app);
// growth_command.cc: delete a growth scenario's fill by its prefix
Command AddGrowthCleanupCommand(CLI::App& app);
Command AddCleanupCommand(CLI::App& app);  // growth_command.cc: one benchmark's objects
// profile_command.cc: step resources and recommended requests and limits
Command AddProfileCommand(CLI::App& app);
// capture_command.cc: a target's run history into a capture folder
Command AddCaptureCommand(CLI::App& app);
// capacity_commands.cc: the cluster simulator; they never contact a KFP server
Command AddSimulateCommand(CLI::App& app);
Command AddCalibrateCommand(CLI::App& app);
Command AddPlanCommand(CLI::App& app);
// stack_commands.cc: a simulated workload as a plan for a real cluster, and
// what the cluster did read back in simulate's form
Command AddStackPlanCommand(CLI::App& app);
Command AddStackResultCommand(CLI::App& app);
// kube_commands.cc: `job` (benchmark ML jobs) and `kube` (Kubernetes helpers,
// such as `kube loadgen SCENARIO --shards N`)
Command AddJobCommand(CLI::App& app);
Command AddKubeCommand(CLI::App& app);
// report_commands.cc: merge, report, compare, history, on results already
// written; adds each to `app` and to `commands`.
void AddReportCommands(CLI::App& app, std::vector<Command>& commands);

}  // namespace kfpbench::cli
