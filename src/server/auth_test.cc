#include "server/auth.h"

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "server/backend.h"
#include "util/secrets.h"

namespace kfpbench::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kProxyTokenText = "proxy-token-0123456789abcdef";
constexpr const char* kAliceToken = "alice-token-0123456789abcdef";

http::Request With(std::vector<std::pair<std::string, std::string>> headers) {
  http::Request r;
  r.path = r.target = "/apis/v2beta1/healthz";
  for (auto& [k, v] : headers) r.headers.Add(k, v);
  return r;
}

AuthConfig Config(bool multi_user) {
  AuthConfig c;
  c.tokens = {{DigestOf(kProxyTokenText), ""}, {DigestOf(kAliceToken), "alice@example.com"}};
  c.multi_user = multi_user;
  c.policy = {{"alice@example.com", {"team-a"}}, {"root", {"*"}}};
  return c;
}

int StatusOf(const std::variant<Caller, http::Response>& v) {
  return std::holds_alternative<http::Response>(v) ? std::get<http::Response>(v).status : 200;
}

TEST(TokenFile, TokensUsersCommentsAndBlankLines) {
  auto tokens = ParseTokenFile(
      "# tokens\n\n  proxy-token-0123456789abcdef  \nalice-token-0123456789abcdef alice@x\r\n");
  ASSERT_TRUE(tokens.ok()) << tokens.error().message;
  ASSERT_EQ(tokens->size(), 2u);
  EXPECT_TRUE(SameDigest((*tokens)[0].digest, DigestOf(kProxyTokenText)));
  EXPECT_EQ((*tokens)[0].user, "");
  EXPECT_EQ((*tokens)[1].user, "alice@x");
}

TEST(TokenFile, RefusalsNameTheLineNeverTheToken) {
  auto short_token = ParseTokenFile("# x\nshort\n");
  ASSERT_FALSE(short_token.ok());
  EXPECT_THAT(short_token.error().message, HasSubstr("line 2"));
  EXPECT_THAT(short_token.error().message, Not(HasSubstr("short")));
  EXPECT_FALSE(ParseTokenFile("a-long-enough-token-here user extra\n").ok());
  EXPECT_FALSE(ParseTokenFile("# only a comment\n\n").ok());
  EXPECT_FALSE(ParseTokenFile("").ok());
}

TEST(PolicyFile, UsersAndTheirNamespaces) {
  auto policy = ParsePolicyFile("alice team-a, team-b\n# c\nbob team-b\nalice team-c\nroot *\n");
  ASSERT_TRUE(policy.ok()) << policy.error().message;
  EXPECT_EQ(policy->at("alice"), (std::set<std::string>{"team-a", "team-b", "team-c"}));
  EXPECT_EQ(policy->at("root"), (std::set<std::string>{"*"}));
  EXPECT_FALSE(ParsePolicyFile("alice\n").ok());
  EXPECT_FALSE(ParsePolicyFile("\n").ok());
}

TEST(Headers, BearerTokenAndCookie) {
  EXPECT_EQ(BearerToken("Bearer abc"), "abc");
  EXPECT_EQ(BearerToken("bearer   abc "), "abc");
  EXPECT_EQ(BearerToken("Basic abc"), std::nullopt);
  EXPECT_EQ(BearerToken("Bearer"), std::nullopt);
  EXPECT_EQ(BearerToken("Bearer "), std::nullopt);
  EXPECT_EQ(BearerToken("Bearerabc"), std::nullopt);
  EXPECT_EQ(CookieValue("a=1; authservice_session=xyz; b=2", "authservice_session"), "xyz");
  EXPECT_EQ(CookieValue("a=1;s=\"q\"", "s"), "q");
  EXPECT_EQ(CookieValue("sa=1", "s"), std::nullopt);
  EXPECT_EQ(CookieValue("s", "s"), std::nullopt);
  EXPECT_EQ(CookieValue("", "s"), std::nullopt);
}

TEST(Authenticate, BearerTokensOnly) {
  Authenticator auth(Config(false));
  auto none = auth.Authenticate(With({}));
  ASSERT_EQ(StatusOf(none), 401);
  const auto& r = std::get<http::Response>(none);
  EXPECT_EQ(r.headers.Get("WWW-Authenticate"), "Bearer realm=\"kfpbench\"");
  auto body = nlohmann::json::parse(r.body);
  EXPECT_EQ(body["code"], 16);  // UNAUTHENTICATED, grpc-gateway's shape
  EXPECT_EQ(body["details"][0]["@type"], "type.googleapis.com/google.rpc.Status");
  EXPECT_EQ(StatusOf(auth.Authenticate(With({{"Authorization", "Bearer wrong-token"}}))), 401);
  EXPECT_EQ(StatusOf(auth.Authenticate(
                With({{"Authorization", std::string("Basic ") + kProxyTokenText}}))),
            401);
  EXPECT_EQ(StatusOf(auth.Authenticate(
                With({{"Authorization", std::string("Bearer ") + kProxyTokenText}}))),
            200);
  // A token's prefix, or the token with a byte more, is not the token.
  std::string token = kProxyTokenText;
  EXPECT_EQ(StatusOf(auth.Authenticate(
                With({{"Authorization", "Bearer " + token.substr(0, token.size() - 1)}}))),
            401);
  EXPECT_EQ(StatusOf(auth.Authenticate(With({{"Authorization", "Bearer " + token + "x"}}))), 401);
}

TEST(Authenticate, TheWrongTokenNeverAppearsInTheAnswer) {
  Authenticator auth(Config(false));
  auto r = auth.Authenticate(With({{"Authorization", "Bearer secret-guess-123456789"}}));
  EXPECT_THAT(std::get<http::Response>(r).body, Not(HasSubstr("secret-guess")));
}

TEST(Authenticate, TokenCookie) {
  AuthConfig c = Config(false);
  c.token_cookie = "authservice_session";
  Authenticator auth(c);
  EXPECT_EQ(StatusOf(auth.Authenticate(
                With({{"Cookie", std::string("authservice_session=") + kProxyTokenText}}))),
            200);
  EXPECT_EQ(StatusOf(auth.Authenticate(With({{"Cookie", "authservice_session=nope"}}))), 401);
  EXPECT_EQ(
      StatusOf(auth.Authenticate(With({{"Cookie", std::string("other=") + kProxyTokenText}}))),
      401);
}

TEST(Authenticate, MultiUserTakesTheUserFromTheHeaderOrTheToken) {
  Authenticator auth(Config(true));
  std::string proxy = std::string("Bearer ") + kProxyTokenText;
  auto via_proxy =
      auth.Authenticate(With({{"Authorization", proxy}, {"kubeflow-userid", "bob@example.com"}}));
  ASSERT_EQ(StatusOf(via_proxy), 200);
  EXPECT_EQ(std::get<Caller>(via_proxy).user, "bob@example.com");
  // A proxy's token without a user: authenticated, but no user.
  auto no_user = auth.Authenticate(With({{"Authorization", proxy}}));
  ASSERT_EQ(StatusOf(no_user), 200);
  EXPECT_EQ(std::get<Caller>(no_user).user, "");
  EXPECT_THAT(std::get<Caller>(no_user).no_user, HasSubstr("no user identity header"));
  // Two user headers: KFP refuses to pick one.
  auto two = auth.Authenticate(
      With({{"Authorization", proxy}, {"kubeflow-userid", "a"}, {"Kubeflow-UserId", "b"}}));
  EXPECT_EQ(std::get<Caller>(two).user, "");
  EXPECT_THAT(std::get<Caller>(two).no_user, HasSubstr("Expect 1 got 2"));
  // A user's own token names them; a header cannot make them someone else.
  std::string alice = std::string("Bearer ") + kAliceToken;
  auto own = auth.Authenticate(With({{"Authorization", alice}}));
  EXPECT_EQ(std::get<Caller>(own).user, "alice@example.com");
  EXPECT_EQ(
      StatusOf(auth.Authenticate(With({{"Authorization", alice}, {"kubeflow-userid", "root"}}))),
      401);
}

TEST(Authenticate, UserPrefixIsRequiredAndStripped) {
  AuthConfig c;
  c.multi_user = true;
  c.user_header = "x-goog-authenticated-user-email";
  c.user_prefix = "accounts.google.com:";
  Authenticator auth(c);
  auto ok = auth.Authenticate(
      With({{"X-Goog-Authenticated-User-Email", "accounts.google.com:carol@example.com"}}));
  EXPECT_EQ(std::get<Caller>(ok).user, "carol@example.com");
  auto bad = auth.Authenticate(With({{"x-goog-authenticated-user-email", "carol@example.com"}}));
  EXPECT_EQ(std::get<Caller>(bad).user, "");
  EXPECT_EQ(std::get<Caller>(bad).no_user,
            "Header 'x-goog-authenticated-user-email' is incorrectly formatted. Expected prefix "
            "'accounts.google.com:'");
}

TEST(Authenticate, PolicyAllows) {
  Authenticator auth(Config(true));
  EXPECT_TRUE(auth.Allows("alice@example.com", "team-a"));
  EXPECT_FALSE(auth.Allows("alice@example.com", "team-b"));
  EXPECT_FALSE(auth.Allows("nobody", "team-a"));
  EXPECT_TRUE(auth.Allows("root", "anything"));
}

TEST(Exposure, LoopbackAddresses) {
  for (const char* a : {"127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"}) {
    EXPECT_TRUE(IsLoopbackAddress(a)) << a;
  }
  for (const char* a : {"0.0.0.0", "::", "10.0.0.1", "192.168.1.2", "example.com", ""}) {
    EXPECT_FALSE(IsLoopbackAddress(a)) << a;
  }
}

TEST(Exposure, OffLoopbackNeedsAuthentication) {
  std::string warning;
  AuthConfig none;
  EXPECT_TRUE(CheckExposure("127.0.0.1", "process", none, false, false, warning).ok());
  EXPECT_TRUE(warning.empty());
  Status refused = CheckExposure("0.0.0.0", "process", none, false, false, warning);
  ASSERT_FALSE(refused.ok());
  for (const char* way : {"--token-file", "--address 127.0.0.1", "--allow-unauthenticated"}) {
    EXPECT_THAT(refused.error().message, HasSubstr(way)) << way;
  }
  // Never with the process executor, even when asked.
  Status process = CheckExposure("0.0.0.0", "process", none, true, false, warning);
  ASSERT_FALSE(process.ok());
  EXPECT_THAT(process.error().message, HasSubstr("--executor stub"));
  ASSERT_TRUE(CheckExposure("0.0.0.0", "stub", none, true, false, warning).ok());
  EXPECT_THAT(warning, HasSubstr("WITHOUT AUTHENTICATION"));
  // Multi-user mode alone: anyone can set the header.
  AuthConfig header_only;
  header_only.multi_user = true;
  EXPECT_FALSE(CheckExposure("0.0.0.0", "stub", header_only, false, false, warning).ok());
  EXPECT_TRUE(CheckExposure("0.0.0.0", "stub", Config(true), false, false, warning).ok());
  EXPECT_TRUE(warning.empty());
}

// Issue #35: under --multi-user a step of alice's read the server's SQLite
// and printed bob's run parameters; off loopback a token let its holder's
// steps run anything on the host. The process executor needs the operator's
// word for either, and is warned about loudly when given it.
TEST(Exposure, TheProcessExecutorIsolatesNothingSoItNeedsItsOwnFlag) {
  std::string warning;
  AuthConfig multi_user = Config(true);
  AuthConfig tokens = Config(false);
  ASSERT_FALSE(tokens.tokens.empty());
  for (const char* address : {"127.0.0.1", "0.0.0.0"}) {
    Status refused = CheckExposure(address, "process", multi_user, false, false, warning);
    ASSERT_FALSE(refused.ok()) << address;
    EXPECT_THAT(refused.error().message, HasSubstr("--allow-host-steps"));
    EXPECT_THAT(refused.error().message, HasSubstr("keeps no namespace apart"));
    ASSERT_TRUE(CheckExposure(address, "process", multi_user, false, true, warning).ok());
    EXPECT_THAT(warning, HasSubstr("STEPS RUN ON THIS HOST")) << address;
    EXPECT_TRUE(CheckExposure(address, "stub", multi_user, false, false, warning).ok());
    EXPECT_TRUE(warning.empty());
  }
  // Tokens alone off loopback: refused with the process executor.
  Status off = CheckExposure("0.0.0.0", "process", tokens, false, false, warning);
  ASSERT_FALSE(off.ok());
  EXPECT_THAT(off.error().message, HasSubstr("every token holder"));
  ASSERT_TRUE(CheckExposure("0.0.0.0", "process", tokens, false, true, warning).ok());
  EXPECT_FALSE(warning.empty());
  // On loopback, one user's own server: as before.
  EXPECT_TRUE(CheckExposure("127.0.0.1", "process", tokens, false, false, warning).ok());
  EXPECT_TRUE(warning.empty());
}

TEST(Exposure, ApiServerRefusesToStart) {
  ServeOptions o;
  o.address = "0.0.0.0";
  o.port = 0;
  auto server = ApiServer::Start(o);
  ASSERT_FALSE(server.ok());
  EXPECT_THAT(server.error().message, HasSubstr("without authentication"));
}

TEST(LoadAuthFiles, TokensAreRegisteredAsSecrets) {
  auto dir = std::filesystem::temp_directory_path() / "kfpbench-auth-test";
  std::filesystem::create_directories(dir);
  std::string token = "registered-secret-token-42";
  {
    std::ofstream(dir / "tokens") << token << " dave\n";
    std::ofstream(dir / "policy") << "dave team-d\n";
  }
  AuthConfig c;
  c.multi_user = true;
  ASSERT_TRUE(LoadAuthFiles({{(dir / "tokens").string()}, (dir / "policy").string()}, c).ok());
  EXPECT_EQ(c.tokens.size(), 1u);
  EXPECT_EQ(c.policy.at("dave").count("team-d"), 1u);
  EXPECT_THAT(Redact("the token is " + token), Not(HasSubstr(token)));
  // A policy without multi-user mode, and the reverse, are refused.
  AuthConfig single;
  EXPECT_FALSE(LoadAuthFiles({{}, (dir / "policy").string()}, single).ok());
  AuthConfig multi;
  multi.multi_user = true;
  EXPECT_FALSE(LoadAuthFiles({{(dir / "tokens").string()}, ""}, multi).ok());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kfpbench::server
