#include "http/url.h"

#include <fmt/format.h>

#include "util/strings.h"

namespace kfpbench::http {
namespace {

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool IsUnreserved(char c) { return IsAlnum(c) || c == '-' || c == '.' || c == '_' || c == '~'; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Host names as DNS allows them (plus '_', which some internal names use), so
// that typos such as "http://host name" fail here rather than in the resolver.
bool IsValidHostName(std::string_view host) {
  for (char c : host) {
    if (!IsAlnum(c) && c != '-' && c != '.' && c != '_') return false;
  }
  return true;
}

bool IsValidIpv6Literal(std::string_view host) {
  // The resolver does the real validation; this only keeps out characters that
  // could never be part of an address (a zone id follows '%').
  size_t zone = host.find('%');
  std::string_view addr = host.substr(0, zone);
  if (addr.find(':') == std::string_view::npos) return false;
  for (char c : addr) {
    if (HexValue(c) < 0 && c != ':' && c != '.') return false;
  }
  return zone == std::string_view::npos || zone + 1 < host.size();
}

}  // namespace

std::string Url::ToString() const {
  bool ipv6 = host.find(':') != std::string::npos;
  return fmt::format("{}://{}{}{}:{}{}", scheme, ipv6 ? "[" : "", host, ipv6 ? "]" : "", port,
                     base_path);
}

Result<Url> ParseUrl(std::string_view text) {
  auto fail = [&](std::string_view why) {
    return Error{fmt::format("invalid URL \"{}\": {}", text, why)};
  };
  size_t scheme_end = text.find("://");
  if (scheme_end == std::string_view::npos) return fail("expected http:// or https://");
  Url url;
  url.scheme = AsciiLower(text.substr(0, scheme_end));
  if (url.scheme == "http") {
    url.port = 80;
  } else if (url.scheme == "https") {
    url.port = 443;
  } else {
    return fail(fmt::format("unsupported scheme \"{}\" (expected http or https)", url.scheme));
  }

  std::string_view rest = text.substr(scheme_end + 3);
  size_t authority_end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, authority_end);
  std::string_view path =
      authority_end == std::string_view::npos ? std::string_view() : rest.substr(authority_end);
  if (authority.find('@') != std::string_view::npos) {
    // Do not echo the URL: user info usually carries a password.
    return Error{"invalid URL: user info (user:password@) is not supported"};
  }

  std::string_view host;
  std::string_view port;
  bool has_port = false;
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return fail("unterminated '[' in host");
    host = authority.substr(1, close - 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return fail("unexpected characters after ']'");
      port = after.substr(1);
      has_port = true;
    }
    if (!host.empty() && !IsValidIpv6Literal(host)) return fail("bad IPv6 address");
  } else {
    size_t colon = authority.find(':');
    host = authority.substr(0, colon);
    if (colon != std::string_view::npos) {
      port = authority.substr(colon + 1);
      has_port = true;
    }
    if (!IsValidHostName(host)) return fail("bad character in host");
  }
  if (host.empty()) return fail("empty host");
  url.host = std::string(host);

  // An empty port ("http://h:/") means the scheme's default (RFC 3986 3.2.3).
  if (has_port && !port.empty()) {
    if (port.size() > 5) return fail("bad port");
    unsigned value = 0;
    for (char c : port) {
      if (c < '0' || c > '9') return fail("bad port");
      value = value * 10 + static_cast<unsigned>(c - '0');
    }
    if (value == 0 || value > 65535) return fail("bad port");
    url.port = static_cast<uint16_t>(value);
  }

  if (path.find_first_of("?#") != std::string_view::npos) {
    return fail("a base URL cannot have a query or fragment");
  }
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  url.base_path = std::string(path);
  return url;
}

std::string PercentEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (IsUnreserved(c)) {
      out.push_back(c);
    } else {
      auto b = static_cast<unsigned char>(c);
      out.push_back('%');
      out.push_back(kHex[b >> 4]);
      out.push_back(kHex[b & 0xF]);
    }
  }
  return out;
}

Result<std::string> PercentDecode(std::string_view text, bool plus_as_space) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '%') {
      int hi = i + 2 < text.size() ? HexValue(text[i + 1]) : -1;
      int lo = i + 2 < text.size() ? HexValue(text[i + 2]) : -1;
      if (hi < 0 || lo < 0) {
        return Error{fmt::format("malformed percent escape at offset {} in \"{}\"", i, text)};
      }
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_as_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

Result<std::multimap<std::string, std::string>> ParseQuery(std::string_view query) {
  std::multimap<std::string, std::string> params;
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;  // "a=1&&b=2"
    size_t eq = pair.find('=');
    auto key = PercentDecode(pair.substr(0, eq));
    if (!key.ok()) return Error{"bad query: " + key.error().message};
    std::string value;
    if (eq != std::string_view::npos) {
      auto v = PercentDecode(pair.substr(eq + 1));
      if (!v.ok()) return Error{"bad query: " + v.error().message};
      value = std::move(*v);
    }
    params.emplace(std::move(*key), std::move(value));
  }
  return params;
}

std::string BuildQuery(const std::multimap<std::string, std::string>& params) {
  std::string out;
  for (const auto& [k, v] : params) {
    if (!out.empty()) out.push_back('&');
    out += PercentEncode(k);
    out.push_back('=');
    out += PercentEncode(v);
  }
  return out;
}

}  // namespace kfpbench::http
