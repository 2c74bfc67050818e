// Helpers shared by the executor tests: a temp dir, and a `done` callback
// that a test can wait on.
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

#include "engine/executor.h"

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

}  // namespace kfpbench::exec::testing
