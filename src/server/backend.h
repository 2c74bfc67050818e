// The embedded KFP-compatible backend: the v2beta1 REST API over the store and
// the pipeline engine. `kfpbench serve` runs it alone; `kfpbench run` without
// --host runs it in-process on an ephemeral loopback port.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/resources.h"
#include "http/message.h"
#include "http/router.h"
#include "server/auth.h"
#include "util/result.h"
#include "util/time.h"

namespace kfpbench::server {

// One answered request, as the access log keeps it.
struct AccessRecord {
  std::string user;        // the authenticated user (multi-user mode); empty: none
  std::string namespace_;  // the namespace the request reached; empty: none or unknown
  std::string route;       // the route's name ("ListRuns"), or NotFound, Unauthenticated, ...
  int status = 0;
  double seconds = 0;
};

// "user=alice namespace=team-a route=ListRuns status=403 ms=1.2", each
// value with control characters, spaces and quotes replaced by '?' (a user
// header is the caller's text) and any registered secret redacted.
std::string AccessLogLine(const AccessRecord& record);

struct BackendOptions {
  std::string db_path;              // empty: in-memory
  std::filesystem::path work_root;  // empty: a fresh temporary directory, removed at exit
  // package_url may name local files under this folder only; empty: none at
  // all (a server that runs as root must not read any file a client names).
  std::filesystem::path package_root;
  std::vector<engine::NodeSpec> nodes;      // empty: one node the size of this machine
  std::string executor = "process";         // "process" or "stub"
  std::vector<std::string> stub_durations;  // "exec-x=lognormal:60s:0.3", "constant:1s"
  std::vector<std::string> stub_failures;   // "exec-x=1", "5%"
  // Stub steps upload this much to the artifact store when their time is
  // up ("exec-x=2Gi", "10Mi"), through a link of `artifact_bandwidth` bytes
  // per second shared by every upload (0: no limit): exec::ArtifactStore.
  std::vector<std::string> stub_artifact_bytes;
  double artifact_bandwidth = 0;
  std::string self_binary;  // what a step command "kfpbench" runs; empty: this program
  // cachingOptions.enableCache honoured (the cache lives in the database);
  // false: every task runs, as with KFP's cache server turned off.
  bool cache = true;
  // Who may call (server/auth.h): bearer tokens, multi-user mode. Default:
  // anyone who reaches the port.
  AuthConfig auth;
  // Called once per request after it is answered (serve's access log): who
  // asked, in which namespace, which route, and the status. Never a token or
  // a header's value beyond the user it names. Null: no log.
  std::function<void(const AccessRecord&)> access_log;
};

class Backend {
 public:
  static Result<std::unique_ptr<Backend>> Create(BackendOptions options);
  ~Backend();

  // Answers one API request; thread-safe.
  http::Response Handle(const http::Request& request);
  // Every route the API answers (tests walk them all).
  std::vector<http::Router::RouteInfo> Routes() const;

 private:
  struct Impl;
  explicit Backend(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

struct ServeOptions {
  std::string address = "127.0.0.1";
  uint16_t port = 8888;
  int threads = 2;
  size_t max_body_bytes = 33 * 1024 * 1024;             // larger requests get 413
  Duration request_timeout = std::chrono::seconds(60);  // see http::ServerOptions
  size_t max_connections = 0;                           // 0: from the fd limit
  std::string tls_cert_file;                            // both set: serve https only
  std::string tls_key_file;
  // Off loopback without backend.auth: refused unless this is set, and
  // even then only with the stub executor (server::CheckExposure).
  bool allow_unauthenticated = false;
  // The process executor under --multi-user or off loopback (CheckExposure).
  bool allow_host_steps = false;
  BackendOptions backend;
};

// The backend behind an HTTP server.
class ApiServer {
 public:
  static Result<std::unique_ptr<ApiServer>> Start(ServeOptions options);
  ~ApiServer();
  uint16_t port() const;
  std::string url() const;  // http://address:port, or https:// with a certificate
  // What to tell the operator loudly (serving off loopback unauthenticated);
  // empty when nothing.
  const std::string& warning() const;
  void Stop();

 private:
  struct Impl;
  explicit ApiServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kfpbench::server
