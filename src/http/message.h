// Plain HTTP request and response values shared by the server and the client.
// Boost.Beast stays inside server.cc and client.cc, so the rest of kfpbench
// compiles without it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kfpbench::http {

enum class Method { kGet, kPost, kPut, kPatch, kDelete, kHead, kOptions, kOther };

std::string_view MethodName(Method m);

// Header names compare case-insensitively; values keep their case.
class Headers {
 public:
  void Set(std::string name, std::string value);
  void Add(std::string name, std::string value);
  // The first value of `name`, or empty.
  std::string Get(std::string_view name) const;
  bool Has(std::string_view name) const;
  const std::vector<std::pair<std::string, std::string>>& entries() const { return entries_; }

 private:
  std::vector<std::pair<std::string, std::string>> entries_;
};

// The first header that cannot go on the wire as it is: a name that is not
// an HTTP token, or a value holding a control character (CR and LF would
// start a header of the value's choosing; only HTAB is allowed), said by
// its name alone: values carry tokens. Nullopt when all are fine.
std::optional<std::string> InvalidHeader(const Headers& headers);
// The same for one value.
bool IsValidHeaderValue(std::string_view value);

struct Request {
  Method method = Method::kGet;
  std::string target;  // path and query as sent, e.g. "/apis/v2beta1/runs?page_size=5"
  std::string path;    // decoded path without the query
  std::multimap<std::string, std::string> query;  // decoded query parameters
  Headers headers;
  std::string body;

  // First value of a query parameter, or empty.
  std::string Query(std::string_view name) const;
  bool HasQuery(std::string_view name) const;
};

struct Response {
  int status = 200;
  Headers headers;  // Content-Type defaults to application/json when body is set and none given
  std::string body;

  static Response Json(int status, std::string body);
  static Response Text(int status, std::string body, std::string content_type = "text/plain");
};

}  // namespace kfpbench::http
