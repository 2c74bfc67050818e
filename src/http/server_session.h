// What the HTTP server's accept loop and its connections share: the I/O
// workers, the settings every connection reads, and the start of a
// connection. Internal to src/http/ (server.cc and server_session.cc).
#pragma once

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_set>

#include "http/beast.h"
#include "http/message.h"
#include "util/stack_thread.h"

namespace kfpbench::http::detail {

using tcp = asio::ip::tcp;

using ErrorResponder = std::function<Response(int status, std::string_view message)>;

// The server's own answer (ServerOptions::error_response), with the status it
// is for.
Response OwnAnswer(const ErrorResponder& respond, int status, std::string_view message);

// What a worker needs of a session of either kind (plain or TLS).
class SessionBase {
 public:
  virtual ~SessionBase() = default;
  virtual void Close() = 0;
};

// One I/O thread with its own io_context. Sessions stay on the worker that
// accepted them, so nothing a session touches needs a lock or a strand.
struct Worker {
  // Declared before `io`: sessions still queued in `io` when it is destroyed
  // unregister themselves from this set.
  std::unordered_set<SessionBase*> sessions;
  bool stopping = false;  // set on the worker's thread by Stop()
  asio::io_context io{1};
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  // Handlers run here, on JSON as deep as the readers accept.
  StackThread thread;
};

struct Shared {
  size_t max_body_bytes;
  std::chrono::milliseconds request_timeout;
  const std::function<Response(const Request&)>* handler;
  const ErrorResponder* error_response;
  std::string plain_request_answer;       // PlainRequestOnTlsPortAnswer
  std::atomic<size_t>* open_connections;  // decremented as each session ends
};

// Starts serving one accepted connection on `worker` (its thread), over TLS
// when `tls` is set. The connection lives as long as it has I/O pending.
void StartSession(tcp::socket socket, asio::ssl::context* tls, Worker& worker,
                  const Shared& shared);

}  // namespace kfpbench::http::detail
