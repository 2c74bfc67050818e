// Helpers shared by the executor tests: a temp dir, a `done` callback that a
// test can wait on, and the fixture of tests that run /bin/sh scripts as
// tasks of a ProcessExecutor.
#pragma once

#include <stdlib.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/event_loop.h"
#include "engine/executor.h"
#include "exec/process_executor.h"

namespace kfpbench::exec::testing {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "kfpbench-exec-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Collects what `done` receives, from whichever thread calls it.
class DoneWaiter {
 public:
  engine::TaskDone Callback() {
    return [self = state_](engine::TaskResult&& result) {
      std::lock_guard lock(self->mu);
      self->result = std::move(result);
      self->thread = std::this_thread::get_id();
      ++self->calls;
      self->cv.notify_all();
    };
  }
  // The result, or nullopt after `timeout`.
  std::optional<engine::TaskResult> Wait(
      std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    std::unique_lock lock(state_->mu);
    if (!state_->cv.wait_for(lock, timeout, [&] { return state_->calls > 0; })) return std::nullopt;
    return state_->result;
  }
  int calls() const {
    std::lock_guard lock(state_->mu);
    return state_->calls;
  }
  std::thread::id thread() const {
    std::lock_guard lock(state_->mu);
    return state_->thread;
  }

 private:
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    engine::TaskResult result;
    std::thread::id thread;
    int calls = 0;
  };
  // Shared with the callback, which may run after the waiter is gone.
  std::shared_ptr<State> state_ = std::make_shared<State>();
};

// A real-time loop running for the length of the test, a folder of its own,
// and tasks that are /bin/sh scripts.
class ShellTaskTest : public ::testing::Test {
 protected:
  void SetUp() override { loop_.Start(); }
  void TearDown() override { loop_.Stop(); }

  // A task running `script` under /bin/sh -c, with `args` as $1, $2, ...
  engine::TaskLaunch Sh(const std::string& script, std::vector<std::string> args = {},
                        const std::string& task_id = "task-1") {
    engine::TaskLaunch launch;
    launch.run_id = "run-1";
    launch.task_id = task_id;
    launch.pod_name = "pod-" + task_id;
    launch.executor_label = "exec-test";
    launch.argv = {"/bin/sh", "-c", script, "sh"};
    launch.argv.insert(launch.argv.end(), args.begin(), args.end());
    launch.work_dir = tmp_.path() / task_id;
    std::filesystem::create_directories(launch.work_dir);
    return launch;
  }

  // Launches the task and waits for its result.
  engine::TaskResult Run(ProcessExecutor& executor, engine::TaskLaunch launch,
                         std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
    DoneWaiter waiter;
    executor.Launch(std::move(launch), waiter.Callback());
    auto result = waiter.Wait(timeout);
    EXPECT_TRUE(result.has_value()) << "task did not finish";
    return result.value_or(engine::TaskResult{});
  }

  engine::RealTimeLoop loop_;
  TempDir tmp_;
};

// A task result that failed, with an error `error_matcher` accepts:
// EXPECT_THAT(result, FailedWith(HasSubstr("command not found"))).
MATCHER_P(FailedWith, error_matcher,
          "failed with an error that " + ::testing::DescribeMatcher<std::string>(error_matcher)) {
  if (arg.succeeded) {
    *result_listener << "which succeeded";
    return false;
  }
  *result_listener << "whose error is \"" << arg.error << "\"";
  return ::testing::Matches(error_matcher)(arg.error);
}

}  // namespace kfpbench::exec::testing
