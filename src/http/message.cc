#include "http/message.h"

#include <algorithm>

#include "util/enum_names.h"
#include "util/strings.h"

namespace kfpbench::http {
namespace {
constexpr EnumName<Method> kMethodNames[] = {
    {Method::kGet, "GET"},        {Method::kPost, "POST"},     {Method::kPut, "PUT"},
    {Method::kPatch, "PATCH"},    {Method::kDelete, "DELETE"}, {Method::kHead, "HEAD"},
    {Method::kOptions, "OPTIONS"}};
}  // namespace

std::string_view MethodName(Method m) { return NameIn(kMethodNames, m, "OTHER"); }

void Headers::Set(std::string name, std::string value) {
  std::erase_if(entries_, [&](const auto& e) { return AsciiIEquals(e.first, name); });
  entries_.emplace_back(std::move(name), std::move(value));
}

void Headers::Add(std::string name, std::string value) {
  entries_.emplace_back(std::move(name), std::move(value));
}

std::string Headers::Get(std::string_view name) const {
  for (const auto& [n, v] : entries_) {
    if (AsciiIEquals(n, name)) return v;
  }
  return {};
}

bool Headers::Has(std::string_view name) const {
  return std::any_of(entries_.begin(), entries_.end(),
                     [&](const auto& e) { return AsciiIEquals(e.first, name); });
}

bool IsValidHeaderValue(std::string_view value) {
  return std::none_of(value.begin(), value.end(), [](char c) {
    auto u = static_cast<unsigned char>(c);
    return (u < 0x20 && c != '\t') || u == 0x7f;
  });
}

std::optional<std::string> InvalidHeader(const Headers& headers) {
  // RFC 9110's tchar.
  auto token_char = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
  };
  for (const auto& [name, value] : headers.entries()) {
    if (name.empty() || !std::all_of(name.begin(), name.end(), token_char)) {
      return "a header name that is not an HTTP token";
    }
    if (!IsValidHeaderValue(value)) {
      return "header " + name + ": its value holds a control character (CR, LF, ...)";
    }
  }
  return std::nullopt;
}

std::string Request::Query(std::string_view name) const {
  auto it = query.find(std::string(name));
  return it == query.end() ? std::string() : it->second;
}

bool Request::HasQuery(std::string_view name) const {
  return query.find(std::string(name)) != query.end();
}

Response Response::Json(int status, std::string body) {
  Response r;
  r.status = status;
  r.headers.Set("Content-Type", "application/json");
  r.body = std::move(body);
  return r;
}

Response Response::Text(int status, std::string body, std::string content_type) {
  Response r;
  r.status = status;
  r.headers.Set("Content-Type", std::move(content_type));
  r.body = std::move(body);
  return r;
}

}  // namespace kfpbench::http
