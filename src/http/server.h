// An HTTP/1.1 server on Boost.Beast: keep-alive, a fixed pool of I/O threads,
// a body size limit, and one synchronous handler for every request. What an
// API's errors look like is the API's: the server's own answers take their
// body from ServerOptions::error_response.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "http/message.h"
#include "util/result.h"

namespace kfpbench::http {

struct ServerOptions {
  std::string address = "127.0.0.1";
  uint16_t port = 0;  // 0: an ephemeral port, see Server::port()
  int threads = 2;
  // Both set: serve HTTPS only (PEM files; the certificate file may hold the
  // chain). A plain-HTTP request on that port gets a 400 saying to use https.
  std::string tls_cert_file{};
  std::string tls_key_file{};
  size_t max_body_bytes = 33 * 1024 * 1024;  // KFP accepts 32 MiB uploads; a little headroom
  // A connection gets this long to deliver a whole request, counted from the
  // moment the server waits for one (so an idle keep-alive connection is
  // closed after it too), and this long to take its answer: slow or silent
  // clients cannot hold a connection and its buffers forever.
  std::chrono::milliseconds request_timeout{60'000};
  // Connections open at once; one more is answered 503 and closed. 0: what the
  // process's file-descriptor limit leaves room for, less a reserve.
  size_t max_connections = 0;
  // Called on an I/O thread for every request; it must not throw (a throw is
  // answered with a 500 and logged).
  std::function<Response(const Request&)> handler;
  // The answer the server gives itself: to a request it refuses before the
  // handler sees it (413 or 431 too large, 400 malformed or plain HTTP on a
  // TLS port, 503 past max_connections) or whose handler failed (500);
  // `message` says why. The status is `status` whatever the answer says. Unset:
  // the message as text/plain. An API sets it to answer in its own error shape.
  // It must not throw; the 503 and the plain-HTTP answers are made once, by Start.
  std::function<Response(int status, std::string_view message)> error_response{};
};

class Server {
 public:
  explicit Server(ServerOptions options);
  ~Server();  // stops
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds and starts the I/O threads. Fails with a clear message if the address
  // cannot be bound (in use, not local, permission).
  Status Start();
  uint16_t port() const;  // the bound port, valid after Start()
  // Idempotent; closes connections and joins the threads. Call it from outside
  // the handler: a handler stopping its own server leaves its thread detached.
  void Stop();
  // Connections accepted since Start(), e.g. to check that clients keep them alive.
  uint64_t connections_accepted() const;
  // Connections refused because max_connections were open.
  uint64_t connections_refused() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kfpbench::http
