// The engine's only view of time. Everything the engine does happens inside
// callbacks run by an EventLoop, one at a time, so engine code needs no locks
// and runs unchanged on real time (the embedded backend) and on virtual time
// (the cluster simulator).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "util/time.h"

namespace kfpbench::engine {

using TimerId = uint64_t;

class EventLoop {
 public:
  virtual ~EventLoop() = default;
  virtual WallTime Now() const = 0;
  // Runs `fn` on the loop soon, after what is already due. Thread-safe.
  virtual void Post(std::function<void()> fn) = 0;
  // Runs `fn` on the loop once `delay` has passed. Thread-safe.
  virtual TimerId After(Duration delay, std::function<void()> fn) = 0;
  // Cancels a timer that has not fired; a no-op otherwise. Thread-safe.
  virtual void Cancel(TimerId id) = 0;
};

// Real time on one dedicated thread. Start() launches the thread; Stop() runs
// nothing more and joins it.
class RealTimeLoop : public EventLoop {
 public:
  RealTimeLoop();
  ~RealTimeLoop() override;
  void Start();
  void Stop();

  WallTime Now() const override;
  void Post(std::function<void()> fn) override;
  TimerId After(Duration delay, std::function<void()> fn) override;
  void Cancel(TimerId id) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kfpbench::engine
