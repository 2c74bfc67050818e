#include "harness/session.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "http/url.h"
#include "util/files.h"
#include "util/secrets.h"
#include "util/strings.h"

namespace kfpbench::harness {
namespace {

// Exactly one token: the file's text without the whitespace around it.
// Anything else is refused, never sent, and never quoted (it is a secret):
// a serve --token-file (several tokens, users after them) would otherwise
// put its line breaks into the Authorization header.
Result<std::string> ReadTokenFile(const std::string& path) {
  constexpr size_t kMaxTokenFileBytes = 64 * 1024;
  auto text = ReadRegularFile(path, kMaxTokenFileBytes);
  if (!text.ok()) return Error{"--token-file: " + text.error().message};
  std::string_view token = *text;
  auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!token.empty() && space(token.back())) token.remove_suffix(1);
  while (!token.empty() && space(token.front())) token.remove_prefix(1);
  if (token.empty()) return Error{"--token-file: " + path + " is empty"};
  bool one = std::none_of(token.begin(), token.end(), [&](char c) {
    auto u = static_cast<unsigned char>(c);
    return space(c) || u < 0x20 || u == 0x7f;
  });
  if (!one) {
    return Error{"--token-file: " + path +
                 " holds more than one token, or a control character; give a file holding the "
                 "one token to send (serve's --token-file lists several, with users)"};
  }
  return std::string(token);
}

}  // namespace

bool SameHost(std::string_view a, std::string_view b) {
  auto trimmed = [](std::string_view s) {
    while (!s.empty() && s.back() == '/') s.remove_suffix(1);
    return s;
  };
  auto ua = http::ParseUrl(trimmed(a));
  auto ub = http::ParseUrl(trimmed(b));
  if (!ua.ok() || !ub.ok()) return trimmed(a) == trimmed(b);
  return ua->scheme == ub->scheme && AsciiIEquals(ua->host, ub->host) && ua->port == ub->port &&
         trimmed(ua->base_path) == trimmed(ub->base_path);
}

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
  // A token_file a file names is sent only where the user said: a file (a
  // scenario handed over, a ./kfpbench.yaml in the folder) may name any
  // host, and must not make a plain `run file.json` read a local file and
  // send it there. Said: --target chose it, or --host names its host, or
  // --allow-file-credentials. A --host elsewhere never gets it.
  if (options.token_file.empty() && options.token.empty() && !target->token_file.empty()) {
    if (!options.host.empty() && !SameHost(options.host, target->host)) {
      spdlog::info("not sending the token_file of {} to --host {}: it is {}'s", options.origin,
                   options.host, target->host);
    } else if (options.target.empty() && options.host.empty() && !options.allow_file_credentials) {
      return Error{fmt::format(
          "{} sends the token in {} to {}; a file alone does not send a credential. Confirm "
          "the target with --host {}{}, or pass --allow-file-credentials",
          options.origin, target->token_file, target->host, target->host,
          scenario_target.is_object() && !scenario_target.empty() ? "" : " or --target NAME")};
    } else {
      options.token_file = target->token_file;
    }
  }
  // Flags always override the keys of the target chosen.
  if (options.host.empty()) options.host = target->host;
  if (options.namespace_.empty()) options.namespace_ = target->namespace_;
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
  if (!http::IsValidHeaderValue(token)) return Error{"--token: it holds a control character"};
  if (!options.cookie.empty()) {
    RegisterSecret(options.cookie);
    if (!http::IsValidHeaderValue(options.cookie)) {
      return Error{"--cookie: it holds a control character"};
    }
    co.default_headers.Set("Cookie", options.cookie);
  }
  for (const auto& h : options.headers) {
    auto colon = h.find(':');
    if (colon == std::string::npos || colon == 0) {
      return Error{"--header: expected NAME:VALUE, got '" + Redact(h) + "'"};
    }
    std::string value = h.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    RegisterSecret(value);
    if (!http::IsValidHeaderValue(value)) {
      return Error{"--header " + h.substr(0, colon) + ": the value holds a control character"};
    }
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
