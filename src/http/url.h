#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "util/result.h"

namespace kfpbench::http {

struct Url {
  std::string scheme;     // "http" or "https"
  std::string host;       // "127.0.0.1", "kfp.example.com", "::1" (no brackets)
  uint16_t port = 0;      // explicit or the scheme's default
  std::string base_path;  // "" or e.g. "/pipeline" (no trailing slash)

  std::string ToString() const;  // scheme://host:port/base_path
};

// Accepts http:// and https:// URLs with an optional port and base path.
// Any other scheme, an empty host or a bad port is an error naming the URL.
Result<Url> ParseUrl(std::string_view text);

std::string PercentEncode(std::string_view text);  // RFC 3986 unreserved set kept
Result<std::string> PercentDecode(std::string_view text, bool plus_as_space = true);
// "a=1&b=x%20y" -> {a:1, b:"x y"}; malformed escapes are an error.
Result<std::multimap<std::string, std::string>> ParseQuery(std::string_view query);
std::string BuildQuery(const std::multimap<std::string, std::string>& params);

}  // namespace kfpbench::http
