// A thread with a stack larger than the 8 MiB a std::thread gets: the
// server's request handlers walk JSON as deep as KFP accepts (5,000 levels,
// util/json_reader.h) with nlohmann's recursive copy and dump, which needs
// more than 8 MiB in an AddressSanitizer build at -O0. The stack is reserved
// address space: pages never touched cost no memory.
#pragma once

#include <pthread.h>

#include <cstddef>
#include <functional>

namespace kfpbench {

class StackThread {
 public:
  static constexpr size_t kStackBytes = size_t{256} << 20;

  StackThread() = default;
  // Starts `body` on a new thread; throws std::system_error when the system
  // cannot start one (as std::thread does).
  explicit StackThread(std::function<void()> body, size_t stack_bytes = kStackBytes);
  StackThread(StackThread&& other) noexcept;
  StackThread& operator=(StackThread&& other) noexcept;
  StackThread(const StackThread&) = delete;
  StackThread& operator=(const StackThread&) = delete;
  // A thread still joinable here ends the program, as with std::thread.
  ~StackThread();

  bool joinable() const { return started_; }
  // Whether the caller runs on this thread.
  bool IsCurrent() const;
  void join();
  void detach();

 private:
  pthread_t thread_{};
  bool started_ = false;
};

}  // namespace kfpbench
