#include "server/auth.h"

#include <arpa/inet.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <cctype>
#include <cstring>

#include <fmt/format.h>

#include "server/api_util.h"
#include "util/files.h"
#include "util/secrets.h"

namespace kfpbench::server {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

// The file's lines with comments and surrounding blanks removed, numbered
// from 1; empty ones skipped.
template <typename Fn>
Status ForEachLine(std::string_view text, Fn&& fn) {
  int number = 0;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    ++number;
    if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    line = Trim(line);
    if (line.empty()) continue;
    if (Status s = fn(number, line); !s.ok()) return s;
  }
  return Ok();
}

// Words separated by blanks (and commas, with `commas`).
std::vector<std::string_view> Words(std::string_view line, bool commas) {
  std::vector<std::string_view> out;
  size_t i = 0;
  auto separator = [&](char c) { return IsSpace(c) || (commas && c == ','); };
  while (i < line.size()) {
    while (i < line.size() && separator(line[i])) ++i;
    size_t start = i;
    while (i < line.size() && !separator(line[i])) ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

bool Printable(std::string_view s) {
  for (char c : s) {
    if (static_cast<unsigned char>(c) < 0x21 || c == 0x7f) return false;
  }
  return true;
}

http::Response Unauthenticated(std::string reason, bool bearer) {
  http::Response r = UserErrorResponse(kHttpUnauthorized, "Unauthenticated: " + reason, reason);
  if (bearer) r.headers.Set("WWW-Authenticate", "Bearer realm=\"kfpbench\"");
  return r;
}

}  // namespace

Result<std::vector<TokenEntry>> ParseTokenFile(std::string_view text) {
  std::vector<TokenEntry> tokens;
  Status s = ForEachLine(text, [&](int number, std::string_view line) -> Status {
    auto words = Words(line, false);
    if (words.size() > 2) {
      return Error{
          fmt::format("line {}: expected a token and at most one user after it, found {} "
                      "words",
                      number, words.size())};
    }
    if (!Printable(words[0])) {
      return Error{fmt::format("line {}: a token is printable ASCII without spaces", number)};
    }
    if (words[0].size() < 16) {
      return Error{
          fmt::format("line {}: the token is {} characters; use at least 16 (e.g. openssl rand "
                      "-hex 32)",
                      number, words[0].size())};
    }
    TokenEntry entry{DigestOf(words[0]), words.size() == 2 ? std::string(words[1]) : ""};
    tokens.push_back(std::move(entry));
    return Ok();
  });
  if (!s.ok()) return s.error();
  if (tokens.empty()) return Error{"no token in the file"};
  return tokens;
}

Result<NamespacePolicy> ParsePolicyFile(std::string_view text) {
  NamespacePolicy policy;
  Status s = ForEachLine(text, [&](int number, std::string_view line) -> Status {
    auto words = Words(line, true);
    if (words.size() < 2) {
      return Error{fmt::format("line {}: expected a user and then their namespaces", number)};
    }
    auto& namespaces = policy[std::string(words[0])];
    for (size_t i = 1; i < words.size(); ++i) namespaces.emplace(words[i]);
    return Ok();
  });
  if (!s.ok()) return s.error();
  if (policy.empty()) return Error{"no user in the file"};
  return policy;
}

Status LoadAuthFiles(const AuthFiles& files, AuthConfig& config) {
  for (const auto& path : files.token_files) {
    auto text = ReadFile(path);
    if (!text.ok()) return Error{"--token-file: " + text.error().message};
    auto tokens = ParseTokenFile(*text);
    if (!tokens.ok())
      return Error{fmt::format("--token-file {}: {}", path, tokens.error().message)};
    // The plain tokens are not kept; redaction needs them registered.
    (void)ForEachLine(*text, [](int, std::string_view line) -> Status {
      RegisterSecret(Words(line, false).front());
      return Ok();
    });
    for (auto& t : *tokens) config.tokens.push_back(std::move(t));
  }
  if (!files.policy_file.empty() && !config.multi_user) {
    return Error{
        "--namespace-policy gives users their namespaces in multi-user mode: add "
        "--multi-user"};
  }
  if (config.multi_user) {
    if (files.policy_file.empty()) {
      return Error{
          "--multi-user needs --namespace-policy FILE: which namespaces each user may use "
          "(one line per user: USER NAMESPACE...)"};
    }
    auto text = ReadFile(files.policy_file);
    if (!text.ok()) return Error{"--namespace-policy: " + text.error().message};
    auto policy = ParsePolicyFile(*text);
    if (!policy.ok()) {
      return Error{
          fmt::format("--namespace-policy {}: {}", files.policy_file, policy.error().message)};
    }
    config.policy = std::move(*policy);
  }
  return Ok();
}

TokenDigest DigestOf(std::string_view token) {
  TokenDigest d{};
  SHA256(reinterpret_cast<const unsigned char*>(token.data()), token.size(), d.data());
  return d;
}

bool SameDigest(const TokenDigest& a, const TokenDigest& b) {
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::optional<std::string_view> CookieValue(std::string_view cookie_header, std::string_view name) {
  while (!cookie_header.empty()) {
    size_t end = cookie_header.find(';');
    std::string_view pair = Trim(cookie_header.substr(0, end));
    cookie_header.remove_prefix(end == std::string_view::npos ? cookie_header.size() : end + 1);
    size_t eq = pair.find('=');
    if (eq == std::string_view::npos || Trim(pair.substr(0, eq)) != name) continue;
    std::string_view value = Trim(pair.substr(eq + 1));
    // RFC 6265 lets a value be quoted.
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
      value = value.substr(1, value.size() - 2);
    }
    return value;
  }
  return std::nullopt;
}

std::optional<std::string_view> BearerToken(std::string_view authorization) {
  authorization = Trim(authorization);
  constexpr std::string_view kScheme = "bearer";
  if (authorization.size() <= kScheme.size() ||
      !EqualsIgnoreCase(authorization.substr(0, kScheme.size()), kScheme) ||
      !IsSpace(authorization[kScheme.size()])) {
    return std::nullopt;
  }
  std::string_view token = Trim(authorization.substr(kScheme.size()));
  if (token.empty()) return std::nullopt;
  return token;
}

Result<std::string> Authenticator::UserFromHeader(const http::Headers& headers) const {
  // auth/util.go: singlePrefixedHeaderFromMetadata.
  const std::string* value = nullptr;
  int count = 0;
  for (const auto& [name, v] : headers.entries()) {
    if (EqualsIgnoreCase(name, config_.user_header)) {
      value = &v;
      ++count;
    }
  }
  if (count == 0) return Error{"Request header error: there is no user identity header."};
  if (count != 1) {
    return Error{
        fmt::format("Request header error: unexpected number of '{}' headers. Expect 1 "
                    "got {}",
                    config_.user_header, count)};
  }
  if (value->rfind(config_.user_prefix, 0) != 0) {
    return Error{fmt::format("Header '{}' is incorrectly formatted. Expected prefix '{}'",
                             config_.user_header, config_.user_prefix)};
  }
  std::string user = value->substr(config_.user_prefix.size());
  if (user.empty()) return Error{"Request header error: there is no user identity header."};
  return user;
}

std::variant<Caller, http::Response> Authenticator::Authenticate(
    const http::Request& request) const {
  const TokenEntry* matched = nullptr;
  if (!config_.tokens.empty()) {
    // Held here: the token is a view into them.
    const std::string authorization = request.headers.Get("Authorization");
    std::string cookies;
    std::optional<std::string_view> token = BearerToken(authorization);
    if (!token && !config_.token_cookie.empty()) {
      cookies = request.headers.Get("Cookie");
      token = CookieValue(cookies, config_.token_cookie);
    }
    if (!token || token->empty()) {
      return Unauthenticated(
          config_.token_cookie.empty()
              ? "Request header error: there is no bearer token (Authorization: Bearer TOKEN)"
              : fmt::format("Request header error: there is no bearer token (Authorization: "
                            "Bearer TOKEN, or the {} cookie)",
                            config_.token_cookie),
          true);
    }
    TokenDigest digest = DigestOf(*token);
    // Every entry is compared, so the time taken does not say which one (if
    // any) matched.
    for (const auto& entry : config_.tokens) {
      if (SameDigest(entry.digest, digest) && !matched) matched = &entry;
    }
    if (!matched) return Unauthenticated("the bearer token is not valid", true);
  }
  if (!config_.multi_user) return Caller{};
  if (matched && !matched->user.empty()) {
    // A user's own token names them; a header cannot make them someone else.
    auto named = UserFromHeader(request.headers);
    if (named.ok() && *named != matched->user) {
      return Unauthenticated(fmt::format("the bearer token is not valid for the user the '{}' "
                                         "header names",
                                         config_.user_header),
                             false);
    }
    return Caller{matched->user, ""};
  }
  auto user = UserFromHeader(request.headers);
  if (!user.ok()) return Caller{"", user.error().message};
  return Caller{std::move(*user), ""};
}

bool Authenticator::Allows(std::string_view user, std::string_view namespace_) const {
  auto it = config_.policy.find(user);
  if (it == config_.policy.end()) return false;
  return it->second.count("*") > 0 || it->second.count(std::string(namespace_)) > 0;
}

bool IsLoopbackAddress(std::string_view address) {
  if (address == "localhost") return true;
  std::string text(address);
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
    text = text.substr(1, text.size() - 2);
  }
  in_addr v4{};
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, text.c_str(), &v6) == 1) {
    static const in6_addr kLoopback = IN6ADDR_LOOPBACK_INIT;
    return std::memcmp(&v6, &kLoopback, sizeof v6) == 0;
  }
  return false;  // a host name: whatever it resolves to may be reachable
}

Status CheckExposure(std::string_view address, std::string_view executor, const AuthConfig& auth,
                     bool allow_unauthenticated, bool allow_host_steps, std::string& warning) {
  warning.clear();
  const bool loopback = IsLoopbackAddress(address);
  if (executor == "process" && (auth.multi_user || (!loopback && !auth.tokens.empty()))) {
    const std::string why =
        auth.multi_user
            ? "--multi-user with --executor process keeps no namespace apart: every user's steps "
              "run as this server's user on this host, and can read its database and every "
              "namespace's runs, parameters and files"
            : fmt::format(
                  "serving on {} with --executor process lets every token holder run any "
                  "command on this host, as this server's user, reading its database "
                  "and every run's files",
                  address);
    if (!allow_host_steps) {
      return Error{fmt::format(
          "refusing to serve: {}. Use --executor stub, or add --allow-host-steps to accept it "
          "(for users who trust each other with this host)",
          why)};
    }
    warning = "STEPS RUN ON THIS HOST AS THIS SERVER'S USER (--allow-host-steps): " + why;
    if (loopback || !auth.tokens.empty()) return Ok();
  }
  if (loopback) return Ok();
  if (!auth.tokens.empty()) return Ok();
  if (!allow_unauthenticated) {
    std::string why =
        auth.multi_user
            ? "--multi-user alone is not authentication: anyone who reaches the port can set "
              "the user header"
            : "anyone who reaches the port could use the API";
    return Error{fmt::format(
        "refusing to serve on {} without authentication ({}). Add one of:\n"
        "  --token-file FILE        bearer tokens, one per line (with --multi-user, a token may "
        "name its user, or be the token of the proxy that sets the user header)\n"
        "  --address 127.0.0.1      and put an authenticating proxy in front (e.g. Kubeflow's "
        "oauth2-proxy, with --multi-user)\n"
        "  --allow-unauthenticated  with --executor stub, on a network you trust",
        address, why)};
  }
  if (executor != "stub") {
    return Error{fmt::format(
        "--allow-unauthenticated off loopback ({}) needs --executor stub: the {} executor runs "
        "the command of any pipeline anyone uploads, on this host",
        address, executor)};
  }
  warning = fmt::format(
      "SERVING WITHOUT AUTHENTICATION on {}: anyone who reaches this port can create, read and "
      "delete every pipeline, experiment and run (--allow-unauthenticated)",
      address);
  return Ok();
}

}  // namespace kfpbench::server
