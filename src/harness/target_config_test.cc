#include "harness/target_config.h"

#include <sys/stat.h>

#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/session.h"
#include "util/files.h"
#include "util/ids.h"

namespace kfpbench::harness {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(TargetConfig, SelectsNamedAndDefaultTargets) {
  auto c = ParseTargetConfig(R"(
default_target: local
targets:
  local: {host: "http://127.0.0.1:8888"}
  production:
    host: https://kfp.example.com
    namespace: team-a
    token_file: /run/token
    api_version: v1beta1
    insecure: true
)",
                             "kfpbench.yaml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  auto local = SelectTarget(*c, "");
  ASSERT_TRUE(local.ok());
  EXPECT_EQ(local->host, "http://127.0.0.1:8888");
  auto prod = SelectTarget(*c, "production");
  ASSERT_TRUE(prod.ok());
  EXPECT_EQ(prod->namespace_, "team-a");
  EXPECT_EQ(prod->api_version, "v1beta1");
  EXPECT_TRUE(prod->insecure);
  auto missing = SelectTarget(*c, "staging");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr("known: local, production"));
  EXPECT_TRUE(SelectTarget(TargetConfig{}, "").ok());
}

TEST(TargetConfig, BadFilesNameFileAndKey) {
  for (auto [text, fragment] : std::vector<std::pair<const char*, const char*>>{
           {"targets: [", "invalid YAML at line"},
           {"- a", "must be a mapping"},
           {"colour: red", "colour: unknown key"},
           {"targets:\n  x: {port: 1, host: h}", "targets.x.port: unknown key"},
           {"targets:\n  x: {namespace: n}", "targets.x: host is required"},
           {"targets:\n  x: {host: h, api_version: v3}", "api_version: must be"},
           {"targets:\n  x: {host: h, insecure: maybe}", "insecure: must be true or false"},
           {"default_target: y\ntargets:\n  x: {host: h}", "default_target 'y'"},
       }) {
    auto c = ParseTargetConfig(text, "cfg.yaml");
    ASSERT_FALSE(c.ok()) << text;
    EXPECT_THAT(c.error().message, HasSubstr(fragment)) << c.error().message;
    EXPECT_EQ(c.error().message.rfind("cfg.yaml: ", 0), 0u) << c.error().message;
  }
}

// Issue #35: `"target": {"host": H, "token_file": F}` made a plain `run
// file.json` read F and send it to H; a ./kfpbench.yaml default target did
// the same. A file's credential goes only where the command line confirms.
TEST(TargetConfig, AFilesCredentialIsSentOnlyWhereTheCommandLineSays) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("kfpbench-targets-" + NewUuid());
  fs::create_directories(dir);
  const std::string token = (dir / "token").string();
  ASSERT_TRUE(WriteFileAtomically(token, "secret-token\n").ok());
  const nlohmann::json scenario = {{"host", "https://evil.example.com"}, {"token_file", token}};
  TargetOptions none;
  none.config_path = (dir / "none.yaml").string();
  ASSERT_TRUE(WriteFileAtomically(none.config_path, "").ok());

  auto refused = ResolveTarget(none, scenario, "s.json");
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error().message, HasSubstr("a file alone does not send a credential"))
      << refused.error().message;
  EXPECT_THAT(refused.error().message, HasSubstr("--host https://evil.example.com"));

  TargetOptions confirmed = none;
  confirmed.host = "https://evil.example.com/";
  auto by_host = ResolveTarget(confirmed, scenario, "s.json");
  ASSERT_TRUE(by_host.ok()) << by_host.error().message;
  EXPECT_EQ(by_host->token_file, token);

  TargetOptions elsewhere = none;
  elsewhere.host = "https://mine.example.com";
  auto other = ResolveTarget(elsewhere, scenario, "s.json");
  ASSERT_TRUE(other.ok()) << other.error().message;
  EXPECT_TRUE(other->token_file.empty());
  EXPECT_EQ(other->host, "https://mine.example.com");

  TargetOptions allowed = none;
  allowed.allow_file_credentials = true;
  auto by_flag = ResolveTarget(allowed, scenario, "s.json");
  ASSERT_TRUE(by_flag.ok()) << by_flag.error().message;
  EXPECT_EQ(by_flag->token_file, token);

  // A config's default target: refused until --target names it.
  TargetOptions config;
  config.config_path = (dir / "kfpbench.yaml").string();
  ASSERT_TRUE(WriteFileAtomically(config.config_path,
                                  "default_target: prod\ntargets:\n  prod: {host: "
                                  "https://kfp.example.com, token_file: " +
                                      token + "}\n")
                  .ok());
  auto by_default = ResolveTarget(config, {}, "");
  ASSERT_FALSE(by_default.ok());
  EXPECT_THAT(by_default.error().message, HasSubstr("--target NAME"));
  config.target = "prod";
  auto named = ResolveTarget(config, {}, "");
  ASSERT_TRUE(named.ok()) << named.error().message;
  EXPECT_EQ(named->token_file, token);
  fs::remove_all(dir);
}

// Issue #35: serve's multi-token file passed to `run --token-file` put a
// line break into the Authorization header. One token, or a refusal that
// does not quote the file; devices and FIFOs are not read.
TEST(TargetConfig, ATokenFileHoldsExactlyOneToken) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("kfpbench-tokens-" + NewUuid());
  fs::create_directories(dir);
  auto open = [&](const std::string& path) {
    TargetOptions o;
    o.host = "http://127.0.0.1:1";
    o.token_file = path;
    return Session::Open(o);
  };
  for (const char* text : {"tok-a\ntok-b alice\n", "tok-a\r\nX-Injected: yes\n", "tok alice\n",
                           "tok\x01x\n", "\n\n"}) {
    const std::string path = (dir / "t").string();
    ASSERT_TRUE(WriteFileAtomically(path, text).ok());
    auto s = open(path);
    ASSERT_FALSE(s.ok()) << ::testing::PrintToString(std::string(text));
    EXPECT_THAT(s.error().message, Not(HasSubstr("tok-"))) << s.error().message;
    EXPECT_THAT(s.error().message, Not(HasSubstr("X-Injected"))) << s.error().message;
  }
  const std::string good = (dir / "good").string();
  ASSERT_TRUE(WriteFileAtomically(good, "  one-token\n").ok());
  EXPECT_TRUE(open(good).ok());
  EXPECT_FALSE(open("/dev/zero").ok());
  const std::string fifo = (dir / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto from_fifo = open(fifo);  // returns at once: a FIFO is not read
  ASSERT_FALSE(from_fifo.ok());
  EXPECT_THAT(from_fifo.error().message, HasSubstr("not a regular file"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kfpbench::harness
