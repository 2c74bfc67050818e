// What a caller controls of authentication: the Authorization, Cookie and
// user headers, and the token and policy files. The first line is the
// Authorization header, the second the Cookie header, the third the user
// header's value (sent twice when it starts with '2'), the rest is read as
// a token file and as a policy file. Whatever comes in: no crash, a 401 or
// a caller, and a token is accepted only when it is one of the file's.
#include <cstdlib>

#include "fuzz/fuzz_support.h"
#include "server/auth.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kfpbench;
  auto [authorization, rest] = fuzz::TwoParts(data, size);
  auto [cookie, rest2] = fuzz::TwoParts(reinterpret_cast<const uint8_t*>(rest.data()), rest.size());
  auto [user, file] = fuzz::TwoParts(reinterpret_cast<const uint8_t*>(rest2.data()), rest2.size());

  (void)server::BearerToken(authorization);
  (void)server::CookieValue(cookie, "authservice_session");
  (void)server::ParsePolicyFile(file);
  server::AuthConfig config;
  config.multi_user = true;
  config.user_prefix = "accounts.google.com:";
  config.token_cookie = "authservice_session";
  if (auto tokens = server::ParseTokenFile(file); tokens.ok()) config.tokens = std::move(*tokens);
  const bool any_token = !config.tokens.empty();
  server::Authenticator auth(config);

  http::Request request;
  request.headers.Add("Authorization", std::string(authorization));
  request.headers.Add("Cookie", std::string(cookie));
  request.headers.Add("kubeflow-userid", std::string(user));
  if (!user.empty() && user.front() == '2')
    request.headers.Add("Kubeflow-Userid", std::string(user));
  auto caller = auth.Authenticate(request);
  if (auto* refused = std::get_if<http::Response>(&caller)) {
    if (refused->status != 401) std::abort();
  } else if (any_token) {
    // Accepted: the header's or the cookie's token is in the file.
    auto token = server::BearerToken(authorization);
    if (!token) token = server::CookieValue(cookie, "authservice_session");
    if (!token) std::abort();
    bool known = false;
    for (const auto& t : config.tokens)
      known |= server::SameDigest(t.digest, server::DigestOf(*token));
    if (!known) std::abort();
  }
  return 0;
}
