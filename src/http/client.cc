#include "http/client.h"

#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>
#include <spdlog/spdlog.h>

#include <array>
#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/throw_exception.hpp>
#include <cerrno>
#include <filesystem>
#include <mutex>
#include <system_error>
#include <vector>

#include "http/beast.h"
#include "util/secrets.h"

namespace kfpbench::http {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kReadChunk = 64 * 1024;  // the most one recv asks for

std::string ErrnoMessage(int err) { return std::system_category().message(err); }

// Owns a socket descriptor.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      Reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  ~Fd() { Reset(); }
  int get() const { return fd_; }

 private:
  void Reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int fd_;
};

constexpr std::string_view kCancelled = "cancelled before an answer came";

// How often a wait looks at the cancel flag.
constexpr std::chrono::milliseconds kCancelCheck{100};

// Waits until `fd` is ready for `events`, the deadline passes (timed_out) or
// `cancel` is set (operation_aborted).
bool WaitReady(int fd, short events, Clock::time_point deadline, beast::error_code& ec,
               const std::atomic<bool>* cancel) {
  while (true) {
    if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) {
      ec = asio::error::operation_aborted;
      return false;
    }
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      ec = asio::error::timed_out;
      return false;
    }
    if (cancel != nullptr) left = std::min(left, kCancelCheck);
    pollfd pfd{fd, events, 0};
    int r = ::poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left.count(), 1 << 30)));
    if (r > 0) return true;  // errors and hang-ups surface in the next recv/send
    if (r < 0 && errno != EINTR) {
      ec = beast::error_code(errno, beast::system_category());
      return false;
    }
  }
}

// A Beast SyncReadStream/SyncWriteStream on a non-blocking socket in which
// every operation fails with timed_out once the request's deadline has passed.
// Blocking calls with poll() keep Send() on the caller's thread (no hand-off to
// an I/O thread, so no extra latency in what kfpbench measures). For https an
// asio TLS stream wraps this one as its next layer; asio wants an executor
// from it (for asynchronous operations kfpbench never starts), hence `io`.
class DeadlineStream {
 public:
  using executor_type = asio::io_context::executor_type;
  using lowest_layer_type = DeadlineStream;

  DeadlineStream(int fd, asio::io_context& io) : fd_(fd), io_(io) {}

  // Starts a new exchange: every operation until the next call fails once
  // `deadline` has passed or `cancel` is set.
  void Begin(Clock::time_point deadline, const std::atomic<bool>* cancel) {
    deadline_ = deadline;
    cancel_ = cancel;
    bytes_read_ = 0;
    timed_out_ = false;
    cancelled_ = false;
    drained_ = true;
  }

  executor_type get_executor() { return io_.get_executor(); }
  lowest_layer_type& lowest_layer() { return *this; }

  template <typename MutableBufferSequence>
  size_t read_some(const MutableBufferSequence& buffers, beast::error_code& ec) {
    asio::mutable_buffer b;
    for (auto it = asio::buffer_sequence_begin(buffers); it != asio::buffer_sequence_end(buffers);
         ++it) {
      b = *it;
      if (b.size() > 0) break;
    }
    ec = {};
    if (b.size() == 0) return 0;
    // A socket that the last read drained (or that has just sent a request)
    // is most likely empty: wait first, saving a recv that would only say
    // EAGAIN (one syscall of three per read on the load generator's path).
    if (drained_ && !Wait(POLLIN, ec)) {
      return 0;
    }
    while (true) {
      ssize_t n = ::recv(fd_, b.data(), b.size(), 0);
      if (n > 0) {
        bytes_read_ += static_cast<size_t>(n);
        drained_ = static_cast<size_t>(n) < b.size();
        return static_cast<size_t>(n);
      }
      if (n == 0) {
        ec = asio::error::eof;
        return 0;
      }
      if (!Retry(POLLIN, ec)) return 0;
    }
  }

  template <typename ConstBufferSequence>
  size_t write_some(const ConstBufferSequence& buffers, beast::error_code& ec) {
    std::array<iovec, 16> iov;
    size_t count = 0;
    for (auto it = asio::buffer_sequence_begin(buffers);
         it != asio::buffer_sequence_end(buffers) && count < iov.size(); ++it) {
      asio::const_buffer b = *it;
      if (b.size() > 0) iov[count++] = {const_cast<void*>(b.data()), b.size()};
    }
    ec = {};
    if (count == 0) return 0;
    msghdr msg{};
    msg.msg_iov = iov.data();
    msg.msg_iovlen = count;
    while (true) {
      // MSG_NOSIGNAL: a peer that went away is an error here, not a SIGPIPE.
      ssize_t n = ::sendmsg(fd_, &msg, MSG_NOSIGNAL);
      if (n >= 0) return static_cast<size_t>(n);
      if (!Retry(POLLOUT, ec)) return 0;
    }
  }

  // The throwing overloads complete the stream concepts; kfpbench never calls them.
  template <typename MutableBufferSequence>
  size_t read_some(const MutableBufferSequence& buffers) {
    return OrThrow([&](beast::error_code& ec) { return read_some(buffers, ec); });
  }
  template <typename ConstBufferSequence>
  size_t write_some(const ConstBufferSequence& buffers) {
    return OrThrow([&](beast::error_code& ec) { return write_some(buffers, ec); });
  }

  size_t bytes_read() const { return bytes_read_; }
  bool timed_out() const { return timed_out_; }
  bool cancelled() const { return cancelled_; }

 private:
  template <typename Call>
  static size_t OrThrow(Call call) {
    beast::error_code ec;
    size_t n = call(ec);
    if (ec) BOOST_THROW_EXCEPTION(beast::system_error(ec));
    return n;
  }

  // After a recv or send that failed: whether to call it again, as it was
  // interrupted or the socket is now ready for `events`; `ec` set when not.
  bool Retry(short events, beast::error_code& ec) {
    if (errno == EINTR) return true;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      ec = beast::error_code(errno, beast::system_category());
      return false;
    }
    return Wait(events, ec);
  }

  bool Wait(short events, beast::error_code& ec) {
    if (WaitReady(fd_, events, deadline_, ec, cancel_)) return true;
    timed_out_ = ec == asio::error::timed_out;
    cancelled_ = ec == asio::error::operation_aborted;
    return false;
  }

  int fd_;
  asio::io_context& io_;
  Clock::time_point deadline_;
  const std::atomic<bool>* cancel_ = nullptr;
  size_t bytes_read_ = 0;
  bool timed_out_ = false;
  bool cancelled_ = false;
  bool drained_ = true;  // the last read left the socket empty
};

using TlsStream = asio::ssl::stream<DeadlineStream&>;

struct Connection {
  Connection(Fd f, asio::io_context& io) : fd(std::move(f)), raw(fd.get(), io) {}
  Fd fd;
  DeadlineStream raw;
  std::unique_ptr<TlsStream> tls;  // https only, wrapping `raw`
  beast::flat_buffer buffer;       // kept so a reused connection reuses its memory
};

bool IsIpLiteral(const std::string& host) {
  beast::error_code ec;
  asio::ip::make_address(host, ec);
  return !ec;
}

// The TLS settings every https connection of a client shares, or why they
// cannot be made (an unreadable CA file).
Result<std::unique_ptr<asio::ssl::context>> MakeTlsContext(const ClientOptions& o) {
  auto ctx = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_client);
  SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION);
  beast::error_code ec;
  if (o.insecure) {
    static std::once_flag warned;
    std::call_once(warned, [&] {
      spdlog::warn(
          "TLS certificates are not verified (--insecure): anyone on the path to {} can "
          "read and change the traffic",
          o.base.host);
    });
    ctx->set_verify_mode(asio::ssl::verify_none);
    return ctx;
  }
  ctx->set_verify_mode(asio::ssl::verify_peer);
  if (!o.ca_file.empty()) {
    std::error_code fs_ec;
    if (!std::filesystem::is_regular_file(o.ca_file, fs_ec)) {
      return Error{fmt::format("CA file {}: not a readable file", o.ca_file)};
    }
    if (ctx->load_verify_file(o.ca_file, ec)) {
      return Error{fmt::format("CA file {}: no PEM certificate could be loaded ({})", o.ca_file,
                               ec.message())};
    }
  } else if (ctx->set_default_verify_paths(ec)) {
    return Error{"cannot load the system's trusted certificates: " + ec.message()};
  }
  return ctx;
}

// Replaces every header named in `headers` (keeping several values of one name).
void ApplyHeaders(bhttp::request<bhttp::string_body>& req, const Headers& headers) {
  for (const auto& [name, value] : headers.entries()) req.erase(name);
  for (const auto& [name, value] : headers.entries()) req.insert(name, value);
}

}  // namespace

struct Client::Impl {
  explicit Impl(ClientOptions o) : options(std::move(o)) {
    const Url& base = options.base;
    url_text = base.ToString();
    bool ipv6 = base.host.find(':') != std::string::npos;
    bool default_port =
        (base.scheme == "http" && base.port == 80) || (base.scheme == "https" && base.port == 443);
    // fmt rather than operator+: g++ 12 -O3 reports a false -Wrestrict on the latter.
    host_header = fmt::format("{}{}{}", ipv6 ? "[" : "", base.host, ipv6 ? "]" : "");
    if (!default_port) host_header += fmt::format(":{}", base.port);
    if (base.scheme == "https") {
      auto ctx = MakeTlsContext(options);
      if (ctx.ok()) {
        tls = std::move(*ctx);
      } else {
        setup_error = fmt::format("cannot connect to {}: {}", url_text, ctx.error().message);
      }
    }
  }

  std::unique_ptr<Connection> TakeIdle() {
    std::lock_guard lock(mu);
    while (!idle.empty()) {
      // Most recently used first: the least likely to have been closed by the server.
      auto conn = std::move(idle.back());
      idle.pop_back();
      if (!PeerClosed(conn->fd.get())) return conn;
    }
    return nullptr;
  }

  // An idle connection with anything to read has been closed by the server
  // (EOF, a reset, a TLS close_notify): sending on it would fail, and for a
  // POST nobody could tell whether the server had acted.
  static bool PeerClosed(int fd) {
    pollfd p{fd, POLLIN | POLLRDHUP, 0};
    return ::poll(&p, 1, 0) != 0;
  }

  void ReturnIdle(std::unique_ptr<Connection> conn) {
    std::lock_guard lock(mu);
    if (idle.size() < options.max_idle_connections) idle.push_back(std::move(conn));
  }

  Result<std::unique_ptr<Connection>> Connect() const {
    auto fail = [&](std::string_view why) {
      return Error{Redact(fmt::format("cannot connect to {}: {}", url_text, why))};
    };
    const auto deadline = Clock::now() + options.connect_timeout;
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo* list = nullptr;
    // getaddrinfo has no timeout of its own; connect_timeout covers the connect.
    int rc = ::getaddrinfo(options.base.host.c_str(), std::to_string(options.base.port).c_str(),
                           &hints, &list);
    if (rc != 0) {
      return fail(fmt::format("cannot resolve {}: {}", options.base.host,
                              rc == EAI_SYSTEM ? ErrnoMessage(errno) : ::gai_strerror(rc)));
    }
    std::unique_ptr<addrinfo, void (*)(addrinfo*)> owner(list, ::freeaddrinfo);
    std::string last_error = "no address";
    for (addrinfo* ai = list; ai != nullptr; ai = ai->ai_next) {
      Fd fd(::socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol));
      if (fd.get() < 0) {
        last_error = ErrnoMessage(errno);
        continue;
      }
      int one = 1;
      ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      if (::connect(fd.get(), ai->ai_addr, ai->ai_addrlen) != 0) {
        if (errno != EINPROGRESS) {
          last_error = ErrnoMessage(errno);
          continue;
        }
        beast::error_code ec;
        if (!WaitReady(fd.get(), POLLOUT, deadline, ec, options.cancel)) {
          if (ec == asio::error::operation_aborted) return fail(kCancelled);
          if (ec == asio::error::timed_out) {
            return fail(fmt::format("timed out after {} ms", options.connect_timeout.count()));
          }
          last_error = ec.message();
          continue;
        }
        int err = 0;
        socklen_t len = sizeof(err);
        if (::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
        if (err != 0) {
          last_error = ErrnoMessage(err);
          continue;
        }
      }
      auto conn = std::make_unique<Connection>(std::move(fd), tls_io);
      if (tls) {
        if (Status s = Handshake(*conn, deadline); !s.ok()) return fail(s.error().message);
      }
      return conn;
    }
    return fail(last_error);
  }

  // TLS on a connected socket: SNI and the name to verify are the URL's host.
  Status Handshake(Connection& conn, Clock::time_point deadline) const {
    conn.tls = std::make_unique<TlsStream>(conn.raw, *tls);
    SSL* ssl = conn.tls->native_handle();
    const std::string& host = options.base.host;
    const bool ip = IsIpLiteral(host);
    if (!ip) SSL_set_tlsext_host_name(ssl, host.c_str());
    if (!options.insecure) {
      X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
      if (ip) {
        X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str());
      } else {
        X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
        X509_VERIFY_PARAM_set1_host(param, host.c_str(), host.size());
      }
    }
    conn.raw.Begin(deadline, options.cancel);
    beast::error_code ec;
    conn.tls->handshake(asio::ssl::stream_base::client, ec);
    if (!ec) return Ok();
    if (conn.raw.timed_out()) {
      return Error{
          fmt::format("TLS handshake timed out after {} ms", options.connect_timeout.count())};
    }
    long verify = SSL_get_verify_result(ssl);
    if (verify != X509_V_OK) {
      return Error{fmt::format(
          "TLS certificate rejected: {} (pass --ca-file with the CA that signed the server's "
          "certificate, or --insecure to skip verification)",
          X509_verify_cert_error_string(verify))};
    }
    if (ec.category() == asio::error::get_ssl_category() &&
        ERR_GET_REASON(ec.value()) == SSL_R_WRONG_VERSION_NUMBER) {
      return Error{"TLS handshake failed: the server does not speak TLS (try http://)"};
    }
    return Error{"TLS handshake failed: " + ec.message()};
  }

  ClientOptions options;
  std::string url_text;     // base URL for messages
  std::string host_header;  // "host[:port]"
  // https: never run; asio's TLS stream only needs it to construct its timers.
  mutable asio::io_context tls_io{1};
  std::unique_ptr<asio::ssl::context> tls;
  std::string setup_error;  // why https cannot work (fails every Send)
  std::mutex mu;            // guards idle
  std::vector<std::unique_ptr<Connection>> idle;
};

Client::Client(ClientOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

Client::~Client() = default;

const Url& Client::base() const { return impl_->options.base; }

namespace {
bool IsIdempotent(Method method) {
  return method == Method::kGet || method == Method::kHead || method == Method::kPut ||
         method == Method::kDelete || method == Method::kOptions;
}
}  // namespace

Result<Response> Client::Send(Method method, std::string_view target, std::string body,
                              std::string_view content_type, const Headers& extra) {
  Impl& c = *impl_;
  // Never the headers: they carry tokens.
  auto fail = [&](std::string_view why) {
    return Error{Redact(fmt::format("{} {}{}: {}", MethodName(method), c.url_text, target, why))};
  };
  if (!c.setup_error.empty()) return Error{c.setup_error};
  if (c.options.cancel != nullptr && c.options.cancel->load()) return fail(kCancelled);
  if (c.options.base.scheme != "http" && c.options.base.scheme != "https") {
    return Error{fmt::format("cannot connect to {}: unsupported scheme", c.url_text)};
  }
  auto verb = ToVerb(method);
  if (!verb) return fail("unsupported HTTP method");
  // A CR or LF in a value (a token file of several lines) would put a
  // header of its choosing on the wire; nothing is sent.
  for (const Headers* headers : {static_cast<const Headers*>(&c.options.default_headers), &extra}) {
    if (auto bad = InvalidHeader(*headers)) {
      return fail(*bad + "; nothing sent");
    }
  }
  if (!IsValidHeaderValue(content_type)) return fail("the content type holds a control character");

  std::string path = c.options.base.base_path;
  if (target.empty() || target.front() != '/') path += '/';
  path += target;
  bhttp::request<bhttp::string_body> req{*verb, path, 11};
  req.set(bhttp::field::host, c.host_header);
  req.set(bhttp::field::user_agent, "kfpbench/" KFPBENCH_VERSION);
  ApplyHeaders(req, c.options.default_headers);
  ApplyHeaders(req, extra);
  if (!content_type.empty()) {
    req.set(bhttp::field::content_type, content_type);
  } else if (!body.empty() && req.find(bhttp::field::content_type) == req.end()) {
    req.set(bhttp::field::content_type, "application/json");
  }
  req.body() = std::move(body);
  req.prepare_payload();

  for (int attempt = 0;; ++attempt) {
    std::unique_ptr<Connection> conn = c.TakeIdle();
    const bool reused = conn != nullptr;
    if (!conn) {
      auto fresh = c.Connect();
      if (!fresh.ok()) return fresh.error();
      conn = std::move(*fresh);
    }
    DeadlineStream& stream = conn->raw;
    stream.Begin(Clock::now() + c.options.request_timeout, c.options.cancel);
    // Beast reads as much as the buffer has room for (at least 512 bytes), and
    // the parser empties it into the body as it goes, so an unreserved buffer
    // reads a 40 KiB list answer in ~30 recv calls; room for 64 KiB reads it in
    // one or two. Reserved once: the connection keeps its buffer.
    conn->buffer.reserve(kReadChunk);
    beast::error_code ec;
    beast::error_code write_ec;
    std::optional<bhttp::response_parser<bhttp::string_body>> parser;
    bool got_response_bytes = false;
    auto exchange = [&](auto& io) {
      bhttp::write(io, req, ec);
      // Even when the write fails, a server that rejected the request early (413)
      // may have answered already, so read what is there.
      write_ec = ec;
      if (stream.timed_out() || stream.cancelled()) return;
      do {
        // 1xx answers (an unasked-for 100 Continue) precede the real one.
        parser.emplace();
        parser->header_limit(kHeaderLimit);
        parser->body_limit(c.options.max_response_bytes);
        if (method == Method::kHead) parser->skip(true);
        ec = {};
        bhttp::read(io, conn->buffer, *parser, ec);
        got_response_bytes = got_response_bytes || parser->got_some();
      } while (!ec && parser->get().result_int() / 100 == 1 && parser->get().result_int() != 101);
    };
    if (conn->tls) {
      exchange(*conn->tls);
    } else {
      exchange(stream);
    }
    if (!ec && !stream.timed_out() && !stream.cancelled()) {
      const bool reusable = !write_ec && parser->get().keep_alive() && !parser->need_eof() &&
                            conn->buffer.size() == 0;
      auto msg = parser->release();
      Response resp;
      resp.status = static_cast<int>(msg.result_int());
      for (const auto& field : msg) {
        resp.headers.Add(std::string(field.name_string()), std::string(field.value()));
      }
      resp.body = std::move(msg.body());
      if (reusable) c.ReturnIdle(std::move(conn));
      return resp;
    }
    const bool timed_out = stream.timed_out();
    const bool cancelled = stream.cancelled();
    // Over TLS a closing server may still send an alert, so what counts is
    // whether any of the HTTP answer arrived.
    const bool nothing_back = conn->tls ? !got_response_bytes : stream.bytes_read() == 0;
    conn.reset();
    if (timed_out) {
      return fail(fmt::format("no response within {} ms", c.options.request_timeout.count()));
    }
    if (cancelled) return fail(kCancelled);
    // A keep-alive connection the server closed as the request went out: try
    // a fresh one, but only when sending twice is harmless. A POST may have
    // been acted on (a run created) before the connection went, so it fails
    // and is counted instead of being sent again behind the caller's back.
    if (reused && nothing_back && attempt == 0 && IsIdempotent(method)) {
      retries_.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    if (ec == bhttp::error::body_limit) {
      return fail(fmt::format("the answer is larger than the {}-byte limit on responses",
                              c.options.max_response_bytes));
    }
    if (ec == bhttp::error::end_of_stream) return fail("connection closed before a response");
    if (ec == bhttp::error::partial_message) return fail("connection closed mid-response");
    return fail(ec.message());
  }
}

}  // namespace kfpbench::http
