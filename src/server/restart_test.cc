// `kfpbench serve --db` killed with SIGKILL and started again on the same
// database: nothing committed is lost, runs in flight end FAILED saying why,
// and recurring runs carry on.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include <gmock/gmock.h>

#include "server/test_support.h"

namespace kfpbench::server {
namespace {

using http::Method;
using nlohmann::json;
using ::testing::HasSubstr;
using testing::kPipeline;

// A `kfpbench serve` child process and a client to it.
class ServeProcess {
 public:
  ~ServeProcess() { Kill(SIGKILL); }

  // Starts the server and reads the URL it prints.
  bool Start(const std::string& db) {
    int fds[2];
    if (pipe(fds) != 0) return false;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fds[1], STDOUT_FILENO);
      close(fds[0]);
      close(fds[1]);
      std::string binary = KFPBENCH_BINARY_DIR "/kfpbench";
      execl(binary.c_str(), "kfpbench", "serve", "--db", db.c_str(), "--port", "0", "--executor",
            "stub", "--stub-duration", "constant:60s", static_cast<char*>(nullptr));
      _exit(127);
    }
    close(fds[1]);
    std::string out;
    char c;
    while (read(fds[0], &c, 1) == 1 && c != '\n') out += c;
    close(fds[0]);
    auto at = out.find("http://");
    auto end = out.find("/apis/v2beta1");
    if (at == std::string::npos || end == std::string::npos) {
      ADD_FAILURE() << "serve printed: " << out;
      return false;
    }
    http::ClientOptions co;
    co.base = *http::ParseUrl(out.substr(at, end - at));
    client = std::make_unique<http::Client>(co);
    return true;
  }

  void Kill(int signal) {
    if (pid_ <= 0) return;
    kill(pid_, signal);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
  }

  std::pair<int, json> Call(Method method, const std::string& target,
                            const std::string& body = "") {
    auto r = client->Send(method, target, body, body.empty() ? "" : "application/json");
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    if (!r.ok()) return {0, nullptr};
    return {r->status, json::parse(r->body, nullptr, false)};
  }

  std::unique_ptr<http::Client> client;

 private:
  pid_t pid_ = -1;
};

TEST(RestartTest, SigkillLosesNothingCommittedAndFailsRunsInFlight) {
  if (!std::filesystem::exists(KFPBENCH_BINARY_DIR "/kfpbench")) {
    GTEST_SKIP() << "the kfpbench binary is not built";
  }
  auto dir =
      std::filesystem::temp_directory_path() / ("kfpbench-restart-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string db = (dir / "kfp.db").string();

  std::string pid, eid, recurring_id;
  std::vector<std::string> run_ids;
  size_t scheduled_before = 0;
  {
    ServeProcess first;
    ASSERT_TRUE(first.Start(db));
    auto form = http::BuildMultipart({{"uploadfile", "two.yaml", "", kPipeline}});
    auto up = first.client->Send(Method::kPost, "/apis/v2beta1/pipelines/upload?name=kept",
                                 form.body, form.content_type);
    ASSERT_TRUE(up.ok() && up->status == 200);
    pid = json::parse(up->body)["pipeline_id"];
    auto [es, e] =
        first.Call(Method::kPost, "/apis/v2beta1/experiments", R"({"display_name": "kept"})");
    ASSERT_EQ(es, 200);
    eid = e["experiment_id"];
    for (int i = 0; i < 3; ++i) {
      json body = {{"display_name", "long-" + std::to_string(i)},
                   {"experiment_id", eid},
                   {"pipeline_version_reference", {{"pipeline_id", pid}}}};
      auto [rs, run] = first.Call(Method::kPost, "/apis/v2beta1/runs", body.dump());
      ASSERT_EQ(rs, 200) << run;
      run_ids.push_back(run["run_id"]);
    }
    json rr = {{"display_name", "tick"},
               {"experiment_id", eid},
               {"pipeline_version_reference", {{"pipeline_id", pid}}},
               {"trigger", {{"periodic_schedule", {{"interval_second", "1"}}}}},
               {"max_concurrency", "1"}};
    auto [rrs, created] = first.Call(Method::kPost, "/apis/v2beta1/recurringruns", rr.dump());
    ASSERT_EQ(rrs, 200) << created;
    recurring_id = created["recurring_run_id"];
    // Wait until the steps run and the schedule fired once.
    for (int i = 0; i < 300; ++i) {
      auto [gs, run] = first.Call(Method::kGet, "/apis/v2beta1/runs/" + run_ids[0]);
      auto [ls, list] = first.Call(Method::kGet, "/apis/v2beta1/runs?experiment_id=" + eid);
      scheduled_before = list.value("total_size", 0) - 3;
      if (run["state"] == "RUNNING" && scheduled_before >= 1) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_GE(scheduled_before, 1u);
    first.Kill(SIGKILL);
  }

  ServeProcess second;
  ASSERT_TRUE(second.Start(db));
  EXPECT_EQ(second.Call(Method::kGet, "/apis/v2beta1/pipelines/" + pid).first, 200);
  EXPECT_EQ(second.Call(Method::kGet, "/apis/v2beta1/experiments/" + eid).first, 200);
  for (const auto& id : run_ids) {
    auto [gs, run] = second.Call(Method::kGet, "/apis/v2beta1/runs/" + id);
    ASSERT_EQ(gs, 200) << id;
    EXPECT_EQ(run["state"], "FAILED");
    EXPECT_THAT(run["error"]["message"].get<std::string>(), HasSubstr("restarted")) << run["error"];
    EXPECT_EQ(run["state_history"].back()["state"], "FAILED");
    EXPECT_TRUE(run.contains("finished_at"));
  }
  auto [rs, rr] = second.Call(Method::kGet, "/apis/v2beta1/recurringruns/" + recurring_id);
  EXPECT_EQ(rs, 200);
  EXPECT_EQ(rr["status"], "ENABLED");
  // The schedule carries on: its in-flight run failed, so a new one starts.
  size_t scheduled_after = 0;
  for (int i = 0; i < 300 && scheduled_after <= scheduled_before; ++i) {
    auto [ls, list] = second.Call(Method::kGet, "/apis/v2beta1/runs?experiment_id=" + eid);
    scheduled_after = list.value("total_size", 0) - 3;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_GT(scheduled_after, scheduled_before);
  second.Kill(SIGTERM);
  std::filesystem::remove_all(dir);
}

// Five SIGKILLs, each in the middle of a mixed write load from four client
// threads (experiments, uploads, runs, recurring runs, archives). After every
// restart each write the API acknowledged is there as acknowledged, nothing
// unacknowledged is half there (every listed object reads back whole), and
// the runs in flight ended FAILED.
TEST(RestartTest, RepeatedSigkillsUnderWriteLoadLoseNothingAcknowledged) {
  if (!std::filesystem::exists(KFPBENCH_BINARY_DIR "/kfpbench")) {
    GTEST_SKIP() << "the kfpbench binary is not built";
  }
  auto dir =
      std::filesystem::temp_directory_path() / ("kfpbench-kills-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string db = (dir / "kfp.db").string();

  std::mutex mu;
  std::vector<std::string> experiments, pipelines, runs, recurring, archived;
  for (int round = 0; round < 5; ++round) {
    ServeProcess server;
    ASSERT_TRUE(server.Start(db)) << "round " << round;
    // Everything acknowledged so far reads back.
    for (const auto& id : experiments) {
      auto [s, e] = server.Call(Method::kGet, "/apis/v2beta1/experiments/" + id);
      ASSERT_EQ(s, 200) << "round " << round << " lost experiment " << id;
    }
    for (const auto& id : archived) {
      auto [s, e] = server.Call(Method::kGet, "/apis/v2beta1/experiments/" + id);
      EXPECT_EQ(e["storage_state"], "ARCHIVED") << "round " << round << " " << id;
    }
    for (const auto& id : pipelines) {
      auto [s, p] = server.Call(Method::kGet, "/apis/v2beta1/pipelines/" + id);
      ASSERT_EQ(s, 200) << "round " << round << " lost pipeline " << id;
    }
    for (const auto& id : runs) {
      auto [s, r] = server.Call(Method::kGet, "/apis/v2beta1/runs/" + id);
      ASSERT_EQ(s, 200) << "round " << round << " lost run " << id;
      EXPECT_NE(r["state"], "RUNNING") << "round " << round << ": " << id << " still running";
    }
    for (const auto& id : recurring) {
      auto [s, r] = server.Call(Method::kGet, "/apis/v2beta1/recurringruns/" + id);
      ASSERT_EQ(s, 200) << "round " << round << " lost recurring run " << id;
    }
    // Whatever a list shows is whole: every run listed reads back.
    auto [ls, list] = server.Call(Method::kGet, "/apis/v2beta1/runs?page_size=1000");
    ASSERT_EQ(ls, 200);
    for (const auto& r : list.value("runs", json::array())) {
      EXPECT_TRUE(r.contains("run_id") && r.contains("state") && r.contains("created_at")) << r;
    }

    std::atomic<bool> stop{false};
    std::vector<std::thread> writers;
    const std::string url = server.client->base().ToString();
    for (int w = 0; w < 4; ++w) {
      writers.emplace_back([&, w] {
        http::ClientOptions co;
        co.base = *http::ParseUrl(url);
        co.request_timeout = std::chrono::milliseconds(2000);
        http::Client client(co);
        auto post = [&](const std::string& target, const json& body) -> json {
          auto r = client.Send(Method::kPost, target, body.dump(), "application/json");
          if (!r.ok() || r->status != 200) return nullptr;  // not acknowledged
          return json::parse(r->body, nullptr, false);
        };
        for (int i = 0; !stop; ++i) {
          std::string name = fmt::format("r{}-w{}-{}", round, w, i);
          json e = post("/apis/v2beta1/experiments", {{"display_name", name}});
          if (e.is_null()) continue;
          std::string eid = e["experiment_id"];
          {
            std::lock_guard lock(mu);
            experiments.push_back(eid);
          }
          auto form = http::BuildMultipart({{"uploadfile", "p.yaml", "", kPipeline}});
          auto up = client.Send(Method::kPost, "/apis/v2beta1/pipelines/upload?name=" + name,
                                form.body, form.content_type);
          if (!up.ok() || up->status != 200) continue;
          std::string pid = json::parse(up->body)["pipeline_id"];
          {
            std::lock_guard lock(mu);
            pipelines.push_back(pid);
          }
          json run =
              post("/apis/v2beta1/runs", {{"display_name", name},
                                          {"experiment_id", eid},
                                          {"pipeline_version_reference", {{"pipeline_id", pid}}}});
          if (!run.is_null()) {
            std::lock_guard lock(mu);
            runs.push_back(run["run_id"]);
          }
          if (i % 3 == 0) {
            json rr = post("/apis/v2beta1/recurringruns",
                           {{"display_name", name},
                            {"experiment_id", eid},
                            {"pipeline_version_reference", {{"pipeline_id", pid}}},
                            {"trigger", {{"periodic_schedule", {{"interval_second", "3600"}}}}}});
            if (!rr.is_null()) {
              std::lock_guard lock(mu);
              recurring.push_back(rr["recurring_run_id"]);
            }
          }
          if (i % 4 == 1) {
            auto a = client.Send(Method::kPost, "/apis/v2beta1/experiments/" + eid + ":archive");
            if (a.ok() && a->status == 200) {
              std::lock_guard lock(mu);
              archived.push_back(eid);
            }
          }
        }
      });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300 + 100 * round));
    server.Kill(SIGKILL);
    stop = true;
    for (auto& t : writers) t.join();
  }
  EXPECT_GT(runs.size(), 20u);  // the load did write
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kfpbench::server
