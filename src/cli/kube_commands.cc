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
#include "harness/orchestrate.h"
#include "harness/preflight.h"
#include "kube/driver.h"
#include "kube/images.h"
#include "kube/job_config.h"
#include "kube/job_files.h"
#include "kube/job_results.h"
#include "kube/job_runner.h"
#include "kube/kubectl_driver.h"
#include "kube/loadgen.h"
#include "kube/manifest.h"
#include "report/job_report.h"
#include "util/files.h"
#include "util/time.h"

namespace kfpbench::cli {
namespace {

struct JobFlags {
  std::string config;
  std::vector<std::string> set;
  std::string image;  // overrides the config's `image:`
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
  if (!flags.image.empty()) config->image = flags.image;
  for (const auto& s : flags.set) {
    auto st = kube::SetParameter(*config, s);
    if (!st.ok()) return st.error();
  }
  return config;
}

// On stderr, beside the manifests: a cluster cannot pull the repository's placeholder.
void NoteUnpublishedImage(const std::string& command, const kube::JobConfig& config) {
  if (!kube::IsUnpublishedImage(config.image)) return;
  std::cerr << command << ": " << config.image
            << " is published nowhere, so no node can pull it; build the Dockerfile's image, "
               "push it where the nodes pull from and pass --image (docs/KUBERNETES.md)\n";
}

int Render(const JobFlags& flags) {
  auto config = Load(flags);
  if (!config.ok()) return Fail(config.error().message);
  NoteUnpublishedImage("job render", *config);
  // A cluster's pods, not this machine's: the files {{config_dir}} names go
  // in a ConfigMap printed first.
  auto cluster = kube::PrepareClusterJob(*config);
  if (!cluster.ok()) return Fail(flags.config + ": " + cluster.error().message);
  bool first = true;
  if (cluster->config_map) {
    std::cout << kube::ToYaml(*cluster->config_map);
    first = false;
  }
  auto points = kube::ExpandSweep(*config);
  for (const auto& point : points) {
    auto doc = kube::RenderClusterManifest(*config, *cluster, point);
    if (!doc.ok()) return Fail(flags.config + ": " + point.job_name + ": " + doc.error().message);
    // Applied together, unsuspended points would run at once and measure
    // each other: every one waits to be resumed, in sweep order.
    kube::Suspend(*doc);
    if (!first) std::cout << "---\n";
    first = false;
    std::cout << kube::ToYaml(*doc);
  }
  const std::string resource = kube::KindInfo(config->kind).resource;
  std::string names;
  for (const auto& point : points) names += (names.empty() ? "" : " ") + point.job_name;
  const std::string path = config->kind == kube::JobKind::kJob
                               ? "{\"spec\":{\"suspend\":false}}"
                               : "{\"spec\":{\"runPolicy\":{\"suspend\":false}}}";
  std::cerr << fmt::format(
      "job render: {} sweep point(s), each suspended; after kubectl apply, resume one at a time "
      "(or let `kfpbench job --driver kubernetes` run them in turn):\n"
      "  for j in {}; do kubectl patch {} $j -n {} --type=merge -p '{}'; kubectl wait {}/$j -n "
      "{} --for=condition={} --timeout={}s; done\n",
      points.size(), names, resource, config->namespace_, path, resource, config->namespace_,
      config->kind == kube::JobKind::kJob ? "complete" : "succeeded", config->timeout_seconds);
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
    NoteUnpublishedImage("job", *config);
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
  cmd->add_option("--image", flags->image,
                  "image the pods run instead of the config's `image:` (kubernetes driver)");
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
  render->add_option("--image", render_flags->image,
                     "image the pods run instead of the config's `image:`");
  return {cmd, [cmd, render, flags, render_flags]() -> int {
            if (render->parsed()) return Render(*render_flags);
            if (flags->config.empty()) {
              std::cerr << cmd->help();
              return kExitBadInput;
            }
            return RunJobs(*flags);
          }};
}

namespace {

struct LoadgenFlags {
  kube::LoadgenOptions options;
  std::string scenario;
  std::vector<std::string> pipeline_dirs;
  std::string token_file;
  std::string ca_file;
  std::string start_at = "+2m";
};

// "+2m": that long after now; else an RFC 3339 instant.
Result<WallTime> ParseStartAt(const std::string& text, WallTime now) {
  if (!text.empty() && text.front() == '+') {
    auto d = ParseDuration(std::string_view(text).substr(1));
    if (!d.ok()) return Error{"--start-at: " + d.error().message};
    return now + *d;
  }
  auto t = ParseRfc3339(text);
  if (!t.ok()) {
    return Error{"--start-at: expected +DURATION (e.g. +2m) or an RFC 3339 time (got '" + text +
                 "')"};
  }
  if (*t <= now) return Error{"--start-at: " + text + " has passed; the shards would start late"};
  return t;
}

// Every file the scenario names, as the harness found it here.
Result<std::vector<kube::NamedFile>> NamedFiles(const LoadgenFlags& f) {
  harness::LoadOptions load;
  for (const auto& d : f.pipeline_dirs) load.pipeline_dirs.emplace_back(d);
  // The shards load --host, a KFP that runs the steps in their images.
  harness::PreflightOptions preflight;
  preflight.remote_target = true;
  preflight.image = f.options.image;  // the shipped steps are pointed at it
  auto file = harness::LoadCheckedScenarioFile(
      f.scenario, load, "0/" + std::to_string(std::max(1, f.options.shards)), preflight);
  if (!file.ok()) return file.error();
  for (const char* key : {"token_file", "ca_file"}) {
    if (file->target.contains(key) &&
        !(key == std::string("token_file") && !f.token_file.empty())) {
      return Error{fmt::format(
          "{}: target.{} names a file on this machine, which no pod has{}", f.scenario, key,
          key == std::string("token_file") ? "; pass --token-file to ship it as a Secret"
                                           : "; drop it, or run the shards where it exists")};
    }
  }
  std::vector<kube::NamedFile> named;
  const auto home = std::filesystem::path(f.scenario).parent_path();
  for (const auto& s : file->scenarios) {
    std::string at = fmt::format("[{}]", s.index);
    if (!s.pipeline_path.empty()) {
      kube::NamedFile n{at + ".pipelineFileName", s.pipeline_file_name, s.pipeline_path, -1};
      for (size_t k = 0; k < load.pipeline_dirs.size(); ++k) {
        if (s.pipeline_path == load.pipeline_dirs[k] / s.pipeline_file_name &&
            s.pipeline_path != home / s.pipeline_file_name) {
          n.pipeline_dir = static_cast<int>(k);
          break;
        }
      }
      named.push_back(n);
    }
    if (const auto* plan = dynamic_cast<const harness::OrchestratePlan*>(s.mode_data.get())) {
      named.push_back({at + ".csv", s.source.value("csv", ""), plan->csv_path, -1});
    }
  }
  return named;
}

int RenderLoadgenSet(LoadgenFlags& f) {
  auto& o = f.options;
  auto start = ParseStartAt(f.start_at, WallClock::now());
  if (!start.ok()) return Fail(start.error().message);
  o.start_at = *start;
  if (!f.token_file.empty()) {
    // Read only to refuse an empty one early; its text goes nowhere.
    auto token = ReadFile(f.token_file);
    if (!token.ok()) return Fail("--token-file: " + token.error().message);
    if (token->find_first_not_of(" \t\r\n") == std::string::npos) {
      return Fail("--token-file: " + f.token_file + " is empty");
    }
    if (o.token_secret.empty()) o.token_secret = o.name + "-token";
  }
  auto named = NamedFiles(f);
  if (!named.ok()) return Fail(named.error().message);
  if (auto st = kube::ShipScenario(f.scenario, *named, o); !st.ok()) {
    return Fail(st.error().message);
  }
  if (!f.ca_file.empty()) {
    if (auto st = kube::ShipCaFile(f.ca_file, o); !st.ok()) return Fail(st.error().message);
  }
  auto docs = kube::RenderLoadgen(o);
  if (!docs.ok()) return Fail(docs.error().message);
  for (size_t i = 0; i < docs->size(); ++i) {
    if (i > 0) std::cout << "---\n";
    std::cout << kube::ToYaml((*docs)[i]);
  }
  // Notes for the person applying it, beside the manifests, not in them.
  std::cerr << fmt::format(
      "kube loadgen: {} shards start at {}; {} file(s) shipped in ConfigMap {}-files\n", o.shards,
      FormatRfc3339(o.start_at), o.files.size(), o.name);
  if (!f.token_file.empty()) {
    std::cerr << "kube loadgen: create the token Secret first: "
              << kube::TokenSecretCommand(o, f.token_file) << "\n";
  } else if (!o.token_secret.empty()) {
    std::cerr << "kube loadgen: the pods read the token from Secret " << o.token_secret
              << " (key token)\n";
  }
  if (o.step_images_pointed > 0) {
    std::cerr << fmt::format(
        "kube loadgen: {} pipeline step(s) named {} (published nowhere); the shipped "
        "pipelines run them on {}\n",
        o.step_images_pointed, kube::kUnpublishedImage, o.image);
  }
  return kExitOk;
}

}  // namespace

Command AddKubeCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("kube", "Kubernetes helpers (docs/KUBERNETES.md)");
  cmd->require_subcommand(1);
  auto f = std::make_shared<LoadgenFlags>();
  auto& o = f->options;
  auto* loadgen = cmd->add_subcommand(
      "loadgen",
      "print the ConfigMap and Indexed Job that run SCENARIO in N shards (kubectl apply -f -)");
  loadgen->add_option("scenario", f->scenario, "scenario file")
      ->required()
      ->check(CLI::ExistingFile);
  loadgen->add_option("--shards", o.shards, "pods, each running shard i/N")->required();
  loadgen
      ->add_option("--host", o.host,
                   "KFP API the shards load, e.g. http://ml-pipeline.kubeflow:8888")
      ->required();
  loadgen->add_option("--pipelines", f->pipeline_dirs,
                      "folder to look for pipeline files in (as run does); what is found is "
                      "shipped");
  loadgen
      ->add_option("--token-file", f->token_file,
                   "bearer token for KFP: the pods read it from Secret NAME-token, created "
                   "from this file with the kubectl command printed on stderr")
      ->check(CLI::ExistingFile);
  loadgen->add_option("--token-secret", o.token_secret,
                      "an existing Secret whose key `token` holds the bearer token");
  loadgen
      ->add_option("--start-at", f->start_at,
                   "when every shard starts: +DURATION from now or an RFC 3339 time; a pod "
                   "arriving later exits 3")
      ->capture_default_str();
  loadgen->add_option("--cpu", o.cpu, "CPU per load pod (request = limit)")->capture_default_str();
  loadgen->add_option("--memory", o.memory, "memory per load pod (request = limit)")
      ->capture_default_str();
  loadgen
      ->add_option("--storage", o.storage,
                   "size limit of each shard's results (emptyDir), requested as ephemeral-storage")
      ->capture_default_str();
  AddDurationOption(*loadgen, "--collect-within", o.collect_within,
                    "how long a finished shard keeps its results for kubectl cp");
  loadgen
      ->add_option("--image", o.image,
                   "image with kfpbench, built from the Dockerfile and pushed where the cluster "
                   "pulls from (none is published); the shipped pipelines' kfpbench steps run it")
      ->required();
  loadgen->add_option("--name", o.name, "name of the Job")->capture_default_str();
  // --namespace is KFP's namespace, as in every other command; the Job's own
  // is --kube-namespace, as in `run`.
  loadgen->add_option("--kube-namespace", o.kube_namespace, "Kubernetes namespace of the Job")
      ->capture_default_str();
  loadgen->add_option("--namespace", o.kfp_namespace,
                      "KFP namespace the shards use (multi-user deployments)");
  loadgen
      ->add_option("--ca-file", f->ca_file,
                   "CA certificate verifying KFP's https, shipped to the shards")
      ->check(CLI::ExistingFile);
  loadgen->add_option("--time-scale", o.time_scale, "each shard's run --time-scale")
      ->capture_default_str();
  return {cmd, [f]() -> int { return RenderLoadgenSet(*f); }};
}

}  // namespace kfpbench::cli
