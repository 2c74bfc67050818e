// The harness's multi-user path for real: `kfpbench run --namespace` with a
// proxy's token and the kubeflow-userid header, and with a login cookie,
// against `kfpbench serve --multi-user` over TLS; another namespace's user
// is refused, and so is a run without credentials.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "harness/e2e_support.h"
#include "http/client.h"
#include "http/multipart.h"
#include "http/test_certificates.h"
#include "http/url.h"
#include "server/spelling_test_cases.h"

namespace kfpbench::harness {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace kfpbench::testing;  // Kfpbench(), ChildProcess, ScratchDirTest, ...
using nlohmann::json;

constexpr const char* kProxyToken = "proxy-0123456789abcdef0123456789abcdef";
constexpr const char* kAliceToken = "alice-0123456789abcdef0123456789abcdef";

class MultiUserE2eTest : public ScratchDirTest {};

TEST_F(MultiUserE2eTest, RunsInItsNamespaceThroughTokenHeaderAndCookie) {
  const fs::path& dir = dir_;
  auto write = [&](const std::string& name, const std::string& text) { return Write(name, text); };
  auto pki = http::testing::MakeTestPki(dir / "pki");
  std::string tokens = write("tokens", std::string(kProxyToken) + "\n" + kAliceToken + " alice\n");
  std::string policy = write("policy", "alice team-a\nbob team-b\n");
  std::string proxy_token = write("proxy-token", kProxyToken);
  ChildProcess server({KfpbenchBinary(),
                       "serve",
                       "--access-log",
                       "none",
                       "--port",
                       "0",
                       "--executor",
                       "stub",
                       "--stub-duration",
                       "constant:50ms",
                       "--tls-cert",
                       pki.server_cert,
                       "--tls-key",
                       pki.server_key,
                       "--token-file",
                       tokens,
                       "--token-cookie",
                       "authservice_session",
                       "--multi-user",
                       "--namespace-policy",
                       policy});
  ASSERT_TRUE(server.started());
  std::string line = server.WaitForLine("serving", std::chrono::seconds(60));
  ASSERT_FALSE(line.empty()) << server.seen();
  std::string url = UrlInLine(line);
  std::string scenario = write("s.json", R"([
    {"mode": "PIPELINE_RUN", "runTime": "2s", "numTimes": 2,
     "pipelineFileName": "sleep_chain.yaml", "params": {"duration": "100ms"}},
    {"mode": "RANDOM_GETS", "startTime": "1s", "runTime": "1s", "concurrency": 2}
  ])");
  std::string pipelines = std::string(KFPBENCH_SOURCE_DIR) + "/examples/pipelines";
  auto run = [&](const std::string& flags, const std::string& out) {
    return Kfpbench("run " + scenario + " --host " + url + " --ca-file " + pki.ca_cert.string() +
                    " --pipelines " + pipelines + " --poll-interval 100ms --quiet " + flags +
                    " --out " + (dir / out).string());
  };
  auto expect_clean = [&](const std::string& out, const std::string& output) {
    json j = ReadJson(dir / out / "results.json");
    ASSERT_TRUE(j.is_object()) << output;
    int runs = j["runs"]["count"];
    EXPECT_GE(runs, 2) << output;
    EXPECT_EQ(j["runs"]["by_state"].value("SUCCEEDED", 0), runs) << j["runs"].dump(2);
    for (const auto& [op, figures] : j["operations"].items()) {
      EXPECT_EQ(figures["errors"].get<int>(), 0) << op << " " << figures;
    }
    EXPECT_TRUE(j["cleanup_failures"].empty()) << j["cleanup_failures"];
  };
  {
    // Through the proxy: its token, and the user it vouches for.
    auto r =
        run("--namespace team-a --token-file " + proxy_token + " --header 'kubeflow-userid: alice'",
            "proxy");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    expect_clean("proxy", r.output);
  }
  {
    // A login cookie holding alice's own token.
    auto r = run(std::string("--namespace team-a --cookie authservice_session=") + kAliceToken,
                 "cookie");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    expect_clean("cookie", r.output);
  }
  {
    // Bob is not in team-a: every call into it is refused, as KFP refuses it.
    auto r =
        run("--namespace team-a --token-file " + proxy_token + " --header 'kubeflow-userid: bob'",
            "stranger");
    EXPECT_NE(r.exit_code, 0) << r.output;
    EXPECT_THAT(r.output, HasSubstr("User 'bob' is not authorized")) << r.output;
    EXPECT_THAT(r.output, Not(HasSubstr(kProxyToken))) << "a token was printed";
  }
  {
    auto r = run("--namespace team-a", "anonymous");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_THAT(r.output, HasSubstr("401")) << r.output;
  }
  server.Stop();
}

// Issue #35: a second spelling of where a create lands (experimentId beside
// ?experiment_id, the last of two references) put bob's writes into
// alice's namespace. Every spelling the server reads, against `kfpbench
// serve --multi-user` itself, through the proxy's token and user header.
TEST_F(MultiUserE2eTest, NoSpellingOfWhereACreateLandsReachesAnotherNamespace) {
  std::string tokens = Write("tokens", std::string(kProxyToken) + "\n");
  std::string policy = Write("policy", "alice team-a\nbob team-b\n");
  ChildProcess server({KfpbenchBinary(), "serve", "--access-log", "none", "--port", "0",
                       "--executor", "stub", "--stub-duration", "constant:50ms", "--token-file",
                       tokens, "--multi-user", "--namespace-policy", policy});
  ASSERT_TRUE(server.started());
  std::string line = server.WaitForLine("serving", std::chrono::seconds(60));
  ASSERT_FALSE(line.empty()) << server.seen();
  http::ClientOptions options;
  options.base = *http::ParseUrl(UrlInLine(line));
  options.default_headers.Set("Authorization", std::string("Bearer ") + kProxyToken);
  http::Client client(options);
  auto as = [&](const std::string& user, http::Method method, const std::string& target,
                const json& body = nullptr) {
    http::Headers headers;
    headers.Set("kubeflow-userid", user);
    auto r = client.Send(method, target, body.is_null() ? "" : body.dump(), "", headers);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.ok() ? std::make_pair(r->status, json::parse(r->body, nullptr, false))
                  : std::make_pair(0, json());
  };
  auto experiment = [&](const std::string& user, const std::string& ns) {
    auto [status, e] = as(user, http::Method::kPost, "/apis/v2beta1/experiments",
                          {{"display_name", "e-" + user}, {"namespace", ns}});
    EXPECT_EQ(status, 200) << e;
    return e.value("experiment_id", "");
  };
  const std::string a = experiment("alice", "team-a");
  const std::string b = experiment("bob", "team-b");
  auto form = http::BuildMultipart(
      {{"uploadfile", "p.yaml", "application/octet-stream",
        ReadText(std::string(KFPBENCH_SOURCE_DIR) + "/examples/pipelines/sleep_chain.yaml")}});
  http::Headers bob;
  bob.Set("kubeflow-userid", "bob");
  auto uploaded =
      client.Send(http::Method::kPost, "/apis/v2beta1/pipelines/upload?namespace=team-b&name=bobs",
                  form.body, form.content_type, bob);
  ASSERT_TRUE(uploaded.ok() && uploaded->status == 200) << (uploaded.ok() ? uploaded->body : "");
  const std::string pipeline = json::parse(uploaded->body).value("pipeline_id", "");

  const server::testing::Spellings spellings(a, "team-a", b, "team-b", pipeline);
  for (const auto& c : spellings.Crossing()) {
    auto [status, body] = as("bob", http::Method::kPost, c.target, c.body);
    EXPECT_EQ(status, c.status) << c.what << ": " << body;
  }
  for (const auto& c : spellings.Own()) {
    auto [status, body] = as("bob", http::Method::kPost, c.target, c.body);
    EXPECT_EQ(status, 200) << c.what << ": " << body;
  }
  // Nothing of bob's is in team-a.
  auto [runs_status, runs] = as("alice", http::Method::kGet, "/apis/v2beta1/runs?namespace=team-a");
  EXPECT_EQ(runs_status, 200);
  EXPECT_FALSE(runs.contains("runs")) << runs;
  auto [jobs_status, jobs] =
      as("alice", http::Method::kGet, "/apis/v2beta1/recurringruns?namespace=team-a");
  EXPECT_EQ(jobs_status, 200);
  EXPECT_FALSE(jobs.contains("recurringRuns")) << jobs;
  auto [e_status, experiments] =
      as("alice", http::Method::kGet, "/apis/v2beta1/experiments?namespace=team-a");
  EXPECT_EQ(e_status, 200);
  EXPECT_EQ(experiments.value("total_size", 0), 1) << experiments;
  auto [p_status, pipelines] =
      as("alice", http::Method::kGet, "/apis/v2beta1/pipelines?namespace=team-a");
  EXPECT_EQ(p_status, 200);
  EXPECT_FALSE(pipelines.contains("pipelines")) << pipelines;
  server.Stop();
}

}  // namespace
}  // namespace kfpbench::harness
