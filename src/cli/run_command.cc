#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/status_line.h"
#include "cli/target_flags.h"
#include "harness/benchmark.h"
#include "harness/run_scenario_file.h"
#include "http/url.h"
#include "util/time.h"

namespace kfpbench::cli {
namespace {

struct RunFlags {
  std::string scenario;
  std::string out;
  std::vector<std::string> pipeline_dirs;
  double time_scale = 1.0;
  bool no_cache = false;
  bool quiet = false;
  std::string shard;
  TargetFlags target;
  harness::BenchmarkOptions benchmark;
};

// How the runs are followed, how long the end waits, and what is kept.
void AddLoadFlags(CLI::App& cmd, harness::BenchmarkOptions& b) {
  AddDurationOption(cmd, "--poll-interval", b.harness.poll_interval,
                    "how often the runs in flight are listed (or a run is polled)");
  cmd.add_option("--observer-qps", b.harness.observer_qps,
                 "the most calls per second kfpbench makes to follow its runs (0: no limit)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd.add_flag("--observer-poll-each-run", b.harness.observe_each_run,
               "poll every run with GetRun instead of listing the runs in flight");
  AddDurationOption(cmd, "--drain-timeout", b.harness.drain_timeout,
                    "how long runs in flight at the end are awaited");
  AddDurationOption(cmd, "--grace", b.harness.grace,
                    "after Ctrl-C, how long runs in flight are awaited");
  AddDurationOption(cmd, "--checkpoint-every", b.harness.checkpoint_interval,
                    "how often the results so far are written while the load runs");
  cmd.add_flag("--keep", b.harness.keep, "keep the pipelines, experiments and runs created");
  cmd.add_option("--growth-fill", b.harness.growth_fill,
                 "let growth scenarios fill a real target, creating experiments NAME-e0, "
                 "NAME-e1, ... and pipelines NAME-p0, ... (deleted by experiment afterwards unless "
                 "--keep; kfpbench growth-cleanup --prefix NAME finishes an interrupted "
                 "clean-up)")
      ->type_name("NAME");
}

// What is read beside the load (Prometheus, pods, collectors), the limits
// that stop or fail it, repetitions, and where its figures go besides the
// results folder.
void AddReadingFlags(CLI::App& cmd, RunFlags& f) {
  harness::BenchmarkOptions& b = f.benchmark;
  AddParsedOption(cmd, "--prometheus", b.prometheus, http::ParseUrl,
                  "Prometheus URL: after the load, read each step's container CPU and memory", "",
                  "URL");
  AddDurationOption(cmd, "--prometheus-wait", b.prometheus_options.wait,
                    "how long to wait for Prometheus to scrape the last steps");
  AddPercentOption(cmd, "--max-error-rate", b.harness.max_error_rate,
                   "stop the load when more API calls than this fail, e.g. 5%");
  AddPercentOption(cmd, "--max-failed-runs", b.finish.max_failed_runs,
                   "the share of runs that may end other than SUCCEEDED before the benchmark "
                   "fails (exit 1), e.g. 5%");
  cmd.add_flag("--quiet", f.quiet, "no live status line");
  cmd.add_option("--shard", f.shard,
                 "i/N: send shard i (from 0) of N of the load; N processes together send what "
                 "one would (see kfpbench merge)");
  cmd.add_option("--collector", b.collectors,
                 "shell command run at start and end (KFPBENCH_PHASE=start|end) whose JSON "
                 "output is kept in the results (repeatable)");
  cmd.add_option("--kube-context", b.pods.context,
                 "kubeconfig context of the cluster KFP runs on: read the runs' pods (scheduling, "
                 "image pull, start, readiness) through kubectl, see docs/KUBERNETES.md");
  cmd.add_option("--kube-namespace", b.pods.namespace_,
                 "namespace of the runs' pods (default: --namespace, else kubeflow)");
  cmd.add_option("--repeat", b.repeat,
                 "run the scenario file N times, one repetition after the other; writes "
                 "OUT/rep-K/ per repetition and their exact merge to OUT (compare tests over "
                 "the repetitions)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd.add_option("--metrics-listen", b.metrics_listen,
                 "serve live Prometheus metrics of the run on HOST:PORT/metrics, e.g. "
                 "127.0.0.1:9464 (dashboard: deploy/grafana/)");
  cmd.add_option("--notify", b.finish.notify,
                 "POST a JSON summary (Slack-compatible `text`) to this URL when a threshold "
                 "fails");
  cmd.add_option("--junit", b.finish.junit,
                 "also write JUnit XML here (one testcase per threshold, the caveats as "
                 "properties), as report --junit does");
  cmd.add_flag("--no-cache", f.no_cache,
               "turn KFP's caching off for every scenario (as a scenario's \"cache\": false "
               "does): no run is answered from the cache");
}

// The flags as one request to the harness (harness/run_scenario_file.h),
// with the live status line beside it.
int RunScenarioFile(const RunFlags& f) {
  harness::RunRequest request;
  request.scenario = f.scenario;
  request.load.time_scale = f.time_scale;
  request.load.cache = !f.no_cache;
  for (const auto& d : f.pipeline_dirs) request.load.pipeline_dirs.emplace_back(d);
  request.target = f.target.options;
  if (Status s = f.target.backend.Apply(request.target.embedded.backend); !s.ok()) {
    return Fail(s.error().message);
  }
  request.executor = f.target.backend.executor;
  request.shard = f.shard;
  request.out = f.out;
  request.benchmark = f.benchmark;
  auto status = std::make_shared<StatusLine>(f.quiet, stderr, isatty(fileno(stderr)) != 0);
  // Before any thread logs (the embedded backend starts with the
  // session): log lines then go above the status line.
  for (auto& sink : spdlog::default_logger()->sinks()) sink = status->Wrap(sink);
  request.benchmark.on_progress = [status](const results::Progress& p) { status->Show(p); };
  request.benchmark.on_pass_end = [status] { status->Done(); };
  request.benchmark.harness.interrupted = request.benchmark.finish.interrupted = &g_interrupted;
  request.benchmark.harness.hurry = &g_hurry;
  request.on_target_open = InstallSignalHandlers;
  auto outcome = harness::RunScenarioFile(request, std::cout);
  if (!outcome.ok()) return Fail(outcome.error().message);
  return ExitCode(*outcome);
}

}  // namespace

Command AddRunCommand(CLI::App& app) {
  auto f = std::make_shared<RunFlags>();
  auto* cmd = app.add_subcommand("run", "run a scenario file against KFP (default: embedded)");
  cmd->add_option("scenario", f->scenario, "scenario file (KFP perf-tests JSON)")->required();
  cmd->add_option("--out", f->out, "results folder (default: results/<timestamp>)");
  cmd->add_option("--pipelines", f->pipeline_dirs, "folder to look for pipeline files in");
  cmd->add_option("--time-scale", f->time_scale, "multiply every time in the file")
      ->check(GreaterThanZero());
  AddLoadFlags(*cmd, f->benchmark);
  f->target.Add(*cmd);
  AddReadingFlags(*cmd, *f);
  return {cmd, [f] { return RunScenarioFile(*f); }};
}

}  // namespace kfpbench::cli
