// A thread-safe HTTP/1.1 client with a keep-alive connection pool, used for
// every call kfpbench makes to a KFP API server (real or embedded).
#pragma once

#include <atomic>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "http/message.h"
#include "http/url.h"
#include "util/result.h"

namespace kfpbench::http {

struct ClientOptions {
  Url base;                 // requests are sent to base.base_path + target
  Headers default_headers;  // e.g. Authorization; never logged
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds request_timeout{60000};
  size_t max_idle_connections = 64;
  // An answer whose body is larger fails as that call's error (the
  // connection is closed, nothing beyond the limit is held). KFP's largest
  // answers are pipeline versions, whose specs KFP caps at 32 MiB.
  size_t max_response_bytes = size_t{64} << 20;
  // https only. Certificates are verified against the system trust store by
  // default; `ca_file` (PEM) trusts a private CA instead; `insecure` skips
  // verification altogether (warned about once).
  std::string ca_file;
  bool insecure = false;
  // Once set, a call in flight ends within 100 ms and every new call fails at
  // once, each as a transport error saying it was cancelled (a Ctrl-C whose
  // grace has run out should not wait out request_timeout on a frozen target).
  const std::atomic<bool>* cancel = nullptr;
};

class Client {
 public:
  explicit Client(ClientOptions options);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Sends one request and reads the whole response. A transport failure
  // (refused, reset, timeout, DNS) is an Error whose message names the URL and
  // the cause and whose code is 0; any HTTP status, 4xx and 5xx included, is a
  // Response. Idle connections the server has closed are dropped before use;
  // one that closes as an idempotent request (GET, HEAD, PUT, DELETE, OPTIONS)
  // goes out is retried once on a fresh connection (counted in retries()). A
  // POST or PATCH is never sent twice: the server may have acted on it, so it
  // fails as a transport error instead. Over https a
  // certificate that does not verify, or names another host, is an Error that
  // says so (and a CA file that cannot be loaded fails every call).
  Result<Response> Send(Method method, std::string_view target, std::string body = "",
                        std::string_view content_type = "", const Headers& extra = {});

  const Url& base() const;
  // Requests sent a second time (see Send), since the client was made.
  uint64_t retries() const { return retries_.load(std::memory_order_relaxed); }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::atomic<uint64_t> retries_{0};
};

}  // namespace kfpbench::http
