// No run stays in flight forever: a status the database refused is written
// again until it lands, and terminating a run that nothing executes ends it.
// The database really refuses (a trigger added through a second connection),
// as it would on a full disk.
#include <chrono>
#include <filesystem>
#include <thread>

#include <gmock/gmock.h>

#include "server/test_support.h"
#include "store/sqlite.h"

namespace kfpbench::server {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using namespace testing;  // the part's test helpers
namespace fs = std::filesystem;

class StuckRunsTest : public BackendApiTest {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kfpbench-stuck-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    options_.backend.db_path = (dir_ / "kfp.db").string();
    BackendApiTest::SetUp();
    auto db = store::Database::Open(options_.backend.db_path);
    ASSERT_TRUE(db.ok()) << db.error().message;
    db_ = std::move(*db);
  }
  void TearDown() override {
    db_.reset();
    server_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  void RefuseSucceeded() {
    ASSERT_TRUE(db_->Exec("CREATE TRIGGER refuse BEFORE UPDATE ON runs WHEN NEW.state = "
                          "'SUCCEEDED' BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END")
                    .ok());
  }
  void AcceptAgain() { ASSERT_TRUE(db_->Exec("DROP TRIGGER refuse").ok()); }

  std::string StartRun() {
    json p = Upload("two-steps", kPipeline);
    json body = {{"display_name", "r"},
                 {"pipeline_version_reference", {{"pipeline_id", p["pipeline_id"]}}}};
    auto [status, created] = Call(http::Method::kPost, "/apis/v2beta1/runs", body.dump());
    EXPECT_EQ(status, 200) << created;
    return created.value("run_id", "");
  }

  std::string State(const std::string& run_id) {
    return Call(http::Method::kGet, "/apis/v2beta1/runs/" + run_id).second.value("state", "");
  }

  fs::path dir_;
  std::unique_ptr<store::Database> db_;
};

// The two 20 ms steps are long done after this; the run's end is what the
// database refused.
constexpr auto kPastTheEnd = std::chrono::milliseconds(500);

TEST_F(StuckRunsTest, ARefusedStatusIsWrittenOnceTheDatabaseTakesItAgain) {
  RefuseSucceeded();
  std::string id = StartRun();
  std::this_thread::sleep_for(kPastTheEnd);
  EXPECT_EQ(State(id), "RUNNING");
  AcceptAgain();
  json run = WaitForRun(id);
  EXPECT_EQ(run["state"], "SUCCEEDED") << run.dump(2);
  ASSERT_TRUE(run["run_details"]["task_details"].is_array());
  for (const auto& t : run["run_details"]["task_details"]) EXPECT_EQ(t["state"], "SUCCEEDED") << t;
}

TEST_F(StuckRunsTest, TerminatingARunWhoseEndIsUnwrittenKeepsItsTrueEnd) {
  RefuseSucceeded();
  std::string id = StartRun();
  std::this_thread::sleep_for(kPastTheEnd);
  ASSERT_EQ(State(id), "RUNNING");
  // Still refused: terminate neither invents CANCELED nor loses the end.
  EXPECT_EQ(Call(http::Method::kPost, "/apis/v2beta1/runs/" + id + ":terminate").first, 200);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(State(id), "RUNNING");
  AcceptAgain();
  EXPECT_EQ(Call(http::Method::kPost, "/apis/v2beta1/runs/" + id + ":terminate").first, 200);
  EXPECT_EQ(WaitForRun(id)["state"], "SUCCEEDED");
}

TEST_F(StuckRunsTest, TerminatingARunNothingExecutesEndsItCanceled) {
  std::string id = StartRun();
  ASSERT_EQ(WaitForRun(id)["state"], "SUCCEEDED");
  // The database says in flight; the engine has long forgotten the run (as
  // when its end was lost).
  ASSERT_TRUE(db_->Exec("UPDATE runs SET state = 'RUNNING', finished_at_ns = 0").ok());
  ASSERT_EQ(State(id), "RUNNING");
  EXPECT_EQ(Call(http::Method::kPost, "/apis/v2beta1/runs/" + id + ":terminate").first, 200);
  json run = WaitForRun(id);
  EXPECT_EQ(run["state"], "CANCELED") << run.dump(2);
  EXPECT_THAT(run["error"]["message"].get<std::string>(), HasSubstr("nothing was executing"))
      << run.dump(2);
  EXPECT_EQ(run["error"]["code"], 1);  // CANCELLED
  EXPECT_TRUE(run.contains("finished_at")) << run.dump(2);
  // Terminating a finished run changes nothing.
  EXPECT_EQ(Call(http::Method::kPost, "/apis/v2beta1/runs/" + id + ":terminate").first, 200);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(State(id), "CANCELED");
}

}  // namespace
}  // namespace kfpbench::server
