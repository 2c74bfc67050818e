#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "capture/capture.h"
#include "capture/derive.h"
#include "capture/window.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/target_flags.h"
#include "sim/config.h"

namespace kfpbench::cli {

namespace {

struct CaptureFlags {
  capture::CaptureOptions options;
  std::string out;
  std::string cluster;
  TargetFlags target;
};

int RunCapture(const CaptureFlags& f) {
  auto target = f.target.Resolve();
  if (!target.ok()) return Fail(target.error().message);
  // A window that does not read is refused before any folder is made.
  for (const auto& [flag, text] :
       {std::pair{"--since", f.options.since}, std::pair{"--until", f.options.until}}) {
    if (text.empty()) continue;
    auto point = capture::ParseWindowPoint(text, WallClock::now());
    if (!point.ok()) return Fail(std::string(flag) + ": " + point.error().message);
  }
  capture::CaptureOptions options = f.options;
  if (!f.cluster.empty()) {
    // Read before any call, so a bad file costs the target nothing.
    auto cluster = sim::LoadCluster(f.cluster);
    if (!cluster.ok()) return Fail("--recorded-cluster: " + cluster.error().message);
    options.cluster = std::move(*cluster);
  }
  auto out = OutputFolder(f.out, "captures");
  if (!out.ok()) return Fail(out.error().message);
  options.out = *out;
  InstallSignalHandlers();
  options.interrupted = &g_interrupted;
  auto last = std::chrono::steady_clock::now();
  const auto started = last;
  auto summary = capture::CaptureTarget(*target, options, [&](const capture::Progress& p) {
    const auto now = std::chrono::steady_clock::now();
    if (now - last < std::chrono::seconds(1)) return;
    last = now;
    const double s = std::chrono::duration<double>(now - started).count();
    spdlog::info(
        "capture: {} runs ({} in progress), {} tasks, {} versions, {} calls, "
        "{:.1f} runs/s; created up to {}",
        p.runs, p.censored, p.tasks, p.versions, p.calls, s > 0 ? p.runs / s : 0.0,
        FormatRfc3339(p.last_created_at));
  });
  if (!summary.ok()) {
    return Fail(summary.error().message, summary.error().BadInput() ? kExitBadInput : kExitFailed);
  }
  const capture::Progress& p = summary->progress;
  const std::string window =
      fmt::format("{} to {}", FormatRfc3339(summary->since), FormatRfc3339(summary->until));
  if (summary->interrupted) {
    std::cerr << fmt::format(
        "kfpbench: capture interrupted after {} runs; the same command with --out {} "
        "continues it\n",
        p.runs, out->string());
    return kExitInterrupted;
  }
  std::cout << fmt::format(
      "{}captured {} runs ({} still in progress, kept as censored), {} tasks, {} "
      "pipeline versions ({} missing) created {} in {:.1f}s, {} calls\n",
      p.resumed ? "resumed and " : "", p.runs, p.censored, p.tasks, p.versions, p.missing_versions,
      window, summary->seconds, p.calls);
  std::cout << "capture:  " << out->string() << "\n"
            << "workload: " << (*out / capture::kWorkloadFile).string()
            << " (simulator workloads under " << capture::kSimulateDir << "/)\n"
            << "page:     " << (*out / capture::kPageFile).string() << "\n";
  if (!summary->overhead_note.empty()) std::cout << summary->overhead_note << "\n";
  if (p.runs == 0) {
    return Fail(fmt::format("no runs were created {} on this target: widen --since or "
                            "--until, or check --namespace",
                            window),
                kExitFailed);
  }
  return kExitOk;
}

}  // namespace

Command AddCaptureCommand(CLI::App& app) {
  auto f = std::make_shared<CaptureFlags>();
  auto* cmd = app.add_subcommand(
      "capture",
      "read a KFP's run history (runs, their tasks, the pipeline versions they ran) through its "
      "read API into a capture folder, with the workload models derived from it");
  cmd->add_option("--since", f->options.since,
                  "runs created at or after: RFC 3339 (2026-11-20T00:00:00Z) or a duration back "
                  "from now (24h)")
      ->capture_default_str();
  cmd->add_option("--until", f->options.until, "runs created before: as --since (default: now)");
  cmd->add_option("--qps", f->options.qps,
                  "the most calls a second asked of the target (0: no limit)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--page-size", f->options.page_size, "runs per ListRuns page")
      ->capture_default_str()
      ->check(CLI::Range(1, 200));
  cmd->add_option("--experiment", f->options.experiments,
                  "only runs of this experiment, by name or id (repeatable): sent to KFP as an "
                  "experiment_id filter");
  cmd->add_option("--pipeline", f->options.pipelines,
                  "only runs of this pipeline, by name or id (repeatable): KFP's run filter has no "
                  "pipeline key, so the listed runs are matched here and only those are read");
  cmd->add_flag("--keep-parameters", f->options.record.keep_parameters,
                "keep run parameters as given (default: hashed); names that look like "
                "credentials are hashed always");
  cmd->add_option("--out", f->out,
                  "capture folder (default: captures/<timestamp>); an unfinished capture there is "
                  "resumed");
  cmd->add_option("--recorded-cluster", f->cluster,
                  "the cluster the history ran on (a simulator cluster file): the per-step "
                  "overhead is fitted on it, so waits for room are not taken for start-up");
  f->target.Add(*cmd);

  return {cmd, [f] { return RunCapture(*f); }};
}

}  // namespace kfpbench::cli
