// A Session owns the target a benchmark talks to: the embedded backend (unless
// a host is named), the HTTP client with its TLS and auth, the recorder every
// call is measured into, and the kfp::Client. Every command that talks to KFP
// (run, orchestrate, profile) opens one the same way, so a flag works for all
// of them and a token file is read one way.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/harness.h"
#include "harness/target_config.h"
#include "http/client.h"
#include "kfp/client.h"
#include "metrics/recorder.h"
#include "results/results.h"
#include "server/backend.h"
#include "util/result.h"

namespace kfpbench::harness {

// Where to run and how to authenticate. Empty fields are filled from the
// target chosen (first found wins): `host`; `target` in the config file; the
// scenario file's own "target"; the config's default_target; the embedded
// backend.
struct TargetOptions {
  std::string host;
  std::string namespace_;
  std::string token;
  std::string token_file;
  std::vector<std::string> headers;  // "Name: value", values are secrets
  std::string cookie;
  std::string ca_file;
  bool insecure = false;
  // How long one call may wait for its answer before it is an error.
  Duration request_timeout = std::chrono::seconds(60);
  std::string api;          // v2beta1 or v1beta1; empty: the target's
  std::string config_path;  // kfpbench.yaml; empty: ./kfpbench.yaml when present
  std::string target;       // a target named in the config
  // Send the token_file a scenario's "target" or the config's default_target
  // names without --target or --host naming it (ResolveTarget).
  bool allow_file_credentials = false;
  server::ServeOptions embedded;  // the embedded backend, when no host is named
  // Filled by ResolveTarget: where the target came from ("--host", "--target
  // prod in kfpbench.yaml", "default_target prod in kfpbench.yaml", the
  // scenario file's "target", the embedded backend), said before any load
  // and kept in results.json: a config file must never choose a target
  // silently.
  std::string origin;
};

// The target the options and the scenario file's "target" (may be empty)
// choose, with the options' own fields taking precedence. Errors name the
// flag or file at fault.
Result<TargetOptions> ResolveTarget(TargetOptions options, const nlohmann::json& scenario_target,
                                    const std::string& scenario_path);

// Whether two target URLs name one server (scheme, host, port, base path).
bool SameHost(std::string_view a, std::string_view b);

class Session {
 public:
  // Starts the embedded backend when no host is named, reads the token file,
  // registers every secret for redaction and builds the clients. Nothing is
  // sent yet. Errors are bad input (unreadable token or CA file, bad URL,
  // header or API version) or an embedded backend that cannot start.
  static Result<std::unique_ptr<Session>> Open(const TargetOptions& options);
  ~Session();

  kfp::Client& client() { return *client_; }
  metrics::Recorder& recorder() { return recorder_; }
  const std::string& url() const { return url_; }
  bool embedded() const { return server_ != nullptr; }
  const TargetOptions& options() const { return options_; }
  // Once set, the target's calls in flight end and new ones fail (see
  // http::ClientOptions::cancel); the harness sets and clears it.
  std::atomic<bool>& cancel_calls() { return cancel_calls_; }
  // Requests the client sent a second time (http::Client::retries).
  uint64_t resent_requests() const { return http_.retries(); }

  // GetHealthz: an Error when the target cannot be used at all (nothing
  // listening, plain http to an https port, refused credentials); any other
  // failure is a warning and the benchmark goes on. Fills what target() says.
  Status CheckReachable();
  // What results.json says of the target.
  results::TargetInfo target() const;

  // An HTTP client to another service of the same deployment (Prometheus),
  // with the target's TLS settings.
  std::unique_ptr<http::Client> ClientFor(const http::Url& base) const;

 private:
  Session(TargetOptions options, std::unique_ptr<server::ApiServer> server, std::string url,
          http::ClientOptions client_options, kfp::ClientConfig config);

  TargetOptions options_;
  std::atomic<bool> cancel_calls_{false};  // before http_, which watches it
  std::unique_ptr<server::ApiServer> server_;
  std::string url_;
  http::Client http_;
  metrics::Recorder recorder_;
  CallRecorder observer_;
  std::unique_ptr<kfp::Client> client_;
  kfp::ClientConfig config_;
  nlohmann::json healthz_;
};

}  // namespace kfpbench::harness
