// What the HTTP client and server share of Boost.Beast: short names for its
// namespaces, and the limit on a message head. Internal to src/http/.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

#include <boost/asio/error.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/verb.hpp>

#include "http/message.h"

namespace kfpbench::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

// A start line and headers larger than this are refused (431 by the server,
// an error by the client).
inline constexpr uint32_t kHeaderLimit = 64 * 1024;

// Each method and Beast's verb for it; Method::kOther has none.
inline constexpr std::pair<Method, bhttp::verb> kVerbs[] = {
    {Method::kGet, bhttp::verb::get},        {Method::kPost, bhttp::verb::post},
    {Method::kPut, bhttp::verb::put},        {Method::kPatch, bhttp::verb::patch},
    {Method::kDelete, bhttp::verb::delete_}, {Method::kHead, bhttp::verb::head},
    {Method::kOptions, bhttp::verb::options}};

inline std::optional<bhttp::verb> ToVerb(Method m) {
  for (const auto& [method, verb] : kVerbs) {
    if (method == m) return verb;
  }
  return std::nullopt;
}

inline Method FromVerb(bhttp::verb v) {
  for (const auto& [method, verb] : kVerbs) {
    if (verb == v) return method;
  }
  return Method::kOther;
}

}  // namespace kfpbench::http
