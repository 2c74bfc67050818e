// What a target answers, as http::Client reads it: a loopback server of the
// fuzzer's own sends the input as the whole answer to one GET and closes.
// Whatever it claims (a 1 GiB Content-Length, endless chunks, 1xx answers),
// the client must end with a Response or an Error within its body limit.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "fuzz/fuzz_support.h"
#include "http/client.h"

namespace {

// Accepts one connection per answer set, reads the request head, sends the
// answer, closes.
class OneShotServer {
 public:
  OneShotServer() {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    ::listen(listener_, 16);
    socklen_t len = sizeof(a);
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { Serve(); });
    thread_.detach();  // lives as long as the fuzzer
  }
  uint16_t port() const { return port_; }
  void SetAnswer(std::string answer) {
    std::lock_guard lock(mu_);
    answer_ = std::move(answer);
  }

 private:
  void Serve() {
    for (;;) {
      int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      timeval tv{1, 0};
      ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
      std::string head;
      char buffer[4096];
      while (head.find("\r\n\r\n") == std::string::npos) {
        ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
        if (n <= 0) break;
        head.append(buffer, static_cast<size_t>(n));
      }
      std::string answer;
      {
        std::lock_guard lock(mu_);
        answer = answer_;
      }
      std::string_view rest = answer;
      while (!rest.empty()) {
        ssize_t n = ::send(fd, rest.data(), rest.size(), MSG_NOSIGNAL);
        if (n <= 0) break;
        rest.remove_prefix(static_cast<size_t>(n));
      }
      ::close(fd);
    }
  }

  int listener_ = -1;
  uint16_t port_ = 0;
  std::mutex mu_;
  std::string answer_;
  std::thread thread_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kfpbench;
  static OneShotServer server;
  static http::Client client([] {
    http::ClientOptions o;
    o.base.scheme = "http";
    o.base.host = "127.0.0.1";
    o.base.port = server.port();
    o.request_timeout = std::chrono::milliseconds(500);
    o.max_response_bytes = 64 * 1024;
    o.max_idle_connections = 0;  // one answer per connection
    return o;
  }());
  server.SetAnswer(std::string(fuzz::Text(data, size)));
  auto answer = client.Send(http::Method::kGet, "/apis/v2beta1/runs");
  if (answer.ok() && answer->body.size() > 64 * 1024) __builtin_trap();
  return 0;
}
