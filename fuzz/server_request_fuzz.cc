// The embedded server's request handling end to end: a request in, a
// response out, against an in-memory store and the stub executor. The first
// line is "METHOD /target?query", the second the Content-Type, the rest the
// body. Whatever comes in, the answer is a status the API can give: never a
// crash, never a 5xx for the client's own mistake (checked by the server's
// tests; here the sanitizers watch memory and arithmetic).
#include <cstdlib>
#include <memory>

#include "fuzz/fuzz_support.h"
#include "http/url.h"
#include "server/backend.h"

namespace {

// A fresh backend every 50,000 inputs: what the requests create stays in
// its in-memory store, and over a 10-million-input run that alone would reach
// the fuzzer's memory limit.
kfpbench::server::Backend& TheBackend() {
  static std::unique_ptr<kfpbench::server::Backend> backend;
  static int64_t served = 0;
  if (served++ % 50'000 == 0) {
    backend.reset();
    kfpbench::server::BackendOptions o;
    o.executor = "stub";
    o.stub_durations = {"constant:0s"};
    auto b = kfpbench::server::Backend::Create(o);
    if (!b.ok()) std::abort();
    backend = std::move(*b);
  }
  return *backend;
}

kfpbench::http::Method MethodOf(std::string_view word) {
  using kfpbench::http::Method;
  if (word == "POST") return Method::kPost;
  if (word == "DELETE") return Method::kDelete;
  if (word == "PATCH") return Method::kPatch;
  if (word == "PUT") return Method::kPut;
  return Method::kGet;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kfpbench;
  auto [line, rest] = fuzz::TwoParts(data, size);
  auto [content_type, body] =
      fuzz::TwoParts(reinterpret_cast<const uint8_t*>(rest.data()), rest.size());
  http::Request request;
  size_t space = line.find(' ');
  request.method = MethodOf(line.substr(0, space));
  std::string_view target = space == std::string_view::npos ? "/" : line.substr(space + 1);
  request.target = std::string(target);
  size_t q = target.find('?');
  auto path = http::PercentDecode(target.substr(0, q), /*plus_as_space=*/false);
  if (!path.ok()) return 0;  // the HTTP layer answers 400 before the backend sees it
  request.path = std::move(*path);
  if (q != std::string_view::npos) {
    auto query = http::ParseQuery(target.substr(q + 1));
    if (!query.ok()) return 0;
    request.query = std::move(*query);
  }
  if (!content_type.empty()) request.headers.Add("Content-Type", std::string(content_type));
  request.body = std::string(body);
  http::Response response = TheBackend().Handle(request);
  if (response.status < 200 || response.status > 599) std::abort();
  return 0;
}
