// https between http::Client and http::Server on 127.0.0.1, with a throwaway
// CA: verification on by default, --ca-file, hostname checks, --insecure, and
// clear errors when one side speaks TLS and the other does not.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "http/client.h"
#include "http/server.h"
#include "http/test_certificates.h"

namespace kfpbench::http {
namespace {

using std::chrono::milliseconds;

bool Contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

class TlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::filesystem::temp_directory_path() /
           ("kfpbench-tls-test-" + std::to_string(::getpid()));
    pki_ = testing::MakeTestPki(dir_);
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // A TLS server answering every request with its path.
  std::unique_ptr<Server> StartTlsServer(const std::filesystem::path& cert,
                                         const std::filesystem::path& key) {
    ServerOptions o;
    o.tls_cert_file = cert;
    o.tls_key_file = key;
    o.handler = [](const Request& r) { return Response::Text(200, "hello " + r.path); };
    auto server = std::make_unique<Server>(std::move(o));
    Status st = server->Start();
    EXPECT_TRUE(st.ok()) << st.error().message;
    return server;
  }

  static ClientOptions Options(std::string scheme, std::string host, uint16_t port) {
    ClientOptions o;
    o.base.scheme = std::move(scheme);
    o.base.host = std::move(host);
    o.base.port = port;
    o.connect_timeout = milliseconds(5000);
    o.request_timeout = milliseconds(10000);
    return o;
  }

  static inline std::filesystem::path dir_;
  static inline testing::TestPki pki_;
};

TEST_F(TlsTest, TrustedPrivateCaWorksAndConnectionsAreKeptAlive) {
  auto server = StartTlsServer(pki_.server_cert, pki_.server_key);
  for (std::string host : {"127.0.0.1", "localhost"}) {
    ClientOptions o = Options("https", host, server->port());
    o.ca_file = pki_.ca_cert;
    Client client(std::move(o));
    for (int i = 0; i < 3; ++i) {
      auto r = client.Send(Method::kPost, "/apis/v2beta1/runs", std::string(100000, 'x'));
      ASSERT_TRUE(r.ok()) << host << ": " << r.error().message;
      EXPECT_EQ(r->status, 200);
      EXPECT_EQ(r->body, "hello /apis/v2beta1/runs");
    }
  }
  // One TLS connection per client, reused for every request.
  EXPECT_EQ(server->connections_accepted(), 2u);
}

TEST_F(TlsTest, UnknownCaIsRejectedWithAHint) {
  auto server = StartTlsServer(pki_.server_cert, pki_.server_key);
  Client client(Options("https", "127.0.0.1", server->port()));  // system trust store only
  auto r = client.Send(Method::kGet, "/");
  ASSERT_FALSE(r.ok());
  const std::string& m = r.error().message;
  EXPECT_EQ(r.error().code, 0);
  EXPECT_TRUE(Contains(m, "https://127.0.0.1:")) << m;
  EXPECT_TRUE(Contains(m, "TLS certificate rejected: unable to get local issuer certificate")) << m;
  EXPECT_TRUE(Contains(m, "--ca-file")) << m;
}

TEST_F(TlsTest, CertificateForAnotherHostIsRejected) {
  auto server = StartTlsServer(pki_.other_cert, pki_.other_key);
  {
    ClientOptions o = Options("https", "localhost", server->port());
    o.ca_file = pki_.ca_cert;
    Client client(std::move(o));
    auto r = client.Send(Method::kGet, "/");
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(Contains(r.error().message, "TLS certificate rejected: hostname mismatch"))
        << r.error().message;
  }
  {
    ClientOptions o = Options("https", "127.0.0.1", server->port());
    o.ca_file = pki_.ca_cert;
    Client client(std::move(o));
    auto r = client.Send(Method::kGet, "/");
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(Contains(r.error().message, "TLS certificate rejected: IP address mismatch"))
        << r.error().message;
  }
}

TEST_F(TlsTest, InsecureSkipsVerification) {
  auto server = StartTlsServer(pki_.other_cert, pki_.other_key);
  ClientOptions o = Options("https", "127.0.0.1", server->port());
  o.insecure = true;
  Client client(std::move(o));
  auto r = client.Send(Method::kGet, "/x");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->body, "hello /x");
}

TEST_F(TlsTest, PlainHttpToATlsPortGetsAClearAnswer) {
  auto server = StartTlsServer(pki_.server_cert, pki_.server_key);
  Client client(Options("http", "127.0.0.1", server->port()));
  auto r = client.Send(Method::kPost, "/apis/v2beta1/runs", R"({"display_name":"x"})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status, 400);
  EXPECT_TRUE(Contains(r->body, "this port speaks TLS: use https://")) << r->body;
  // The TLS server still serves TLS clients afterwards.
  ClientOptions o = Options("https", "127.0.0.1", server->port());
  o.ca_file = pki_.ca_cert;
  Client tls_client(std::move(o));
  auto ok = tls_client.Send(Method::kGet, "/after");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->body, "hello /after");
}

TEST_F(TlsTest, HttpsToAPlainServerSaysSo) {
  ServerOptions so;
  so.handler = [](const Request&) { return Response::Text(200, "plain"); };
  Server plain(std::move(so));
  ASSERT_TRUE(plain.Start().ok());
  ClientOptions o = Options("https", "127.0.0.1", plain.port());
  o.ca_file = pki_.ca_cert;
  Client client(std::move(o));
  auto r = client.Send(Method::kGet, "/");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.error().message, "TLS handshake failed")) << r.error().message;
}

TEST_F(TlsTest, UnusableCaFileFailsEveryCallNamingTheFile) {
  auto server = StartTlsServer(pki_.server_cert, pki_.server_key);
  {
    ClientOptions o = Options("https", "127.0.0.1", server->port());
    o.ca_file = dir_ / "missing.pem";
    Client client(std::move(o));
    auto r = client.Send(Method::kGet, "/");
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(Contains(r.error().message, "missing.pem: not a readable file"))
        << r.error().message;
  }
  {
    std::ofstream(dir_ / "garbage.pem") << "not a certificate\n";
    ClientOptions o = Options("https", "127.0.0.1", server->port());
    o.ca_file = dir_ / "garbage.pem";
    Client client(std::move(o));
    auto r = client.Send(Method::kGet, "/");
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(Contains(r.error().message, "garbage.pem: no PEM certificate could be loaded"))
        << r.error().message;
  }
}

TEST_F(TlsTest, ServerRefusesMissingOrMismatchedKeyFiles) {
  {
    ServerOptions o;
    o.tls_cert_file = pki_.server_cert;
    o.handler = [](const Request&) { return Response::Text(200, ""); };
    Server s(std::move(o));
    Status st = s.Start();
    ASSERT_FALSE(st.ok());
    EXPECT_TRUE(Contains(st.error().message, "both a certificate file and a key file"));
  }
  {
    ServerOptions o;
    o.tls_cert_file = pki_.server_cert;
    o.tls_key_file = pki_.other_key;  // not the certificate's key
    o.handler = [](const Request&) { return Response::Text(200, ""); };
    Server s(std::move(o));
    Status st = s.Start();
    ASSERT_FALSE(st.ok());
    EXPECT_TRUE(Contains(st.error().message, "other-key.pem")) << st.error().message;
  }
  {
    ServerOptions o;
    o.tls_cert_file = dir_ / "nope.pem";
    o.tls_key_file = pki_.server_key;
    o.handler = [](const Request&) { return Response::Text(200, ""); };
    Server s(std::move(o));
    Status st = s.Start();
    ASSERT_FALSE(st.ok());
    EXPECT_TRUE(Contains(st.error().message, "TLS certificate")) << st.error().message;
    EXPECT_TRUE(Contains(st.error().message, "nope.pem")) << st.error().message;
  }
}

}  // namespace
}  // namespace kfpbench::http
