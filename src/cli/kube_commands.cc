#include "cli/commands.h"

#include <fmt/format.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/cli.h"
#include "cli/common.h"
#include "kube/driver.h"
#include "kube/job_config.h"
#include "kube/job_results.h"
#include "kube/job_runner.h"
#include "kube/kubectl_driver.h"
#include "kube/loadgen.h"
#include "kube/manifest.h"
#include "report/job_report.h"

namespace kfpbench::cli {
namespace {

struct JobFlags {
  std::string config;
  std::vector<std::string> set;
  std::string driver = "local";
  std::string out = "job-results";
  bool keep = false;
  std::string context;
  std::string kubectl = "kubectl";
  Duration poll_interval = std::chrono::seconds(2);
};

Result<kube::JobConfig> Load(const JobFlags& flags) {
  auto config = kube::LoadJobConfig(flags.config);
  if (!config.ok()) return config.error();
  for (const auto& s : flags.set) {
    auto st = kube::SetParameter(*config, s);
    if (!st.ok()) return st.error();
  }
  return config;
}

int Render(const JobFlags& flags) {
  auto config = Load(flags);
  if (!config.ok()) return Fail(config.error().message);
  bool first = true;
  for (const auto& point : kube::ExpandSweep(*config)) {
    auto doc = kube::RenderManifest(*config, point);
    if (!doc.ok()) return Fail(flags.config + ": " + point.job_name + ": " + doc.error().message);
    if (!first) std::cout << "---\n";
    first = false;
    std::cout << kube::ToYaml(*doc);
  }
  return kExitOk;
}

int RunJobs(const JobFlags& flags) {
  auto config = Load(flags);
  if (!config.ok()) return Fail(config.error().message);
  InstallSignalHandlers();
  std::unique_ptr<kube::Driver> driver;
  if (flags.driver == "local") {
    kube::LocalDriverOptions o;
    o.keep = flags.keep;
    o.interrupted = &g_interrupted;
    driver = std::make_unique<kube::LocalDriver>(o);
  } else {
    kube::KubectlDriverOptions o;
    o.kubectl = flags.kubectl;
    o.context = flags.context;
    o.poll = std::chrono::duration_cast<std::chrono::milliseconds>(flags.poll_interval);
    o.keep = flags.keep;
    o.interrupted = &g_interrupted;
    driver = std::make_unique<kube::KubectlDriver>(o);
  }
  auto result = kube::RunSweep(*config, *driver, [](const kube::JobRunResult& run) {
    std::string params;
    for (const auto& [k, v] : run.params) params += fmt::format(" {}={}", k, v);
    std::string metrics;
    for (const auto& [k, v] : run.metrics)
      metrics += v ? fmt::format(" {}={:.4g}", k, *v) : fmt::format(" {}=-", k);
    std::cout << fmt::format("{} [{}]{}: {} in {:.1f} s{}\n", run.job_name, run.index, params,
                             run.succeeded ? "Succeeded" : "Failed", run.duration_seconds, metrics);
    if (!run.succeeded) std::cout << "  " << run.error << "\n";
    std::cout.flush();
  });
  if (!result.ok()) return Fail(result.error().message);
  auto dir = std::filesystem::path(flags.out);
  if (auto st = kube::WriteJobResults(*result, dir); !st.ok()) return Fail(st.error().message);
  auto html = report::WriteJobReport(dir / "report.html", kube::ToJson(*result));
  if (!html.ok()) return Fail(html.error().message);
  std::cout << "wrote " << (dir / kube::kJobResultsCsv).string() << ", "
            << (dir / kube::kJobResultsJson).string() << " and " << (dir / "report.html").string()
            << "\n";
  if (g_interrupted) return kExitInterrupted;
  for (const auto& run : result->runs) {
    if (!run.succeeded) return kExitFailed;
  }
  return kExitOk;
}

}  // namespace

Command AddJobCommand(CLI::App& app) {
  auto flags = std::make_shared<JobFlags>();
  auto* cmd = app.add_subcommand("job",
                                 "benchmark ML training jobs (Job, TFJob, PyTorchJob, MPIJob) over "
                                 "a parameter sweep (docs/JOBS.md)");
  cmd->add_option("config", flags->config, "job config (YAML)");
  cmd->add_option("--set", flags->set, "override a parameter's default: key=value (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--driver", flags->driver, "local (processes here) or kubernetes (kubectl)")
      ->check(CLI::IsMember({"local", "kubernetes"}));
  cmd->add_option("--out", flags->out, "folder for results.csv, job_results.json and report.html");
  cmd->add_flag("--keep", flags->keep, "keep logs (local) or the jobs in the cluster (kubernetes)");
  // The names `run` uses for the same ideas; the old ones stay as hidden
  // aliases so that existing scripts keep working.
  cmd->add_option("--kube-context", flags->context, "kubeconfig context (kubernetes driver)");
  cmd->add_option("--context", flags->context)->group("");
  cmd->add_option("--kubectl", flags->kubectl, "kubectl binary (kubernetes driver)");
  AddDurationOption(*cmd, "--poll-interval", flags->poll_interval,
                    "how often to read the job's conditions");
  AddParsedOption(
      *cmd, "--poll-seconds", flags->poll_interval,
      [](std::string_view s) -> Result<Duration> {
        double seconds = 0;
        auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), seconds);
        if (ec != std::errc() || p != s.data() + s.size() || !(seconds > 0)) {
          return Error{"expected a number of seconds above 0"};
        }
        return FromSeconds(seconds);
      },
      "", "", "SECONDS")
      ->group("");
  auto render_flags = std::make_shared<JobFlags>();
  auto* render = cmd->add_subcommand(
      "render", "print the manifest of every sweep point, one YAML document each");
  render->add_option("config", render_flags->config, "job config (YAML)")->required();
  render
      ->add_option("--set", render_flags->set,
                   "override a parameter's default: key=value (repeatable)")
      ->allow_extra_args(false);
  return {cmd, [cmd, render, flags, render_flags]() -> int {
            if (render->parsed()) return Render(*render_flags);
            if (flags->config.empty()) {
              std::cerr << cmd->help();
              return kExitBadInput;
            }
            return RunJobs(*flags);
          }};
}

Command AddKubeCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("kube", "Kubernetes helpers (docs/KUBERNETES.md)");
  cmd->require_subcommand(1);
  auto o = std::make_shared<kube::LoadgenOptions>();
  auto* loadgen = cmd->add_subcommand(
      "loadgen", "print an Indexed Job that runs SCENARIO in N shards (kubectl apply -f -)");
  loadgen->add_option("scenario", o->scenario_file, "scenario file")
      ->required()
      ->check(CLI::ExistingFile);
  loadgen->add_option("--shards", o->shards, "pods, each running shard i/N")->required();
  loadgen
      ->add_option("--host", o->host,
                   "KFP API the shards load, e.g. http://ml-pipeline.kubeflow:8888")
      ->required();
  loadgen->add_option("--image", o->image, "image with kfpbench (see Dockerfile)")
      ->capture_default_str();
  loadgen->add_option("--name", o->name, "name of the Job")->capture_default_str();
  loadgen->add_option("--namespace", o->namespace_, "namespace")->capture_default_str();
  loadgen->add_option("--results-claim", o->results_claim,
                      "PVC for results (default: NAME-results)");
  return {cmd, [o]() -> int {
            std::ifstream in(o->scenario_file);
            std::stringstream ss;
            ss << in.rdbuf();
            o->scenario_text = ss.str();
            auto docs = kube::RenderLoadgen(*o);
            if (!docs.ok()) return Fail(docs.error().message);
            for (size_t i = 0; i < docs->size(); ++i) {
              if (i > 0) std::cout << "---\n";
              std::cout << kube::ToYaml((*docs)[i]);
            }
            return kExitOk;
          }};
}

}  // namespace kfpbench::cli
