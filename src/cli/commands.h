#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "server/backend.h"

namespace kfpbench::cli {

// A subcommand: its flags live on `app`; `run` executes it after parsing and
// returns the exit code.
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

// Options of the embedded backend, shared by `serve` and `run`.
struct BackendFlags {
  std::string executor = "process";
  std::vector<std::string> stub_durations;
  std::string artifact_root;
  std::string package_root;
  int nodes = 0;
  std::string node_cpu;
  std::string node_memory;

  void Add(CLI::App& app);
  // Fills `out`; a bad value is an Error naming the flag.
  Status Apply(server::BackendOptions& out) const;
  // Without --host (`url` empty), starts the embedded backend on a loopback
  // port and sets `url` to it; otherwise starts nothing and returns null.
  Result<std::unique_ptr<server::ApiServer>> StartUnlessHost(std::string& url) const;
};

Command AddServeCommand(CLI::App& app);
Command AddRunCommand(CLI::App& app);
Command AddStepCommand(CLI::App& app);
Command AddValidateCommand(CLI::App& app);

}  // namespace kfpbench::cli
