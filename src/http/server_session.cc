#include "http/server_session.h"

#include <spdlog/spdlog.h>

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
#include <memory>
#include <type_traits>

#include <fmt/format.h>

#include "http/url.h"
#include "util/secrets.h"

namespace kfpbench::http::detail {
namespace {

using TlsSocket = asio::ssl::stream<tcp::socket>;

// After an error answer the rest of the request is read and dropped for a
// while, so that closing the socket does not reset the connection before the
// client has read the answer (a "lingering close").
constexpr auto kLingerTime = std::chrono::seconds(1);
constexpr size_t kLingerBytes = 64 * 1024 * 1024;
constexpr size_t kDrainChunk = 64 * 1024;

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

// The server's own answer (ServerOptions::error_response), with the status it
// is for.
Response OwnAnswer(const ErrorResponder& respond, int status, std::string_view message) {
  Response r = respond ? respond(status, message) : Response::Text(status, std::string(message));
  r.status = status;
  return r;
}

void StartSession(tcp::socket socket, asio::ssl::context* tls, Worker& worker,
                  const Shared& shared) {
  if (tls) {
    std::make_shared<Session<TlsSocket>>(TlsSocket(std::move(socket), *tls), worker, shared)
        ->Start();
  } else {
    std::make_shared<Session<tcp::socket>>(std::move(socket), worker, shared)->Start();
  }
}

}  // namespace kfpbench::http::detail
