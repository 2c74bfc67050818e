// The simulator's clock: a discrete-event EventLoop whose Now() jumps to the
// next due event, so a day of cluster time runs in moments. Single-threaded:
// everything, Submit included, happens on the thread that calls Run*.
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "engine/event_loop.h"
#include "sim/slot_pool.h"

namespace kfpbench::sim {

// What a keyed timer calls. An object with many timers of its own (the
// simulated executor, one per task in flight) keys them itself, so the loop
// keeps no callback for them: the event carries the key, and firing it reads
// no slot of the loop's, which is cold by then.
class TimerTarget {
 public:
  virtual ~TimerTarget() = default;
  // The timer (key, generation) is due, and Now() is its time. False when
  // the target canceled it meanwhile: then nothing happened, and the loop's
  // clock stays where it was.
  virtual bool Fire(uint32_t key, uint32_t generation) = 0;
};

class VirtualLoop : public engine::EventLoop {
 public:
  // Virtual time starts here unless told otherwise (a fixed, recognisable
  // instant keeps simulated timestamps reproducible).
  static WallTime DefaultEpoch() { return WallTime(std::chrono::seconds(1'700'000'000)); }

  explicit VirtualLoop(WallTime start = DefaultEpoch()) : now_(start) {}

  WallTime Now() const override { return now_; }
  void Post(std::function<void()> fn) override;
  engine::TimerId After(Duration delay, std::function<void()> fn) override;
  void Cancel(engine::TimerId id) override;

  // Keyed timers: AfterKeyed calls target.Fire(key, generation) after
  // `delay`, in the same (time, post order) as every other event. The target
  // cancels them itself (Fire returns false); a loop has one target, set
  // before the first keyed timer (with none, keyed timers are dropped when
  // due). `key` is below 2^31.
  void SetTimerTarget(TimerTarget* target) { target_ = target; }
  void AfterKeyed(Duration delay, uint32_t key, uint32_t generation);

  // Runs events in (time, post order) until none is left.
  void RunUntilIdle();
  // Runs events due at or before `t`, then sets the clock to `t`.
  void RunUntil(WallTime t);

  uint64_t events_run() const { return events_run_; }
  // Events not yet run; keyed timers their target canceled count until due.
  size_t pending() const { return live_; }

 private:
  // Callbacks live in slots reused through a free list; a TimerId is the slot
  // and its generation, so Cancel is O(1) and a stale id cancels nothing.
  struct Slot {
    uint32_t generation = 0;
    bool live = false;
    std::function<void()> fn;
  };
  struct Event {
    WallTime when;
    uint64_t seq;   // ties run in post order
    uint32_t slot;  // with kKeyed set: the keyed timer's key
    uint32_t generation;
    bool operator>(const Event& o) const { return when != o.when ? when > o.when : seq > o.seq; }
  };
  static constexpr uint32_t kKeyed = 1u << 31;
  bool RunOne(WallTime limit);
  WallTime When(Duration delay) const { return delay > Duration::zero() ? now_ + delay : now_; }

  WallTime now_;
  uint64_t seq_ = 0;
  uint64_t events_run_ = 0;
  size_t live_ = 0;
  SlotPool<Slot> slots_;
  TimerTarget* target_ = nullptr;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> queue_;
};

}  // namespace kfpbench::sim
