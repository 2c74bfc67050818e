#include "engine/event_loop.h"

#include <atomic>
#include <mutex>
#include <thread>
#include <unordered_map>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

namespace kfpbench::engine {

namespace asio = boost::asio;

struct RealTimeLoop::Impl {
  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
  std::thread thread;
  std::mutex mu;  // guards timers
  std::unordered_map<TimerId, std::shared_ptr<asio::steady_timer>> timers;
  std::atomic<TimerId> next_id{1};
};

RealTimeLoop::RealTimeLoop() : impl_(std::make_unique<Impl>()) {}

RealTimeLoop::~RealTimeLoop() { Stop(); }

void RealTimeLoop::Start() {
  if (impl_->thread.joinable()) return;
  impl_->thread = std::thread([this] { impl_->io.run(); });
}

void RealTimeLoop::Stop() {
  impl_->work.reset();
  impl_->io.stop();
  if (impl_->thread.joinable() && impl_->thread.get_id() != std::this_thread::get_id()) {
    impl_->thread.join();
  }
  std::lock_guard lock(impl_->mu);
  impl_->timers.clear();
}

WallTime RealTimeLoop::Now() const { return WallClock::now(); }

void RealTimeLoop::Post(std::function<void()> fn) { asio::post(impl_->io, std::move(fn)); }

TimerId RealTimeLoop::After(Duration delay, std::function<void()> fn) {
  TimerId id = impl_->next_id++;
  auto timer = std::make_shared<asio::steady_timer>(impl_->io, delay);
  {
    std::lock_guard lock(impl_->mu);
    impl_->timers.emplace(id, timer);
  }
  timer->async_wait([this, id, fn = std::move(fn)](const boost::system::error_code& ec) {
    {
      // Cancel() removes the id first, so a timer that expired just before
      // it was cancelled (its handler already queued) still does not run.
      std::lock_guard lock(impl_->mu);
      if (impl_->timers.erase(id) == 0) return;
    }
    if (!ec) fn();
  });
  return id;
}

void RealTimeLoop::Cancel(TimerId id) {
  std::shared_ptr<asio::steady_timer> timer;
  {
    std::lock_guard lock(impl_->mu);
    auto it = impl_->timers.find(id);
    if (it == impl_->timers.end()) return;
    timer = it->second;
    impl_->timers.erase(it);
  }
  // Cancel on the loop thread: asio timers are not thread-safe.
  asio::post(impl_->io, [timer] { timer->cancel(); });
}

}  // namespace kfpbench::engine
