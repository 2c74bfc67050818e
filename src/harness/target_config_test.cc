#include "harness/target_config.h"

#include <gtest/gtest.h>

namespace kfpbench::harness {
namespace {

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
  EXPECT_NE(missing.error().message.find("known: local, production"), std::string::npos);
  EXPECT_TRUE(SelectTarget(TargetConfig{}, "").ok());
}

TEST(TargetConfig, BadFilesNameFileAndKey) {
  for (auto [text, fragment] : std::vector<std::pair<const char*, const char*>>{
           {"targets: [", "malformed YAML at line"},
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
    EXPECT_NE(c.error().message.find(fragment), std::string::npos) << c.error().message;
    EXPECT_EQ(c.error().message.rfind("cfg.yaml: ", 0), 0u) << c.error().message;
  }
}

}  // namespace
}  // namespace kfpbench::harness
