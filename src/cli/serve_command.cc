#include <unistd.h>
#include <iostream>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "ir/quantity.h"

namespace kfpbench::cli {

void BackendFlags::Add(CLI::App& app) {
  app.add_option("--executor", executor, "how steps run: process (local processes) or stub")
      ->check(CLI::IsMember({"process", "stub"}));
  app.add_option("--stub-duration", stub_durations,
                 "stub step duration, e.g. constant:1s or exec-train=lognormal:60s:0.3");
  app.add_option("--artifact-root", artifact_root,
                 "folder for task work dirs and logs (default: a temporary folder)");
  app.add_option("--package-root", package_root,
                 "let package_url name local files (a path or file:// URL) under this folder; "
                 "off by default, as the server would read any file it can");
  app.add_option("--nodes", nodes, "number of nodes (default: one the size of this machine)")
      ->check(CLI::Range(1, 100000));
  app.add_option("--node-cpu", node_cpu, "allocatable CPU per node, e.g. 4 or 3500m");
  app.add_option("--node-memory", node_memory, "allocatable memory per node, e.g. 16Gi");
}

Status BackendFlags::Apply(server::BackendOptions& out) const {
  out.executor = executor;
  out.stub_durations = stub_durations;
  out.work_root = artifact_root;
  out.package_root = package_root;
  if (nodes == 0 && node_cpu.empty() && node_memory.empty()) return Ok();
  double cpu = std::thread::hardware_concurrency();
  int64_t memory = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  if (!node_cpu.empty()) {
    auto c = ir::ParseQuantityCpu(node_cpu);
    if (!c.ok()) return Error{"--node-cpu: " + c.error().message};
    cpu = *c;
  }
  if (!node_memory.empty()) {
    auto m = ir::ParseQuantityMemory(node_memory);
    if (!m.ok()) return Error{"--node-memory: " + m.error().message};
    memory = *m;
  }
  for (int i = 0; i < std::max(nodes, 1); ++i) {
    out.nodes.push_back({fmt::format("node-{}", i), cpu, memory});
  }
  return Ok();
}

Result<std::unique_ptr<server::ApiServer>> BackendFlags::StartUnlessHost(std::string& url) const {
  if (!url.empty()) return std::unique_ptr<server::ApiServer>();
  server::ServeOptions so;
  so.port = 0;
  if (Status s = Apply(so.backend); !s.ok()) return s.error();
  auto started = server::ApiServer::Start(so);
  if (!started.ok()) return Error{"cannot start the embedded backend: " + started.error().message};
  url = (*started)->url();
  spdlog::info("embedded KFP backend at {} ({} executor)", url, so.backend.executor);
  return std::move(*started);
}

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
  cmd->add_option("--tls-cert", options->tls_cert_file,
                  "serve https with this PEM certificate (chain); needs --tls-key");
  cmd->add_option("--tls-key", options->tls_key_file, "PEM private key of --tls-cert");
  flags->Add(*cmd);
  return {cmd, [options, flags] {
            if (Status s = flags->Apply(options->backend); !s.ok()) return Fail(s.error().message);
            if (options->tls_cert_file.empty() != options->tls_key_file.empty()) {
              return Fail("--tls-cert and --tls-key go together");
            }
            InstallSignalHandlers();
            auto server = server::ApiServer::Start(*options);
            if (!server.ok()) return Fail(server.error().message);
            std::cout << "kfpbench serving the KFP v2beta1 API at " << (*server)->url()
                      << "/apis/v2beta1 (Ctrl-C stops)" << std::endl;
            while (!g_interrupted.load()) {
              std::this_thread::sleep_for(std::chrono::milliseconds(100));
            }
            (*server)->Stop();
            return kExitOk;
          }};
}

}  // namespace kfpbench::cli
