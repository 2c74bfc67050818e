// Who may call the embedded server: bearer tokens (from files, compared in
// constant time) and KFP's multi-user mode (the user from a header a trusted
// proxy sets, namespaces from a policy file). The parsers here read outside
// input (token and policy files, request headers) and never throw.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "http/message.h"
#include "util/result.h"

namespace kfpbench::server {

// A token's SHA-256: tokens are compared by digest, so neither their bytes
// nor their lengths shape the time a comparison takes.
using TokenDigest = std::array<uint8_t, 32>;

struct TokenEntry {
  TokenDigest digest{};
  // The user the token stands for in multi-user mode (KFP's TokenReview
  // answer); empty: the token of a proxy, which names the user in the
  // user header.
  std::string user;
};

// A user's namespaces in multi-user mode; "*" stands for every namespace.
using NamespacePolicy = std::map<std::string, std::set<std::string>, std::less<>>;

// What the server checks of each request. Default: nothing (loopback, as
// before).
struct AuthConfig {
  std::vector<TokenEntry> tokens;  // empty: no bearer token is asked for
  // Also take the token from this cookie (e.g. authservice_session, the
  // cookie Kubeflow's login sets); empty: the Authorization header only.
  std::string token_cookie;
  bool multi_user = false;
  // KFP's KUBEFLOW_USERID_HEADER and KUBEFLOW_USERID_PREFIX, with the values
  // Kubeflow's manifests give them.
  std::string user_header = "kubeflow-userid";
  std::string user_prefix;
  NamespacePolicy policy;
  // Where shared pipelines (no namespace) live for writes: KFP authorizes
  // creating, changing and deleting them against its own namespace.
  std::string shared_namespace = "kubeflow";

  bool enabled() const { return !tokens.empty() || multi_user; }
};

// The files behind an AuthConfig, as `serve` names them.
struct AuthFiles {
  std::vector<std::string> token_files;
  std::string policy_file;
};

// Token file: one token a line, optionally followed by whitespace and the
// user it stands for; blank lines and lines starting with '#' are skipped.
// Errors name the line, never the token.
Result<std::vector<TokenEntry>> ParseTokenFile(std::string_view text);
// Policy file: one user a line, then the namespaces they may use, separated
// by whitespace or commas ("alice@example.com team-a team-b"; "*" for every
// namespace); '#' starts a comment. A user named twice has both lines'.
Result<NamespacePolicy> ParsePolicyFile(std::string_view text);
// Reads the files into `config`, registering every token as a secret.
// Refuses a multi-user mode without a policy, and the reverse.
Status LoadAuthFiles(const AuthFiles& files, AuthConfig& config);

TokenDigest DigestOf(std::string_view token);
// Equal digests, in time independent of where they differ.
bool SameDigest(const TokenDigest& a, const TokenDigest& b);

// The value of cookie `name` in a Cookie header ("a=1; b=2"), if present.
std::optional<std::string_view> CookieValue(std::string_view cookie_header, std::string_view name);
// The token of "Authorization: Bearer <token>" (scheme case-insensitive), if
// that is what the header holds.
std::optional<std::string_view> BearerToken(std::string_view authorization);

// The caller of one request, once authenticated.
struct Caller {
  // Multi-user mode: the user, or why there is none (KFP's 401 for any
  // route that reaches a namespace; healthz and metrics need no user).
  std::string user;
  std::string no_user;
};

// Authenticates requests against an AuthConfig; thread-safe (read-only).
class Authenticator {
 public:
  explicit Authenticator(AuthConfig config) : config_(std::move(config)) {}
  const AuthConfig& config() const { return config_; }

  // The caller, or the 401 to answer (KFP's error shape, and
  // WWW-Authenticate for a missing or wrong bearer token). A multi-user
  // caller without a user is answered 401 only where a namespace is
  // reached (CheckAccess).
  std::variant<Caller, http::Response> Authenticate(const http::Request& request) const;
  // Whether `user` may use `namespace_` according to the policy.
  bool Allows(std::string_view user, std::string_view namespace_) const;

 private:
  // The user named by the user header: exactly one, with the prefix, which
  // is stripped; else KFP's reason.
  Result<std::string> UserFromHeader(const http::Headers& headers) const;

  AuthConfig config_;
};

// Whether `address` (an IP literal or "localhost") is a loopback address
// only this host can reach.
bool IsLoopbackAddress(std::string_view address);

// `serve`'s exposure. Off loopback: refused without authentication (naming
// the ways to add it), and `allow_unauthenticated` never with the process
// executor, which runs whatever command an uploaded pipeline names. The
// process executor runs every step as this server's user on this host, able
// to read its database and every run's files, so it isolates nothing: with
// --multi-user (namespaces would not be kept apart) or off loopback (tokens
// let callers in, not their steps out) it is refused unless
// `allow_host_steps` says the operator accepts that, and then warned about.
// Ok with a warning to log in `warning` when so allowed.
Status CheckExposure(std::string_view address, std::string_view executor, const AuthConfig& auth,
                     bool allow_unauthenticated, bool allow_host_steps, std::string& warning);

}  // namespace kfpbench::server
