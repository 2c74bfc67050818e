#include "cli/capacity_commands.h"

#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/cli.h"
#include "sim/config.h"
#include "sim/simulator.h"

namespace kfpbench::cli {

Command AddSimulateCommand(CLI::App& app) {
  struct Flags {
    std::string cluster;
    std::string workload;
    std::string out = "simulation.json";
    int64_t runs = 0;
    bool quiet = false;
  };
  auto f = std::make_shared<Flags>();
  auto* cmd = app.add_subcommand(
      "simulate", "predict makespan, run durations and nodes for a workload on a cluster");
  cmd->add_option("cluster", f->cluster, "CLUSTER.yaml: node pools and autoscaler")->required();
  cmd->add_option("workload", f->workload, "WORKLOAD.yaml: pipeline, arrivals, step durations")
      ->required();
  cmd->add_option("--out", f->out, "JSON output file")->capture_default_str();
  cmd->add_option("--runs", f->runs, "override the workload's run count")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--quiet", f->quiet, "no console summary");
  auto run = [f]() -> int {
    auto cluster = sim::LoadCluster(f->cluster);
    if (!cluster.ok()) {
      std::cerr << "kfpbench simulate: " << cluster.error().message << "\n";
      return kExitBadInput;
    }
    auto workload = sim::LoadWorkload(f->workload);
    if (!workload.ok()) {
      std::cerr << "kfpbench simulate: " << workload.error().message << "\n";
      return kExitBadInput;
    }
    if (f->runs > 0) workload->runs = f->runs;
    auto result = sim::Simulate(*cluster, *workload);
    if (!result.ok()) {
      std::cerr << "kfpbench simulate: " << result.error().message << "\n";
      return kExitBadInput;
    }
    if (auto st = sim::WriteResultJson(*result, f->out); !st.ok()) {
      std::cerr << "kfpbench simulate: " << st.error().message << "\n";
      return kExitFailed;
    }
    if (!f->quiet) std::cout << sim::Summary(*result) << "results     " << f->out << "\n";
    return result->failed > 0 ? kExitFailed : kExitOk;
  };
  return {cmd, run};
}

}  // namespace kfpbench::cli
