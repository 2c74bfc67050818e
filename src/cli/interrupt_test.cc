// Ctrl-C against a target that has frozen: every call hangs until its timeout
// (60 s). The run must honour --grace by cancelling the calls in flight,
// write its results (marked partial) before clean-up, and stop promptly with
// them at a second Ctrl-C.
#include <csignal>
#include <memory>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/e2e_support.h"
#include "http/server.h"

namespace kfpbench {
namespace {

using namespace std::chrono_literals;
using testing::ChildProcess;
using ::testing::HasSubstr;
using testing::KfpbenchBinary;
using testing::ReadJson;
using testing::ScratchDirTest;

// Healthy to the preflight, then never answers (until the test ends).
class FrozenTarget {
 public:
  FrozenTarget() {
    http::ServerOptions o;
    o.threads = 4;
    o.handler = [released = released_](const http::Request& r) {
      if (r.path == "/apis/v2beta1/healthz") return http::Response::Json(200, "{}");
      for (int i = 0; i < 6000 && !released->load(); ++i) std::this_thread::sleep_for(10ms);
      return http::Response::Json(503, R"({"code":14,"message":"thawed","details":[]})");
    };
    server_ = std::make_unique<http::Server>(std::move(o));
    EXPECT_TRUE(server_->Start().ok());
  }
  ~FrozenTarget() {
    released_->store(true);
    server_->Stop();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(server_->port()); }

 private:
  std::shared_ptr<std::atomic<bool>> released_ = std::make_shared<std::atomic<bool>>(false);
  std::unique_ptr<http::Server> server_;
};

class InterruptTest : public ScratchDirTest {
 protected:
  // Starts a 10-minute read load on the frozen target and waits until it runs.
  std::unique_ptr<ChildProcess> StartLoad(const std::string& grace) {
    std::string file = Write("s.json", R"([{"mode":"RANDOM_GETS","runTime":"10m","concurrency":2,)"
                                       R"("mix":{"ListExperiments":1}}])");
    auto child = std::make_unique<ChildProcess>(
        std::vector<std::string>{KfpbenchBinary(), "run", file, "--host", target_.url(), "--grace",
                                 grace, "--out", (dir_ / "out").string()});
    EXPECT_TRUE(child->started());
    EXPECT_NE(child->WaitForLine("starts for", 20s), "") << child->seen();
    std::this_thread::sleep_for(300ms);  // the calls are out and hanging
    return child;
  }

  FrozenTarget target_;
};

TEST_F(InterruptTest, GraceCancelsHangingCallsAndResultsAreWrittenPartial) {
  auto child = StartLoad("1s");
  child->Signal(SIGINT);
  // Without cancelling, the hanging calls would hold the run for their 60 s.
  int code = child->WaitExit(30s);
  ASSERT_EQ(code, 130) << child->seen();
  auto j = ReadJson(dir_ / "out" / "results.json");
  EXPECT_TRUE(j["partial"].get<bool>());
  EXPECT_EQ(j["partial_reason"], "interrupted");
  const auto& op = j["operations"]["ListExperiments"];
  EXPECT_GE(op["errors"].get<int>(), 1) << op;
  EXPECT_THAT(j.dump(), HasSubstr("cancelled before an answer came")) << op;
}

TEST_F(InterruptTest, SecondCtrlCStopsAtOnceWithResultsAndSkipsCleanUp) {
  auto child = StartLoad("120s");
  child->Signal(SIGINT);
  std::this_thread::sleep_for(300ms);
  child->Signal(SIGINT);
  int code = child->WaitExit(30s);  // not the 120 s grace, nor the 60 s call timeout
  ASSERT_EQ(code, 130) << child->seen();
  auto j = ReadJson(dir_ / "out" / "results.json");
  EXPECT_TRUE(j["partial"].get<bool>());
  EXPECT_THAT(j.dump(), HasSubstr("clean-up skipped: Ctrl-C pressed twice"));
}

}  // namespace
}  // namespace kfpbench
