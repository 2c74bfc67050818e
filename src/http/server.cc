#include "http/server.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <sys/resource.h>
#include <algorithm>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "http/beast.h"
#include "http/server_session.h"

namespace kfpbench::http {
namespace {

using detail::ErrorResponder;
using detail::OwnAnswer;
using detail::SessionBase;
using detail::Shared;
using detail::StartSession;
using detail::Worker;
using tcp = asio::ip::tcp;

std::string ContentTypeOf(const Response& r) {
  return r.headers.Has("Content-Type") ? r.headers.Get("Content-Type") : "application/json";
}

std::string HostPort(std::string_view host, uint16_t port) {
  bool ipv6 = host.find(':') != std::string_view::npos;
  return fmt::format("{}{}{}:{}", ipv6 ? "[" : "", host, ipv6 ? "]" : "", port);
}

// The server's own answer as raw bytes, for the two written before or
// without a session; each is made once. `before` and `after` are header
// lines around Content-Type and Connection.
std::string RawAnswer(const ErrorResponder& respond, int status, std::string_view reason,
                      std::string_view message, std::string_view before, std::string_view after) {
  Response r = OwnAnswer(respond, status, message);
  return fmt::format(
      "HTTP/1.1 {} {}\r\n{}Content-Type: {}\r\nConnection: close\r\n{}Content-Length: {}\r\n\r\n{}",
      status, reason, before, ContentTypeOf(r), after, r.body.size(), r.body);
}

// The whole answer to a plain-HTTP request on a TLS port, as nginx does it:
// one clear line instead of a TLS alert the client cannot read. Written
// before any TLS or HTTP parsing.
std::string PlainRequestOnTlsPortAnswer(const ErrorResponder& respond) {
  return RawAnswer(respond, 400, "Bad Request", "this port speaks TLS: use https://",
                   "Server: kfpbench\r\n", "");
}

// The whole answer to a connection past max_connections.
std::string TooManyConnectionsAnswer(const ErrorResponder& respond) {
  return RawAnswer(respond, 503, "Service Unavailable", "too many connections", "",
                   "Retry-After: 1\r\n");
}

// Room for connections under the process's file-descriptor limit, keeping a
// reserve for the database, logs, pipeline files and executed steps.
size_t ConnectionsTheFdLimitAllows() {
  constexpr size_t kReserve = 64;
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 10'000;
  return limit.rlim_cur > 2 * kReserve ? limit.rlim_cur - kReserve : limit.rlim_cur / 2;
}

}  // namespace

struct Server::Impl {
  explicit Impl(ServerOptions o) : options(std::move(o)) {}

  void Accept() {
    Worker& worker = *workers[next_worker++ % workers.size()];
    acceptor->async_accept(worker.io, [this, &worker](beast::error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted || !acceptor->is_open()) return;
      if (ec) return AcceptFailed(ec);
      if (accept_backoff.count() > 0) {
        spdlog::info("http: accepting on port {} again after {} failed tries", port,
                     accept_failures);
        accept_backoff = {};
        accept_failures = 0;
      }
      beast::error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      connections.fetch_add(1, std::memory_order_relaxed);
      if (open_connections.fetch_add(1, std::memory_order_relaxed) >= max_connections) {
        open_connections.fetch_sub(1, std::memory_order_relaxed);
        Refuse(std::move(socket));
      } else {
        asio::post(worker.io, [this, &worker, s = std::move(socket)]() mutable {
          if (worker.stopping) {  // `s` closes as the handler is destroyed
            open_connections.fetch_sub(1, std::memory_order_relaxed);
            return;
          }
          StartSession(std::move(s), tls.get(), worker, shared);
        });
      }
      Accept();
    });
  }

  // Usually out of file descriptors (EMFILE, ENFILE). The connection stays in
  // the listen backlog, so accepting again at once would fail again at once:
  // wait, doubling from 10 ms to a second, and say so once, not per try.
  void AcceptFailed(beast::error_code ec) {
    if (accept_failures++ == 0) {
      spdlog::warn("http: accept on port {} failed: {}; retrying, up to a second apart", port,
                   ec.message());
    }
    accept_backoff = std::clamp(accept_backoff * 2, std::chrono::milliseconds(10),
                                std::chrono::milliseconds(1000));
    accept_timer->expires_after(accept_backoff);
    accept_timer->async_wait([this](beast::error_code wait_ec) {
      if (!wait_ec && acceptor->is_open()) Accept();
    });
  }

  // Over max_connections: a short 503 on a best-effort write, then close. The
  // answer fits in the socket's send buffer, so the write does not wait.
  void Refuse(tcp::socket socket) {
    refused.fetch_add(1, std::memory_order_relaxed);
    socket.non_blocking(true);
    beast::error_code ignored;
    asio::write(socket, asio::buffer(too_many_connections_answer), ignored);
    socket.shutdown(tcp::socket::shutdown_both, ignored);
    socket.close(ignored);
  }

  ServerOptions options;
  Shared shared{};
  std::mutex mu;  // guards state changes in Start and Stop
  enum class State { kIdle, kRunning, kStopped } state = State::kIdle;
  uint16_t port = 0;
  std::atomic<uint64_t> connections{0};
  std::atomic<uint64_t> refused{0};
  std::atomic<size_t> open_connections{0};
  size_t max_connections = 0;
  std::string too_many_connections_answer;  // made by Start
  // Used on the accepting thread only.
  size_t next_worker = 0;
  std::chrono::milliseconds accept_backoff{0};
  uint64_t accept_failures = 0;
  // Set when the options name a certificate; outlives the workers' sessions.
  std::unique_ptr<asio::ssl::context> tls;
  std::vector<std::unique_ptr<Worker>> workers;
  // Declared after `workers` so that they are destroyed before their io_contexts.
  std::optional<tcp::acceptor> acceptor;
  std::optional<asio::steady_timer> accept_timer;  // backs off Accept() (accepting thread)
};

Server::Server(ServerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

Server::~Server() { Stop(); }

Status Server::Start() {
  Impl& s = *impl_;
  std::lock_guard lock(s.mu);
  if (s.state != Impl::State::kIdle) return Error{"server was already started"};
  if (!s.options.handler) return Error{"server has no handler"};
  const std::string where = HostPort(s.options.address, s.options.port);
  auto fail = [&](std::string_view why) {
    s.acceptor.reset();
    s.workers.clear();
    return Error{fmt::format("cannot listen on {}: {}", where, why)};
  };

  if (s.options.tls_cert_file.empty() != s.options.tls_key_file.empty()) {
    return Error{"TLS needs both a certificate file and a key file"};
  }
  if (!s.options.tls_cert_file.empty()) {
    auto ctx = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_server);
    SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION);
    beast::error_code ec;
    if (ctx->use_certificate_chain_file(s.options.tls_cert_file, ec)) {
      return Error{fmt::format("TLS certificate {}: cannot load a PEM certificate ({})",
                               s.options.tls_cert_file, ec.message())};
    }
    if (ctx->use_private_key_file(s.options.tls_key_file, asio::ssl::context::pem, ec)) {
      return Error{fmt::format("TLS key {}: cannot load a PEM private key matching {} ({})",
                               s.options.tls_key_file, s.options.tls_cert_file, ec.message())};
    }
    s.tls = std::move(ctx);
  }

  int threads = std::max(1, s.options.threads);
  for (int i = 0; i < threads; ++i) s.workers.push_back(std::make_unique<Worker>());
  asio::io_context& io0 = s.workers.front()->io;

  beast::error_code ec;
  tcp::endpoint endpoint;
  auto address = asio::ip::make_address(s.options.address, ec);
  if (!ec) {
    endpoint = tcp::endpoint(address, s.options.port);
  } else {
    // A host name such as "localhost".
    tcp::resolver resolver(io0);
    auto results = resolver.resolve(s.options.address, std::to_string(s.options.port),
                                    tcp::resolver::passive | tcp::resolver::numeric_service, ec);
    if (ec) return fail(ec.message());
    if (results.empty()) return fail("address not found");
    endpoint = results.begin()->endpoint();
  }

  s.acceptor.emplace(io0);
  if (s.acceptor->open(endpoint.protocol(), ec)) return fail(ec.message());
  // Lets a restarted server bind while old connections sit in TIME_WAIT; Linux
  // still refuses a port another socket is listening on.
  if (s.acceptor->set_option(asio::socket_base::reuse_address(true), ec)) return fail(ec.message());
  if (s.acceptor->bind(endpoint, ec)) return fail(ec.message());
  if (s.acceptor->listen(asio::socket_base::max_listen_connections, ec)) return fail(ec.message());
  s.port = s.acceptor->local_endpoint(ec).port();
  if (ec) return fail(ec.message());

  s.shared = Shared{s.options.max_body_bytes,
                    s.options.request_timeout,
                    &s.options.handler,
                    &s.options.error_response,
                    PlainRequestOnTlsPortAnswer(s.options.error_response),
                    &s.open_connections};
  s.too_many_connections_answer = TooManyConnectionsAnswer(s.options.error_response);
  s.max_connections =
      s.options.max_connections > 0 ? s.options.max_connections : ConnectionsTheFdLimitAllows();
  s.accept_timer.emplace(io0);
  s.Accept();
  for (auto& w : s.workers) {
    w->work.emplace(w->io.get_executor());
    Worker* worker = w.get();
    w->thread = StackThread([worker] { worker->io.run(); });
  }
  s.state = Impl::State::kRunning;
  return Ok();
}

uint16_t Server::port() const { return impl_->port; }

uint64_t Server::connections_accepted() const {
  return impl_->connections.load(std::memory_order_relaxed);
}

uint64_t Server::connections_refused() const {
  return impl_->refused.load(std::memory_order_relaxed);
}

void Server::Stop() {
  Impl& s = *impl_;
  std::lock_guard lock(s.mu);
  if (s.state != Impl::State::kRunning) return;
  s.state = Impl::State::kStopped;
  asio::post(s.workers.front()->io, [&s] {
    beast::error_code ignored;
    s.acceptor->close(ignored);
    s.accept_timer->cancel();
  });
  for (auto& w : s.workers) {
    Worker* worker = w.get();
    asio::post(worker->io, [worker] {
      worker->stopping = true;
      // Close() does not destroy a session (its pending operation holds it),
      // but copy anyway so the loop never depends on that.
      std::vector<SessionBase*> sessions(worker->sessions.begin(), worker->sessions.end());
      for (SessionBase* session : sessions) session->Close();
    });
    // Without the guard, run() returns once the closed sessions have finished.
    worker->work.reset();
  }
  for (auto& w : s.workers) {
    // A handler that stops its own server cannot join its own thread.
    if (w->thread.IsCurrent()) {
      w->thread.detach();
    } else if (w->thread.joinable()) {
      w->thread.join();
    }
  }
}

}  // namespace kfpbench::http
