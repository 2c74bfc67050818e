#include <filesystem>
#include <iostream>
#include <limits>
#include <memory>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "harness/orchestrate_params.h"
#include "plan/profile.h"
#include "plan/profile_folder.h"

namespace kfpbench::cli {
namespace {

struct ProfileFlags {
  std::string pipeline;
  std::vector<std::string> params;
  int repeat = 1;
  std::string node_size;
  std::string headroom = "20%";
  std::string out;
  std::string from_results;
  Duration sample_interval = std::chrono::milliseconds(100);
  Duration timeout = std::chrono::hours(1);
};

// Checks the flags, profiles (by running the pipeline or from a results.json)
// and says where the files went.
int Profile(const ProfileFlags& f) {
  plan::ProfileOptions profile;
  // More than 100% is allowed: a headroom, not a share.
  auto headroom = ParsePercent(f.headroom, std::numeric_limits<double>::infinity());
  if (!headroom.ok()) return Fail("--headroom: " + headroom.error().message);
  profile.headroom = *headroom;
  if (!f.node_size.empty()) {
    auto node = plan::ParseNodeSize(f.node_size);
    if (!node.ok()) return Fail(node.error().message);
    profile.node = *node;
    profile.node_text = f.node_size;
  }
  if (f.repeat < 1) return Fail("--repeat: must be at least 1");
  auto params = harness::SplitAssignments(f.params);
  if (!params.ok()) return Fail("--params: " + params.error().message);
  if (f.pipeline.empty() && f.from_results.empty()) {
    return Fail("give a PIPELINE.yaml to run, or --from-results RESULTS");
  }

  plan::ProfileRequest request;
  request.from_results = f.from_results;
  request.run.pipeline_path = f.pipeline;
  request.run.params = *params;
  request.run.repeats = f.repeat;
  request.run.sample_interval = f.sample_interval;
  request.run.run_timeout = f.timeout;
  request.run.profile = profile;
  request.out = f.out;
  if (request.out.empty()) {
    auto now = std::chrono::floor<std::chrono::seconds>(WallClock::now());
    request.out = "profiles/" + fmt::format("{:%Y%m%d-%H%M%S}", now);
  }
  if (f.from_results.empty()) {
    InstallSignalHandlers();
    request.run.interrupted = &g_interrupted;
  }
  auto folder = plan::ProfileToFolder(
      request, [](const plan::ProfileReport& report) { std::cout << plan::Describe(report); });
  if (!folder.ok()) {
    return Fail(folder.error().message, folder.error().BadInput() ? kExitBadInput : kExitFailed);
  }
  std::cout << "\nprofile:  " << folder->profile.string() << "\n";
  if (!folder->results.empty()) {
    std::cout << "runs:     " << folder->results.string() << " (kfpbench calibrate reads it)\n"
              << "sized:    " << folder->sized.string()
              << " (the pipeline with these requests and limits, for simulate/plan)\n";
  }
  return kExitOk;
}

}  // namespace

Command AddProfileCommand(CLI::App& app) {
  auto f = std::make_shared<ProfileFlags>();
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
  AddPositiveDurationOption(*cmd, "--sample-interval", f->sample_interval,
                            "how often steps are sampled", std::chrono::milliseconds(10));
  AddPositiveDurationOption(*cmd, "--timeout", f->timeout, "how long one run may take");

  return {cmd, [f] { return Profile(*f); }};
}

}  // namespace kfpbench::cli
