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
