#include "util/stack_thread.h"

#include <exception>
#include <memory>
#include <system_error>
#include <utility>

namespace kfpbench {
namespace {

void* Run(void* arg) {
  std::unique_ptr<std::function<void()>> body(static_cast<std::function<void()>*>(arg));
  (*body)();
  return nullptr;
}

}  // namespace

StackThread::StackThread(std::function<void()> body, size_t stack_bytes) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  int rc = pthread_attr_setstacksize(&attr, stack_bytes);
  auto arg = std::make_unique<std::function<void()>>(std::move(body));
  if (rc == 0) rc = pthread_create(&thread_, &attr, Run, arg.get());
  pthread_attr_destroy(&attr);
  if (rc != 0) throw std::system_error(rc, std::generic_category(), "pthread_create");
  arg.release();  // the thread owns it now
  started_ = true;
}

StackThread::StackThread(StackThread&& other) noexcept
    : thread_(other.thread_), started_(std::exchange(other.started_, false)) {}

StackThread& StackThread::operator=(StackThread&& other) noexcept {
  if (started_) std::terminate();
  thread_ = other.thread_;
  started_ = std::exchange(other.started_, false);
  return *this;
}

StackThread::~StackThread() {
  if (started_) std::terminate();
}

bool StackThread::IsCurrent() const { return started_ && pthread_equal(thread_, pthread_self()); }

void StackThread::join() {
  if (!started_) return;
  pthread_join(thread_, nullptr);
  started_ = false;
}

void StackThread::detach() {
  if (!started_) return;
  pthread_detach(thread_);
  started_ = false;
}

}  // namespace kfpbench
