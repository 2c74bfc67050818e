#include "cli/target_flags.h"

#include "cli/common.h"

namespace kfpbench::cli {

void TargetFlags::Add(CLI::App& cmd) {
  cmd.add_option("--host", options.host,
                 "KFP API server URL, e.g. http://localhost:8888 (default: start the embedded "
                 "backend on a loopback port)");
  cmd.add_option("--namespace", options.namespace_, "KFP namespace (multi-user deployments)");
  cmd.add_option("--token", options.token, "bearer token (prefer --token-file)");
  cmd.add_option("--token-file", options.token_file, "file holding a bearer token");
  cmd.add_option("--header", options.headers,
                 "extra request header K:V (repeatable; values are treated as secrets)");
  cmd.add_option("--cookie", options.cookie, "Cookie header value, e.g. authservice_session=...");
  cmd.add_option("--ca-file", options.ca_file,
                 "https: trust the CA certificates in this PEM file instead of the system's");
  cmd.add_flag("--insecure", options.insecure, "https: do not verify the server's certificate");
  AddDurationOption(cmd, "--request-timeout", options.request_timeout,
                    "how long one API call may wait for its answer before it counts as an error");
  cmd.add_option("--api", options.api,
                 "KFP API version: v2beta1 (default) or v1beta1 (older servers)");
  cmd.add_option("--config", options.config_path,
                 "targets file (default: ./kfpbench.yaml if present)");
  cmd.add_option("--target", options.target, "a target named in the config file");
  cmd.add_flag("--allow-file-credentials", options.allow_file_credentials,
               "send the token_file a scenario's \"target\" or the config's default_target names "
               "to its host without confirming the target with --target or --host");
  backend.Add(cmd);
}

Result<harness::TargetOptions> TargetFlags::Resolve(const nlohmann::json& scenario_target,
                                                    const std::string& scenario_path) const {
  harness::TargetOptions o = options;
  if (Status s = backend.Apply(o.embedded.backend); !s.ok()) return s.error();
  return harness::ResolveTarget(std::move(o), scenario_target, scenario_path);
}

}  // namespace kfpbench::cli
