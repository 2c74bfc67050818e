#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <sstream>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "harness/orchestrate_params.h"
#include "plan/profile.h"
#include "plan/profile_results.h"
#include "plan/profile_run.h"
#include "report/reporter.h"

namespace kfpbench::cli {
namespace {

Status WriteJson(const std::filesystem::path& path, const nlohmann::json& j) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << j.dump(2) << "\n";
  if (!out) return Error{"cannot write " + path.string()};
  return Ok();
}

}  // namespace

Command AddProfileCommand(CLI::App& app) {
  struct Flags {
    std::string pipeline;
    std::vector<std::string> params;
    int repeat = 1;
    std::string node_size;
    std::string headroom = "20%";
    std::string out;
    std::string from_results;
    std::string sample_interval = "100ms";
    std::string timeout = "1h";
  };
  auto f = std::make_shared<Flags>();
  auto* cmd = app.add_subcommand(
      "profile",
      "run a pipeline on the embedded backend without limits, sample each step's CPU and memory, "
      "and recommend requests, limits and jobs per node");
  cmd->add_option("pipeline", f->pipeline,
                  "PIPELINE.yaml (compiled KFP IR); with --from-results, optional: it maps step "
                  "names to executors");
  cmd->add_option("--params", f->params, "pipeline parameter NAME=VALUE (repeatable)");
  cmd->add_option("--repeat", f->repeat, "how many runs to profile")->capture_default_str();
  cmd->add_option("--node-size", f->node_size,
                  "node allocatable CPU,MEMORY, e.g. 16cpu,56Gi: how many of each step fit");
  cmd->add_option("--headroom", f->headroom, "added to p95 (request) and peak (limit)")
      ->capture_default_str();
  cmd->add_option("--out", f->out, "output folder (default: profiles/<timestamp>)");
  cmd->add_option("--from-results", f->from_results,
                  "profile from a results.json (or its folder) whose tasks carry resource "
                  "figures, e.g. from --prometheus on a real cluster, instead of running");
  cmd->add_option("--sample-interval", f->sample_interval, "how often steps are sampled")
      ->capture_default_str();
  cmd->add_option("--timeout", f->timeout, "how long one run may take")->capture_default_str();

  return {
      cmd, [f] {
        plan::ProfileOptions profile;
        // More than 100% is allowed: a headroom, not a share.
        auto headroom = ParsePercent(f->headroom, std::numeric_limits<double>::infinity());
        if (!headroom.ok()) return Fail("--headroom: " + headroom.error().message);
        profile.headroom = *headroom;
        if (!f->node_size.empty()) {
          auto node = plan::ParseNodeSize(f->node_size);
          if (!node.ok()) return Fail(node.error().message);
          profile.node = *node;
          profile.node_text = f->node_size;
        }
        if (f->repeat < 1) return Fail("--repeat: must be at least 1");
        auto params = harness::SplitAssignments(f->params);
        if (!params.ok()) return Fail("--params: " + params.error().message);
        auto interval = ParseDuration(f->sample_interval);
        if (!interval.ok() || *interval < std::chrono::milliseconds(10)) {
          return Fail("--sample-interval: expected a duration of at least 10ms, such as 100ms");
        }
        auto timeout = ParseDuration(f->timeout);
        if (!timeout.ok() || *timeout <= Duration::zero()) {
          return Fail("--timeout: expected a positive duration such as 30m");
        }
        if (f->pipeline.empty() && f->from_results.empty()) {
          return Fail("give a PIPELINE.yaml to run, or --from-results RESULTS");
        }

        std::filesystem::path out_dir = f->out;
        if (out_dir.empty()) {
          auto now = std::chrono::floor<std::chrono::seconds>(WallClock::now());
          out_dir = "profiles/" + fmt::format("{:%Y%m%d-%H%M%S}", now);
        }

        plan::ProfileReport report;
        std::optional<plan::ProfileRun> run;
        if (!f->from_results.empty()) {
          std::optional<ir::PipelineSpec> spec;
          if (!f->pipeline.empty()) {
            std::ifstream in(f->pipeline, std::ios::binary);
            std::stringstream text;
            text << in.rdbuf();
            if (!in) return Fail("cannot read pipeline file " + f->pipeline);
            auto parsed = ir::ParsePipelineSpec(text.str());
            if (!parsed.ok()) return Fail(f->pipeline + ": " + parsed.error().message);
            spec = std::move(*parsed);
          }
          auto r = plan::ProfileFromResultsFile(f->from_results, spec ? &*spec : nullptr, profile);
          if (!r.ok()) return Fail(r.error().message);
          report = std::move(*r);
        } else {
          plan::ProfileRunOptions options;
          options.pipeline_path = f->pipeline;
          options.params = *params;
          options.repeats = f->repeat;
          options.sample_interval = *interval;
          options.run_timeout = *timeout;
          options.profile = profile;
          InstallSignalHandlers();
          options.interrupted = &g_interrupted;
          auto r = plan::ProfileOnEmbeddedBackend(options);
          if (!r.ok()) {
            return Fail(r.error().message, r.error().BadInput() ? kExitBadInput : kExitFailed);
          }
          report = r->report;
          run = std::move(*r);
        }

        std::error_code ec;
        std::filesystem::create_directories(out_dir, ec);
        if (ec) {
          return Fail(fmt::format("--out: cannot create {}: {}", out_dir.string(), ec.message()));
        }
        std::cout << plan::Describe(report);
        if (Status s = WriteJson(out_dir / "profile.json", plan::ToJson(report)); !s.ok()) {
          return Fail(s.error().message, kExitFailed);
        }
        std::cout << "\nprofile:  " << (out_dir / "profile.json").string() << "\n";
        if (run) {
          auto results_path = out_dir / "results.json";
          // Each task's figures go beside its timing, so `--from-results` and
          // other tools read them like a cluster's.
          plan::AnnotateResults(run->results.runs, run->executions);
          if (Status s = report::JsonReporter(results_path).Report(run->results); !s.ok()) {
            return Fail(s.error().message, kExitFailed);
          }
          auto sized_path = out_dir / "pipeline-sized.json";
          if (Status s = WriteJson(sized_path, run->sized_pipeline); !s.ok()) {
            return Fail(s.error().message, kExitFailed);
          }
          std::cout << "runs:     " << results_path.string() << " (kfpbench calibrate reads it)\n"
                    << "sized:    " << sized_path.string()
                    << " (the pipeline with these requests and limits, for simulate/plan)\n";
        }
        return kExitOk;
      }};
}

}  // namespace kfpbench::cli
