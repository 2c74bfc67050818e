#include <unistd.h>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "exec/artifact_store.h"
#include "ir/quantity.h"
#include "sim/config.h"
#include "util/time.h"

namespace kfpbench::cli {
namespace {

// A node size of zero would hold no step: refused where the flag is read.
template <typename Parse>
auto AboveZero(Parse parse) {
  return [parse](std::string_view text) -> decltype(parse(text)) {
    auto v = parse(text);
    if (v.ok() && !(*v > 0)) return Error{"must be above zero, got " + std::string(text)};
    return v;
  };
}

}  // namespace

void BackendFlags::Add(CLI::App& app) {
  app.add_option("--executor", executor,
                 "how steps run: process (each step's command on this host, in its own cgroup) "
                 "or stub (timed steps holding their CPU and memory requests). Default: process; "
                 "run chooses stub when a scenario's pipelines cannot run as processes (KFP SDK "
                 "Python components), and says so before the load")
      ->check(CLI::IsMember({"process", "stub"}));
  app.add_option("--stub-duration", stub_durations,
                 "stub step duration, e.g. constant:1s or exec-train=lognormal:60s:0.3");
  app.add_option("--stub-failure", stub_failures,
                 "probability that a stub step fails, e.g. exec-train=5% or 0.01 for every step");
  app.add_option("--stub-artifact-bytes", stub_artifact_bytes,
                 "bytes a stub step uploads to the artifact store when its time is up (the task "
                 "ends when the upload does), e.g. exec-train=2Gi or 10Mi for every step");
  AddParsedOption(app, "--artifact-bandwidth", artifact_bandwidth, exec::ParseBandwidth,
                  "the artifact store's bandwidth, shared equally by the uploads in progress, e.g. "
                  "200Mi (bytes per second; default: no limit): a real limit to measure a shared "
                  "bottleneck with",
                  "", "TEXT");
  app.add_option("--artifact-root", artifact_root,
                 "folder for task work dirs and logs (default: a temporary folder)");
  app.add_option("--package-root", package_root,
                 "let package_url name local files (a path or file:// URL) under this folder; "
                 "off by default, as the server would read any file it can");
  app.add_option("--nodes", nodes, "number of nodes (default: one the size of this machine)")
      ->check(CLI::Range(1, 100000));
  AddParsedOption(app, "--node-cpu", node_cpu, AboveZero(ir::ParseQuantityCpu),
                  "allocatable CPU per node, e.g. 4 or 3500m", "", "TEXT");
  AddParsedOption(app, "--node-memory", node_memory, AboveZero(ir::ParseQuantityMemory),
                  "allocatable memory per node, e.g. 16Gi", "", "TEXT");
  app.add_option("--cluster", cluster_file,
                 "nodes from a cluster file (the simulator's format, docs/CAPACITY.md): each "
                 "pool's initial nodes (else min, else max), with its labels and taints; "
                 "instead of --nodes, --node-cpu and --node-memory");
}

Status BackendFlags::Apply(server::BackendOptions& out) const {
  out.executor = executor.empty() ? "process" : executor;
  out.stub_durations = stub_durations;
  out.stub_failures = stub_failures;
  out.stub_artifact_bytes = stub_artifact_bytes;
  out.artifact_bandwidth = artifact_bandwidth;
  out.work_root = artifact_root;
  out.package_root = package_root;
  if (!cluster_file.empty()) {
    if (nodes != 0 || node_cpu > 0 || node_memory > 0) {
      return Error{
          "--cluster replaces --nodes, --node-cpu and --node-memory: give one or the other"};
    }
    auto cluster = sim::LoadCluster(cluster_file);
    if (!cluster.ok()) return Error{"--cluster: " + cluster.error().message};
    // A fixed cluster: no autoscaler runs here.
    for (const auto& pool : cluster->pools) {
      int count = std::max(pool.initial, pool.min);
      if (count <= 0) count = pool.max;
      for (int i = 0; i < count; ++i) {
        out.nodes.push_back(pool.Node(fmt::format("{}-{}", pool.name, i)));
      }
    }
    if (out.nodes.empty()) return Error{"--cluster: no pool has any node"};
    return Ok();
  }
  if (nodes == 0 && node_cpu == 0 && node_memory == 0) return Ok();
  double cpu = std::thread::hardware_concurrency();
  int64_t memory = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  if (node_cpu > 0) cpu = node_cpu;
  if (node_memory > 0) memory = node_memory;
  for (int i = 0; i < std::max(nodes, 1); ++i) {
    out.nodes.push_back({fmt::format("node-{}", i), cpu, memory});
  }
  return Ok();
}

namespace {

// Bearer tokens and KFP's multi-user mode: who may call, and as whom.
void AddAuthFlags(CLI::App& cmd, server::AuthConfig& auth, server::AuthFiles& auth_files) {
  cmd.add_option("--token-file", auth_files.token_files,
                 "ask every request for a bearer token (Authorization: Bearer TOKEN) from this "
                 "file: one token a line, optionally followed by the user it stands for in "
                 "--multi-user mode (repeatable; tokens are compared in constant time and never "
                 "logged)");
  cmd.add_option("--token-cookie", auth.token_cookie,
                 "also take the bearer token from this cookie, e.g. authservice_session");
  cmd.add_flag("--multi-user", auth.multi_user,
               "KFP's multi-user mode: the user from --user-header, namespaces from "
               "--namespace-policy as the unit of isolation; healthz reports multi_user: true");
  cmd.add_option("--user-header", auth.user_header,
                 "header a trusted proxy names the user in (KFP's KUBEFLOW_USERID_HEADER)")
      ->capture_default_str();
  cmd.add_option("--user-prefix", auth.user_prefix,
                 "prefix of the user header's value, stripped (KFP's KUBEFLOW_USERID_PREFIX, "
                 "e.g. accounts.google.com:); a value without it is refused");
  cmd.add_option("--namespace-policy", auth_files.policy_file,
                 "multi-user mode: the namespaces each user may use, one line per user: USER "
                 "NAMESPACE... (\"*\" for all)");
  cmd.add_option("--shared-namespace", auth.shared_namespace,
                 "multi-user mode: the namespace whose users may create, change and delete "
                 "shared pipelines (KFP's own namespace)")
      ->capture_default_str();
}

// Starts the server and serves until Ctrl-C.
int Serve(server::ServeOptions& options, const BackendFlags& flags,
          const server::AuthFiles& auth_files, const std::string& access_log) {
  if (Status s = flags.Apply(options.backend); !s.ok()) return Fail(s.error().message);
  // One line per request answered, so a denied request leaves a trail.
  std::shared_ptr<std::ostream> log_file;
  if (access_log != "none") {
    std::ostream* to = &std::cerr;
    if (access_log != "-") {
      log_file = std::make_shared<std::ofstream>(access_log, std::ios::app);
      if (!*log_file) return Fail(fmt::format("--access-log: cannot open {}", access_log));
      to = log_file.get();
    }
    auto mutex = std::make_shared<std::mutex>();
    options.backend.access_log = [to, log_file, mutex](const server::AccessRecord& r) {
      std::string line =
          fmt::format("{} access {}\n", FormatRfc3339(std::chrono::system_clock::now()),
                      server::AccessLogLine(r));
      std::lock_guard lock(*mutex);
      *to << line << std::flush;
    };
  }
  if (Status s = server::LoadAuthFiles(auth_files, options.backend.auth); !s.ok()) {
    return Fail(s.error().message);
  }
  if (options.tls_cert_file.empty() != options.tls_key_file.empty()) {
    return Fail("--tls-cert and --tls-key go together");
  }
  InstallSignalHandlers();
  auto server = server::ApiServer::Start(options);
  if (!server.ok()) return Fail(server.error().message);
  if (!(*server)->warning().empty()) {
    std::cerr << "\n*** WARNING: " << (*server)->warning() << " ***\n" << std::endl;
  }
  std::cout << "kfpbench serving the KFP v2beta1 API at " << (*server)->url()
            << "/apis/v2beta1 (Ctrl-C stops)" << std::endl;
  const server::AuthConfig& a = options.backend.auth;
  if (a.enabled()) {
    std::cout << "authentication: "
              << (a.tokens.empty() ? std::string("no bearer token")
                                   : fmt::format("{} bearer token(s)", a.tokens.size()))
              << (a.multi_user ? fmt::format("; multi-user, the user from the {} header, "
                                             "{} user(s) in the namespace policy",
                                             a.user_header, a.policy.size())
                               : std::string())
              << std::endl;
  }
  while (!g_interrupted.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  (*server)->Stop();
  return kExitOk;
}

}  // namespace

Command AddServeCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("serve", "run the embedded KFP-compatible backend");
  auto options = std::make_shared<server::ServeOptions>();
  auto flags = std::make_shared<BackendFlags>();
  cmd->add_option("--address", options->address, "address to listen on")->capture_default_str();
  cmd->add_option("--port", options->port, "port to listen on (0: any free port)")
      ->capture_default_str();
  cmd->add_option("--db", options->backend.db_path,
                  "SQLite database file, WAL mode (default: in memory, lost at exit)");
  cmd->add_option("--threads", options->threads, "HTTP I/O threads")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  AddDurationOption(*cmd, "--request-timeout", options->request_timeout,
                    "how long a connection may take to send a request or take an answer, "
                    "idle keep-alive included, before it is closed");
  cmd->add_option("--max-connections", options->max_connections,
                  "connections open at once; more are answered 503 (default: what the "
                  "file-descriptor limit leaves room for)");
  cmd->add_option("--tls-cert", options->tls_cert_file,
                  "serve https with this PEM certificate (chain); needs --tls-key");
  cmd->add_option("--tls-key", options->tls_key_file, "PEM private key of --tls-cert");
  auto auth_files = std::make_shared<server::AuthFiles>();
  AddAuthFlags(*cmd, options->backend.auth, *auth_files);
  cmd->add_flag("--allow-unauthenticated", options->allow_unauthenticated,
                "serve off loopback without authentication (only with --executor stub): anyone "
                "who reaches the port can use the whole API");
  cmd->add_flag("--allow-host-steps", options->allow_host_steps,
                "let the process executor run steps under --multi-user or off loopback: every "
                "step runs as this server's user on this host and can read its database and "
                "every namespace's runs and files (refused without this flag)");
  auto access_log = std::make_shared<std::string>("-");
  cmd->add_option("--access-log", *access_log,
                  "one line per request (time, user, namespace, route, status, ms; never a "
                  "token): a file to append to, - for stderr, none for no log")
      ->capture_default_str();
  flags->Add(*cmd);
  return {cmd, [options, flags, auth_files, access_log] {
            return Serve(*options, *flags, *auth_files, *access_log);
          }};
}

}  // namespace kfpbench::cli
