// Test support: a throwaway CA and server certificates made with OpenSSL's C
// API (no `openssl` binary needed), written as PEM files into a folder.
#pragma once

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

namespace kfpbench::http::testing {

struct KeyDeleter {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct CertDeleter {
  void operator()(X509* x) const { X509_free(x); }
};
using Key = std::unique_ptr<EVP_PKEY, KeyDeleter>;
using Cert = std::unique_ptr<X509, CertDeleter>;

inline void AddExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr) throw std::runtime_error(std::string("bad extension ") + value);
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

// A certificate for `key` named `common_name`, signed by the issuer (itself
// when `issuer` is null), valid from an hour ago for a day.
inline Cert MakeCert(EVP_PKEY* key, const std::string& common_name, X509* issuer,
                     EVP_PKEY* issuer_key, long serial, bool is_ca, const std::string& alt_names) {
  Cert cert(X509_new());
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 86400);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1,
                             0);
  X509* signer = issuer != nullptr ? issuer : cert.get();
  X509_set_issuer_name(cert.get(), X509_get_subject_name(signer));
  AddExtension(cert.get(), signer, NID_subject_key_identifier, "hash");
  if (is_ca) {
    AddExtension(cert.get(), signer, NID_basic_constraints, "critical,CA:TRUE");
    AddExtension(cert.get(), signer, NID_key_usage, "critical,keyCertSign,cRLSign");
  } else {
    AddExtension(cert.get(), signer, NID_basic_constraints, "critical,CA:FALSE");
    AddExtension(cert.get(), signer, NID_ext_key_usage, "serverAuth");
    AddExtension(cert.get(), signer, NID_subject_alt_name, alt_names.c_str());
  }
  if (X509_sign(cert.get(), issuer_key != nullptr ? issuer_key : key, EVP_sha256()) == 0) {
    throw std::runtime_error("X509_sign failed");
  }
  return cert;
}

inline void WritePem(const std::filesystem::path& path, X509* cert, EVP_PKEY* key) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) throw std::runtime_error("cannot write " + path.string());
  bool ok = cert != nullptr
                ? PEM_write_X509(f, cert) == 1
                : PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr) == 1;
  std::fclose(f);
  if (!ok) throw std::runtime_error("cannot write PEM to " + path.string());
}

struct TestPki {
  std::filesystem::path ca_cert;      // the CA clients are told to trust
  std::filesystem::path server_cert;  // for localhost and 127.0.0.1
  std::filesystem::path server_key;
  std::filesystem::path other_cert;  // signed by the same CA, for other.example only
  std::filesystem::path other_key;
};

// Writes the CA and two server certificates into `dir`.
inline TestPki MakeTestPki(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  Key ca_key(EVP_EC_gen("P-256"));
  Cert ca = MakeCert(ca_key.get(), "kfpbench test CA", nullptr, nullptr, 1, true, "");
  Key server_key(EVP_EC_gen("P-256"));
  Cert server = MakeCert(server_key.get(), "localhost", ca.get(), ca_key.get(), 2, false,
                         "DNS:localhost,IP:127.0.0.1");
  Key other_key(EVP_EC_gen("P-256"));
  Cert other = MakeCert(other_key.get(), "other.example", ca.get(), ca_key.get(), 3, false,
                        "DNS:other.example");
  TestPki pki{dir / "ca.pem", dir / "server.pem", dir / "server-key.pem", dir / "other.pem",
              dir / "other-key.pem"};
  WritePem(pki.ca_cert, ca.get(), nullptr);
  WritePem(pki.server_cert, server.get(), nullptr);
  WritePem(pki.server_key, nullptr, server_key.get());
  WritePem(pki.other_cert, other.get(), nullptr);
  WritePem(pki.other_key, nullptr, other_key.get());
  return pki;
}

}  // namespace kfpbench::http::testing
