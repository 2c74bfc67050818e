// What the HTTP client and server share of Boost.Beast: short names for its
// namespaces, and the limit on a message head. Internal to src/http/.
#pragma once

#include <cstdint>

#include <boost/asio/error.hpp>
#include <boost/beast/http/error.hpp>

namespace kfpbench::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

// A start line and headers larger than this are refused (431 by the server,
// an error by the client).
inline constexpr uint32_t kHeaderLimit = 64 * 1024;

}  // namespace kfpbench::http
