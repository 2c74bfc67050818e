#include "harness/session.h"

#include <filesystem>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "http/url.h"
#include "util/files.h"
#include "util/secrets.h"

namespace kfpbench::harness {
namespace {

Result<std::string> ReadTokenFile(const std::string& path) {
  auto text = ReadFile(path);
  if (!text.ok()) return Error{"--token-file: " + text.error().message};
  std::string token = *text;
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) {
    token.pop_back();
  }
  if (token.empty()) return Error{"--token-file: " + path + " is empty"};
  return token;
}

}  // namespace

Result<TargetOptions> ResolveTarget(TargetOptions options, const nlohmann::json& scenario_target,
                                    const std::string& scenario_path) {
  TargetConfig config;
  std::string config_path = options.config_path;
  if (config_path.empty() && std::filesystem::exists("kfpbench.yaml")) {
    config_path = "kfpbench.yaml";
  }
  if (!config_path.empty()) {
    auto c = LoadTargetConfig(config_path);
    if (!c.ok()) return c.error();
    config = std::move(*c);
  } else if (!options.target.empty()) {
    return Error{"--target: no config file (pass --config FILE or create kfpbench.yaml)"};
  }
  auto target = SelectTarget(config, options.target);
  if (!target.ok()) return target.error();
  std::string origin;
  if (!options.target.empty()) {
    origin = fmt::format("--target {} in {}", options.target, config_path);
  } else if (scenario_target.is_object() && !scenario_target.empty()) {
    target = ParseScenarioTarget(scenario_target, scenario_path);
    if (!target.ok()) return target.error();
    origin = fmt::format("the \"target\" of {}", scenario_path);
  } else if (!config.default_target.empty()) {
    origin = fmt::format("default_target {} in {}", config.default_target, config_path);
  }
  if (!options.host.empty()) origin = "--host";
  if (options.host.empty() && target->host.empty()) {
    origin = "the embedded backend: no --host, --target, scenario \"target\" or default_target";
  }
  options.origin = std::move(origin);
  // Flags always override the keys of the target chosen.
  if (options.host.empty()) options.host = target->host;
  if (options.namespace_.empty()) options.namespace_ = target->namespace_;
  if (options.token_file.empty() && options.token.empty()) options.token_file = target->token_file;
  if (options.ca_file.empty()) options.ca_file = target->ca_file;
  options.insecure = options.insecure || target->insecure;
  if (options.api.empty()) options.api = target->api_version;
  return options;
}

Session::Session(TargetOptions options, std::unique_ptr<server::ApiServer> server, std::string url,
                 http::ClientOptions client_options, kfp::ClientConfig config)
    : options_(std::move(options)),
      server_(std::move(server)),
      url_(std::move(url)),
      http_([&] {
        client_options.cancel = &cancel_calls_;
        return std::move(client_options);
      }()),
      recorder_(WallClock::now()),
      observer_(recorder_),
      client_(std::make_unique<kfp::Client>(http_, config, &observer_)),
      config_(std::move(config)) {}

Session::~Session() = default;

Result<std::unique_ptr<Session>> Session::Open(const TargetOptions& options) {
  auto api = kfp::ParseApiVersion(options.api.empty() ? "v2beta1" : options.api);
  if (!api.ok()) return Error{"--api: " + api.error().message};
  if (!options.ca_file.empty() && !std::filesystem::is_regular_file(options.ca_file)) {
    return Error{"--ca-file: cannot read " + options.ca_file};
  }
  http::ClientOptions co;
  co.ca_file = options.ca_file;
  co.insecure = options.insecure;
  co.request_timeout =
      std::chrono::duration_cast<std::chrono::milliseconds>(options.request_timeout);
  std::string token = options.token;
  if (!options.token_file.empty()) {
    auto t = ReadTokenFile(options.token_file);
    if (!t.ok()) return t.error();
    token = *t;
  }
  RegisterSecret(token);
  if (!token.empty()) co.default_headers.Set("Authorization", "Bearer " + token);
  if (!options.cookie.empty()) {
    RegisterSecret(options.cookie);
    co.default_headers.Set("Cookie", options.cookie);
  }
  for (const auto& h : options.headers) {
    auto colon = h.find(':');
    if (colon == std::string::npos || colon == 0) {
      return Error{"--header: expected NAME:VALUE, got '" + Redact(h) + "'"};
    }
    std::string value = h.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.erase(0, 1);
    RegisterSecret(value);
    co.default_headers.Add(h.substr(0, colon), value);
  }

  std::string url = options.host;
  std::unique_ptr<server::ApiServer> server;
  if (url.empty()) {
    server::ServeOptions so = options.embedded;
    so.port = 0;
    auto started = server::ApiServer::Start(so);
    if (!started.ok()) {
      return Error{"cannot start the embedded backend: " + started.error().message};
    }
    server = std::move(*started);
    url = server->url();
    spdlog::info("embedded KFP backend at {} ({} executor)", url, so.backend.executor);
  }
  auto base = http::ParseUrl(url);
  if (!base.ok()) return Error{"--host: " + base.error().message};
  co.base = *base;
  return std::unique_ptr<Session>(new Session(options, std::move(server), std::move(url),
                                              std::move(co), {options.namespace_, *api}));
}

Status Session::CheckReachable() {
  auto health = client_->GetHealthz();
  if (health.ok()) {
    healthz_ = kfp::ToJson(*health);
    return Ok();
  }
  // No answer; 400 at healthz: usually plain http to an https port (ours and
  // nginx say so); 401/403: credentials refused.
  int code = health.error().code;
  if (code == 0 || code == kHttpBadRequest || code == kHttpUnauthorized || code == kHttpForbidden) {
    return Error{fmt::format("cannot use {}: {}", url_, health.error().message)};
  }
  spdlog::warn("healthz failed ({}); going on", health.error().message);
  return Ok();
}

results::TargetInfo Session::target() const {
  results::TargetInfo info;
  info.url = url_;
  info.embedded = embedded();
  info.api_version = std::string(kfp::ApiVersionName(config_.api));
  info.healthz = healthz_;
  info.origin = options_.origin;
  info.namespace_ = options_.namespace_;
  if (embedded()) info.executor = options_.embedded.backend.executor;
  return info;
}

std::unique_ptr<http::Client> Session::ClientFor(const http::Url& base) const {
  http::ClientOptions co;
  co.base = base;
  co.ca_file = options_.ca_file;
  co.insecure = options_.insecure;
  return std::make_unique<http::Client>(co);
}

}  // namespace kfpbench::harness
