#include <filesystem>
#include <iostream>
#include <memory>

#include <spdlog/spdlog.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/target_flags.h"
#include "harness/benchmark.h"
#include "harness/orchestrate.h"
#include "harness/scenario.h"
#include "harness/session.h"

namespace kfpbench::cli {
namespace {

struct OrchestrateFlags {
  std::string csv;
  std::string pipeline;
  std::string experiment;
  int concurrency = 0;
  std::string rate;
  std::string out;
  harness::BenchmarkOptions benchmark;
  TargetFlags target;
};

// The flags as one ORCHESTRATE scenario: the alias runs what a scenario file
// would.
Result<nlohmann::json> ScenarioOf(const OrchestrateFlags& f) {
  nlohmann::json scenario = {{"mode", "ORCHESTRATE"},
                             {"csv", std::filesystem::absolute(f.csv).string()}};
  std::error_code ec;
  if (std::filesystem::is_regular_file(f.pipeline, ec)) {
    scenario["pipelineFileName"] = std::filesystem::absolute(f.pipeline).string();
  } else {
    scenario["pipeline"] = f.pipeline;
  }
  if (!f.experiment.empty()) scenario["experiment"] = f.experiment;
  if (f.concurrency > 0) scenario["concurrency"] = f.concurrency;
  if (!f.rate.empty()) {
    auto rate = harness::ParseRate(f.rate);
    if (!rate.ok()) return rate.error();
    scenario["rate"] = *rate;
  }
  return scenario;
}

int Orchestrate(const OrchestrateFlags& f) {
  if (f.concurrency > 0 && !f.rate.empty()) {
    return Fail("give --concurrency or --rate, not both");
  }
  auto scenario = ScenarioOf(f);
  if (!scenario.ok()) return Fail(scenario.error().message);
  // The table is read (and typed, for a pipeline file) before
  // anything is started or sent. One scenario from flags, not from a file:
  // its errors name the field and the CSV's own path, nothing else.
  auto file = harness::ParseScenarios(scenario->dump(), "", {});
  if (!file.ok()) return Fail(file.error().message);
  file->path = f.csv;  // what the results and reports name as their source

  harness::BenchmarkOptions options = f.benchmark;
  auto target = f.target.Resolve();
  if (!target.ok()) return Fail(target.error().message);
  auto session = harness::Session::Open(*target);
  if (!session.ok()) return Fail(session.error().message);
  auto out_dir = OutputFolder(f.out, "results");
  if (!out_dir.ok()) return Fail(out_dir.error().message);
  options.finish.out_dir = *out_dir;
  return RunBenchmarkToExit(**session, *file, options);
}

}  // namespace

Command AddOrchestrateCommand(CLI::App& app) {
  auto f = std::make_shared<OrchestrateFlags>();
  auto* cmd = app.add_subcommand(
      "orchestrate",
      "start one run per CSV row, the row's columns as the run's parameters, and record them "
      "like a benchmark");
  cmd->add_option("scenarios", f->csv, "SCENARIOS.csv: a header of parameter names, a row per run")
      ->required();
  cmd->add_option("--pipeline", f->pipeline,
                  "a pipeline file (uploaded, removed afterwards unless --keep) or the name of a "
                  "pipeline on the server")
      ->required();
  cmd->add_option("--experiment", f->experiment,
                  "experiment by name (created if missing, and then removed unless --keep)");
  cmd->add_option("--concurrency", f->concurrency, "runs in flight at once (default 4)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--rate", f->rate,
                  "start runs at a rate instead: 30 or 30/m (per minute), 0.5/s, 120/h");
  cmd->add_option("--out", f->out, "results folder (default: results/<timestamp>)");
  harness::HarnessOptions& h = f->benchmark.harness;
  cmd->add_flag("--keep", h.keep, "keep the pipeline, experiment and runs created");
  AddDurationOption(*cmd, "--poll-interval", h.poll_interval,
                    "how often the runs in flight are listed (or a run is polled)");
  cmd->add_option("--observer-qps", h.observer_qps,
                  "the most calls per second kfpbench makes to follow its runs (0: no limit)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  AddDurationOption(*cmd, "--drain-timeout", h.drain_timeout,
                    "how long runs in flight at the end are awaited");
  f->target.Add(*cmd);

  return {cmd, [f] { return Orchestrate(*f); }};
}

}  // namespace kfpbench::cli
