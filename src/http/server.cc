#include "http/server.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <sys/resource.h>
#include <algorithm>
#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/detect_ssl.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/stream_traits.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>
#include <unordered_set>
#include <vector>

#include "http/beast.h"
#include "http/url.h"
#include "util/secrets.h"

namespace kfpbench::http {
namespace {

using tcp = asio::ip::tcp;
using TlsSocket = asio::ssl::stream<tcp::socket>;

// After an error answer the rest of the request is read and dropped for a
// while, so that closing the socket does not reset the connection before the
// client has read the answer (a "lingering close").
constexpr auto kLingerTime = std::chrono::seconds(1);
constexpr size_t kLingerBytes = 64 * 1024 * 1024;
constexpr size_t kDrainChunk = 64 * 1024;

using ErrorResponder = std::function<Response(int status, std::string_view message)>;

// The server's own answer (ServerOptions::error_response), with the status it
// is for.
Response OwnAnswer(const ErrorResponder& respond, int status, std::string_view message) {
  Response r = respond ? respond(status, message) : Response::Text(status, std::string(message));
  r.status = status;
  return r;
}

std::string ContentTypeOf(const Response& r) {
  return r.headers.Has("Content-Type") ? r.headers.Get("Content-Type") : "application/json";
}

Method FromVerb(bhttp::verb v) {
  switch (v) {
    case bhttp::verb::get:
      return Method::kGet;
    case bhttp::verb::post:
      return Method::kPost;
    case bhttp::verb::put:
      return Method::kPut;
    case bhttp::verb::patch:
      return Method::kPatch;
    case bhttp::verb::delete_:
      return Method::kDelete;
    case bhttp::verb::head:
      return Method::kHead;
    case bhttp::verb::options:
      return Method::kOptions;
    default:
      return Method::kOther;
  }
}

std::string HostPort(std::string_view host, uint16_t port) {
  bool ipv6 = host.find(':') != std::string_view::npos;
  return fmt::format("{}{}{}:{}", ipv6 ? "[" : "", host, ipv6 ? "]" : "", port);
}

// What a worker needs of a session of either kind (plain or TLS).
class SessionBase {
 public:
  virtual ~SessionBase() = default;
  virtual void Close() = 0;
};

// The whole answer to a plain-HTTP request on a TLS port, as nginx does it:
// one clear line instead of a TLS alert the client cannot read. Written
// before any TLS or HTTP parsing, so it is made once, as raw bytes.
std::string PlainRequestOnTlsPortAnswer(const ErrorResponder& respond) {
  Response r = OwnAnswer(respond, 400, "this port speaks TLS: use https://");
  return fmt::format(
      "HTTP/1.1 400 Bad Request\r\nServer: kfpbench\r\nContent-Type: {}\r\n"
      "Connection: close\r\nContent-Length: {}\r\n\r\n{}",
      ContentTypeOf(r), r.body.size(), r.body);
}

// The whole answer to a connection past max_connections, written without a
// session; made once.
std::string TooManyConnectionsAnswer(const ErrorResponder& respond) {
  Response r = OwnAnswer(respond, 503, "too many connections");
  return fmt::format(
      "HTTP/1.1 503 Service Unavailable\r\nContent-Type: {}\r\n"
      "Connection: close\r\nRetry-After: 1\r\nContent-Length: {}\r\n\r\n{}",
      ContentTypeOf(r), r.body.size(), r.body);
}

// Room for connections under the process's file-descriptor limit, keeping a
// reserve for the database, logs, pipeline files and executed steps.
size_t ConnectionsTheFdLimitAllows() {
  constexpr size_t kReserve = 64;
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 10'000;
  return limit.rlim_cur > 2 * kReserve ? limit.rlim_cur - kReserve : limit.rlim_cur / 2;
}

// One I/O thread with its own io_context. Sessions stay on the worker that
// accepted them, so nothing a session touches needs a lock or a strand.
struct Worker {
  // Declared before `io`: sessions still queued in `io` when it is destroyed
  // unregister themselves from this set.
  std::unordered_set<SessionBase*> sessions;
  bool stopping = false;  // set on the worker's thread by Stop()
  asio::io_context io{1};
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::thread thread;
};

struct Shared {
  size_t max_body_bytes;
  std::chrono::milliseconds request_timeout;
  const std::function<Response(const Request&)>* handler;
  const ErrorResponder* error_response;
  std::string plain_request_answer;       // PlainRequestOnTlsPortAnswer
  std::atomic<size_t>* open_connections;  // decremented as each session ends
};

// One connection; `Stream` is tcp::socket, or TlsSocket on a TLS server.
template <typename Stream>
class Session : public SessionBase, public std::enable_shared_from_this<Session<Stream>> {
  static constexpr bool kTls = std::is_same_v<Stream, TlsSocket>;

 public:
  Session(Stream stream, Worker& worker, const Shared& shared)
      : socket_(std::move(stream)),
        worker_(worker),
        shared_(shared),
        deadline_(socket_.get_executor()) {}
  ~Session() override {
    worker_.sessions.erase(this);
    shared_.open_connections->fetch_sub(1, std::memory_order_relaxed);
  }

  void Start() {
    worker_.sessions.insert(this);
    if constexpr (kTls) {
      StartTls();
    } else {
      ReadHeader();
    }
  }

  // Called on the worker's thread; pending operations complete with an error
  // and release the session.
  void Close() override {
    closed_ = true;
    CloseSocket();
  }

 private:
  using std::enable_shared_from_this<Session<Stream>>::shared_from_this;

  tcp::socket& Lowest() { return beast::get_lowest_layer(socket_); }

  // Looks at the first bytes: a TLS ClientHello gets the handshake, anything
  // else (a plain-HTTP client) a plain 400 that says to use https.
  void StartTls() {
    ArmDeadline();
    beast::async_detect_ssl(Lowest(), buffer_,
                            [self = shared_from_this()](beast::error_code ec, bool is_tls) {
                              if (ec) return self->CloseSocket();
                              if (!is_tls) return self->RefusePlainRequest();
                              self->socket_.async_handshake(
                                  asio::ssl::stream_base::server, self->buffer_.data(),
                                  [self](beast::error_code ec, size_t used) {
                                    if (ec) {
                                      // Usually a client that does not trust our certificate; it
                                      // says why.
                                      spdlog::debug("http: TLS handshake failed: {}", ec.message());
                                      return self->CloseSocket();
                                    }
                                    self->buffer_.consume(used);
                                    self->ReadHeader();
                                  });
                            });
  }

  void RefusePlainRequest() {
    const std::string& answer = shared_.plain_request_answer;
    asio::async_write(Lowest(), asio::buffer(answer.data(), answer.size()),
                      [self = shared_from_this()](beast::error_code ec, size_t) {
                        self->OnWrite(ec, /*keep_alive=*/false, /*linger=*/true);
                      });
  }

  // The client has request_timeout to send a whole request (or to take a
  // whole answer) from here; past it the connection is closed, which ends the
  // pending read or write.
  void ArmDeadline() {
    deadline_.expires_after(shared_.request_timeout);
    deadline_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (!ec) self->CloseSocket();
    });
  }

  void ReadHeader() {
    ArmDeadline();
    parser_.emplace();
    parser_->body_limit(shared_.max_body_bytes);
    parser_->header_limit(kHeaderLimit);
    bhttp::async_read_header(
        socket_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, size_t) { self->OnHeader(ec); });
  }

  void OnHeader(beast::error_code ec) {
    if (ec) return OnReadError(ec);
    // Most requests have no body, and then the message is complete already.
    if (parser_->is_done()) return Handle();
    const auto& req = parser_->get();
    if (beast::iequals(req[bhttp::field::expect], "100-continue")) {
      // curl waits a second for this before sending a large upload.
      static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      asio::async_write(socket_, asio::buffer(kContinue.data(), kContinue.size()),
                        [self = shared_from_this()](beast::error_code ec, size_t) {
                          if (ec) return self->CloseSocket();
                          self->ReadBody();
                        });
      return;
    }
    ReadBody();
  }

  void ReadBody() {
    bhttp::async_read(socket_, buffer_, *parser_,
                      [self = shared_from_this()](beast::error_code ec, size_t) {
                        if (ec) return self->OnReadError(ec);
                        self->Handle();
                      });
  }

  void OnReadError(beast::error_code ec) {
    if (closed_) return;
    if (ec == bhttp::error::end_of_stream) {
      // The client closed an idle keep-alive connection.
      beast::error_code ignored;
      Lowest().shutdown(tcp::socket::shutdown_send, ignored);
      return CloseSocket();
    }
    if (ec == bhttp::error::body_limit) {
      return WriteError(
          413, fmt::format("request body is larger than {} bytes", shared_.max_body_bytes));
    }
    if (ec == bhttp::error::header_limit) {
      return WriteError(431, "request headers are too large");
    }
    if (ec.category() == bhttp::make_error_code(bhttp::error::bad_method).category() &&
        ec != bhttp::error::partial_message) {
      return WriteError(400, "malformed HTTP request: " + ec.message());
    }
    CloseSocket();  // reset, EOF mid-request and the like: nobody to answer
  }

  void Handle() {
    deadline_.cancel();  // the handler's time is not the client's
    auto& msg = parser_->get();
    const bool keep_alive = msg.keep_alive();
    const unsigned version = msg.version();
    const bool head = msg.method() == bhttp::verb::head;

    Request req;
    req.method = FromVerb(msg.method());
    req.target.assign(msg.target().data(), msg.target().size());
    std::string_view target = req.target;
    size_t q = target.find('?');
    auto path = PercentDecode(target.substr(0, q), /*plus_as_space=*/false);
    if (!path.ok()) {
      return WriteResponse(Own(400, "bad path: " + path.error().message), keep_alive, version,
                           head);
    }
    req.path = std::move(*path);
    if (q != std::string_view::npos) {
      auto query = ParseQuery(target.substr(q + 1));
      if (!query.ok()) {
        return WriteResponse(Own(400, query.error().message), keep_alive, version, head);
      }
      req.query = std::move(*query);
    }
    for (const auto& field : msg) {
      req.headers.Add(std::string(field.name_string()), std::string(field.value()));
    }
    req.body = std::move(msg.body());

    Response resp;
    try {
      resp = (*shared_.handler)(req);
    } catch (const std::exception& e) {
      spdlog::error("http: handler for {} {} threw: {}", MethodName(req.method), req.path,
                    Redact(e.what()));
      resp = Own(500, "internal error");
    } catch (...) {
      spdlog::error("http: handler for {} {} threw a non-exception", MethodName(req.method),
                    req.path);
      resp = Own(500, "internal error");
    }
    WriteResponse(std::move(resp), keep_alive, version, head);
  }

  void WriteResponse(Response resp, bool keep_alive, unsigned version, bool head,
                     bool linger = false) {
    if (resp.status < 100 || resp.status > 999) {
      spdlog::error("http: handler returned invalid status {}", resp.status);
      resp = Own(500, "internal error");
    }
    res_ = {};
    res_.version(version);
    res_.result(static_cast<unsigned>(resp.status));
    res_.set(bhttp::field::server, "kfpbench");
    for (const auto& [name, value] : resp.headers.entries()) res_.insert(name, value);
    if (!resp.body.empty() && !resp.headers.Has("Content-Type")) {
      res_.set(bhttp::field::content_type, "application/json");
    }
    const bool bodiless = resp.status < 200 || resp.status == 204 || resp.status == 304;
    if (bodiless) {
      res_.erase(bhttp::field::content_length);
    } else {
      // HEAD answers carry the length of the body they leave out.
      res_.content_length(resp.body.size());
      if (!head) res_.body() = std::move(resp.body);
    }
    res_.keep_alive(keep_alive);
    ArmDeadline();
    bhttp::async_write(
        socket_, res_,
        [self = shared_from_this(), keep_alive, linger](beast::error_code ec, size_t) {
          self->OnWrite(ec, keep_alive, linger);
        });
  }

  Response Own(int status, std::string_view message) const {
    return OwnAnswer(*shared_.error_response, status, message);
  }

  void WriteError(int status, std::string_view message) {
    WriteResponse(Own(status, message), /*keep_alive=*/false, 11, /*head=*/false,
                  /*linger=*/true);
  }

  void OnWrite(beast::error_code ec, bool keep_alive, bool linger) {
    deadline_.cancel();
    res_ = {};  // an idle connection should not hold on to a large answer
    if (ec || closed_) return CloseSocket();
    if (keep_alive) return ReadHeader();
    beast::error_code ignored;
    Lowest().shutdown(tcp::socket::shutdown_send, ignored);
    if (!linger) return CloseSocket();
    linger_timer_.emplace(socket_.get_executor());
    linger_timer_->expires_after(kLingerTime);
    linger_timer_->async_wait([self = shared_from_this()](beast::error_code ec) {
      if (!ec) self->CloseSocket();
    });
    Drain();
  }

  // Reads the raw socket: over TLS the bytes dropped are still encrypted.
  void Drain() {
    buffer_.consume(buffer_.size());
    Lowest().async_read_some(buffer_.prepare(kDrainChunk),
                             [self = shared_from_this()](beast::error_code ec, size_t n) {
                               self->drained_ += n;
                               if (ec || self->drained_ > kLingerBytes) return self->CloseSocket();
                               self->Drain();
                             });
  }

  void CloseSocket() {
    beast::error_code ignored;
    deadline_.cancel();
    if (linger_timer_) linger_timer_->cancel();
    Lowest().close(ignored);
  }

  Stream socket_;
  Worker& worker_;
  const Shared& shared_;
  beast::flat_buffer buffer_;  // reused for every request on the connection
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  bhttp::response<bhttp::string_body> res_;
  asio::steady_timer deadline_;
  std::optional<asio::steady_timer> linger_timer_;
  size_t drained_ = 0;
  bool closed_ = false;
};

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
          if (tls) {
            std::make_shared<Session<TlsSocket>>(TlsSocket(std::move(s), *tls), worker, shared)
                ->Start();
          } else {
            std::make_shared<Session<tcp::socket>>(std::move(s), worker, shared)->Start();
          }
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
    w->thread = std::thread([worker] { worker->io.run(); });
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
    if (w->thread.get_id() == std::this_thread::get_id()) {
      w->thread.detach();
    } else if (w->thread.joinable()) {
      w->thread.join();
    }
  }
}

}  // namespace kfpbench::http
