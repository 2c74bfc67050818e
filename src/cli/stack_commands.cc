// stack-plan and stack-result: the simulator's workload run on a real
// control plane (docs/CAPACITY.md, "The simulator against Argo"): the plan
// fixes every run's arrival and step times, stack/argo/cmd/argo-run-plan
// runs it as Argo Workflows, and stack-result reads what happened into
// simulate's result form.
#include <iostream>
#include <memory>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "sim/config.h"
#include "sim/simulator.h"
#include "sim/stack_record.h"
#include "sim/workload_plan.h"
#include "util/files.h"

namespace kfpbench::cli {

Command AddStackPlanCommand(CLI::App& app) {
  struct Flags {
    std::string cluster;
    std::string workload;
    std::string out = "plan.json";
    std::string sim_out = "simulation.json";
    int64_t runs = 0;
    double arrival_scale = 0;
  };
  auto f = std::make_shared<Flags>();
  auto* cmd = app.add_subcommand(
      "stack-plan",
      "simulate a workload and write every run it ran (arrival, DAG, requests, the step times it "
      "drew) for running the same runs on a cluster (stack/argo/cmd/argo-run-plan)");
  cmd->add_option("cluster", f->cluster, "CLUSTER.yaml: node pools and autoscaler")->required();
  cmd->add_option("workload", f->workload, "WORKLOAD.yaml: pipeline, arrivals, step durations")
      ->required();
  cmd->add_option("--out", f->out, "the plan (JSON)")->capture_default_str();
  cmd->add_option("--sim-out", f->sim_out, "the simulation's result, as simulate --out writes it")
      ->capture_default_str();
  cmd->add_option("--runs", f->runs, "override the workload's run count")->check(CountAboveZero());
  cmd->add_option("--arrival-scale", f->arrival_scale,
                  "F times the workload's runs over the same time, as simulate's")
      ->check(GreaterThanZero());
  auto run = [f]() -> int {
    auto cluster = sim::LoadCluster(f->cluster);
    if (!cluster.ok()) return Fail(cluster.error().message, kExitBadInput);
    auto workload = sim::LoadWorkload(f->workload);
    if (!workload.ok()) return Fail(workload.error().message, kExitBadInput);
    if (f->runs > 0) workload->runs = f->runs;
    if (f->arrival_scale > 0) {
      if (auto st = sim::ScaleArrivals(*workload, f->arrival_scale); !st.ok()) {
        return Fail("--arrival-scale: " + st.error().message, kExitBadInput);
      }
    }
    sim::SimResult result;
    auto plan = sim::PlanWorkload(*cluster, *workload, &result);
    if (!plan.ok()) return Fail(plan.error().message, kExitBadInput);
    if (auto st = WriteFileAtomically(f->out, sim::ToJson(*plan).dump(1) + "\n"); !st.ok()) {
      return Fail(st.error().message, kExitFailed);
    }
    if (auto st = sim::WriteResultJson(result, f->sim_out); !st.ok()) {
      return Fail(st.error().message, kExitFailed);
    }
    std::cout << sim::Summary(result) << "plan        " << f->out << "\nresults     " << f->sim_out
              << "\n";
    return kExitOk;
  };
  return {cmd, run};
}

Command AddStackResultCommand(CLI::App& app) {
  struct Flags {
    std::string cluster;
    std::string plan;
    std::string record;
    std::string out = "stack.json";
  };
  auto f = std::make_shared<Flags>();
  auto* cmd = app.add_subcommand(
      "stack-result",
      "read what a plan did on a cluster (argo-run-plan's record) into simulate's result form");
  cmd->add_option("cluster", f->cluster, "CLUSTER.yaml the plan was made for")->required();
  cmd->add_option("plan", f->plan, "the plan (stack-plan --out)")->required();
  cmd->add_option("record", f->record, "argo-run-plan's record (its --out)")->required();
  cmd->add_option("--out", f->out, "JSON output file, as simulate --out")->capture_default_str();
  auto run = [f]() -> int {
    auto cluster = sim::LoadCluster(f->cluster);
    if (!cluster.ok()) return Fail(cluster.error().message, kExitBadInput);
    auto plan_text = ReadFile(f->plan);
    if (!plan_text.ok()) return Fail(plan_text.error().message, kExitBadInput);
    auto plan = sim::ParseWorkloadPlan(*plan_text);
    if (!plan.ok()) return Fail(f->plan + ": " + plan.error().message, kExitBadInput);
    auto record_text = ReadFile(f->record);
    if (!record_text.ok()) return Fail(record_text.error().message, kExitBadInput);
    auto record = sim::ParseStackRecord(*record_text);
    if (!record.ok()) return Fail(f->record + ": " + record.error().message, kExitBadInput);
    auto result = sim::StackResult(*plan, *record, *cluster);
    if (!result.ok()) return Fail(result.error().message, kExitBadInput);
    if (auto st = sim::WriteResultJson(*result, f->out); !st.ok()) {
      return Fail(st.error().message, kExitFailed);
    }
    std::cout << sim::Summary(*result) << "results     " << f->out << "\n";
    if (!record->complete) std::cout << "incomplete  not every run finished on the stack\n";
    return result->failed > 0 || !record->complete ? kExitFailed : kExitOk;
  };
  return {cmd, run};
}

}  // namespace kfpbench::cli
