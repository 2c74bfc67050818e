// `kfpbench growth-cleanup --prefix NAME`: deletes what a growth scenario's
// fill created under NAME on the target (every run in the experiments
// NAME-e<n>, those experiments, the pipelines NAME-p<n>), and nothing else.
// It lists what is left each time, so an interrupted clean-up (of `run` or
// of this command) is finished by running it again. `kfpbench cleanup
// --benchmark-id ID` does the same for everything one benchmark created.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/target_flags.h"
#include "harness/benchmark_cleanup.h"
#include "harness/growth_fill.h"
#include "harness/session.h"

namespace kfpbench::cli {
namespace {

// The target's session, once it answers. A clean-up needs a named target:
// the embedded backend would start empty, "delete 0" and exit 0, and a CI
// step that forgot --host would pass while the real objects stay.
Result<std::unique_ptr<harness::Session>> OpenReachable(const TargetFlags& flags,
                                                        const std::string& what) {
  auto target = flags.Resolve();
  if (!target.ok()) return target.error();
  if (target->host.empty()) {
    return Error{fmt::format(
        "{} needs the target that holds them: --host URL, or --target NAME from kfpbench.yaml "
        "(without one it would start an empty embedded backend and delete nothing)",
        what)};
  }
  auto session = harness::Session::Open(*target);
  if (!session.ok()) return session.error();
  if (Status s = (*session)->CheckReachable(); !s.ok()) return s.error();
  return session;
}

// What a clean-up could not delete, then its exit code: an interrupted one
// is finished by running it again.
int CleanUpExit(const std::vector<std::string>& failures, bool stopped) {
  for (const auto& failure : failures) std::cerr << "  not deleted: " << failure << "\n";
  if (stopped) {
    std::cout << "interrupted: run the same command again to delete the rest\n";
    return kExitInterrupted;
  }
  return failures.empty() ? kExitOk : kExitFailed;
}

struct GrowthCleanupFlags {
  std::string prefix;
  int concurrency = 8;
  TargetFlags target;
};

int GrowthCleanup(const GrowthCleanupFlags& f) {
  if (f.prefix.empty()) return Fail("--prefix: must not be empty");
  InstallSignalHandlers();
  auto session = OpenReachable(f.target, "growth-cleanup --prefix " + f.prefix);
  if (!session.ok()) return Fail(session.error().message);
  auto outcome = harness::CleanUpFill((*session)->client(), f.prefix, f.concurrency,
                                      [] { return g_interrupted.load(); });
  std::cout << fmt::format(
      "deleted {} runs, {} experiments and {} pipelines of the growth fill '{}'\n",
      outcome.runs_deleted, outcome.experiments_deleted, outcome.pipelines_deleted, f.prefix);
  return CleanUpExit(outcome.failures, outcome.stopped);
}

struct CleanupFlags {
  std::string benchmark_id;
  double qps = 20;  // as --observer-qps: a production server is asked gently
  TargetFlags target;
};

int Cleanup(const CleanupFlags& f) {
  if (Status s = harness::CheckBenchmarkId(f.benchmark_id); !s.ok()) {
    return Fail(s.error().message);
  }
  InstallSignalHandlers();
  auto session = OpenReachable(f.target, "cleanup --benchmark-id " + f.benchmark_id);
  if (!session.ok()) return Fail(session.error().message);
  CallBudget budget(f.qps);
  auto outcome = harness::CleanUpBenchmark((*session)->client(), f.benchmark_id, budget,
                                           [] { return g_interrupted.load(); });
  const auto& d = outcome.deleted;
  std::cout << fmt::format(
      "deleted {} recurring run(s), {} run(s), {} experiment(s) and {} pipeline(s) of "
      "benchmark {}\n",
      d.recurring_runs, d.runs, d.experiments, d.pipelines, f.benchmark_id);
  return CleanUpExit(outcome.failures, outcome.stopped);
}

}  // namespace

Command AddGrowthCleanupCommand(CLI::App& app) {
  auto f = std::make_shared<GrowthCleanupFlags>();
  auto* cmd = app.add_subcommand(
      "growth-cleanup",
      "delete what a growth scenario's fill created under --prefix (the runs of experiments "
      "PREFIX-e<n>, those experiments, pipelines PREFIX-p<n>); run again to resume");
  cmd->add_option("--prefix", f->prefix, "the name given to run --growth-fill")->required();
  cmd->add_option("--concurrency", f->concurrency, "DeleteRun calls in flight")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  f->target.Add(*cmd);
  return {cmd, [f] { return GrowthCleanup(*f); }};
}

Command AddCleanupCommand(CLI::App& app) {
  auto f = std::make_shared<CleanupFlags>();
  auto* cmd = app.add_subcommand(
      "cleanup",
      "delete what one benchmark created on the target (every recurring run, run, experiment "
      "and pipeline named <benchmark id>-...), and nothing else; run again to resume");
  cmd->add_option("--benchmark-id", f->benchmark_id,
                  "the benchmark's id, kfpbench-<8 hex digits> (results.json, console)")
      ->required();
  cmd->add_option("--qps", f->qps,
                  "the most calls a second asked of the target, lists and deletes (0: no limit)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e6));
  f->target.Add(*cmd);
  return {cmd, [f] { return Cleanup(*f); }};
}

}  // namespace kfpbench::cli
