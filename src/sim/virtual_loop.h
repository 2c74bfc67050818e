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

  // Runs events in (time, post order) until none is left.
  void RunUntilIdle();
  // Runs events due at or before `t`, then sets the clock to `t`.
  void RunUntil(WallTime t);

  uint64_t events_run() const { return events_run_; }
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
    uint64_t seq;  // ties run in post order
    uint32_t slot;
    uint32_t generation;
    bool operator>(const Event& o) const { return when != o.when ? when > o.when : seq > o.seq; }
  };
  bool RunOne(WallTime limit);

  WallTime now_;
  uint64_t seq_ = 0;
  uint64_t events_run_ = 0;
  size_t live_ = 0;
  SlotPool<Slot> slots_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> queue_;
};

}  // namespace kfpbench::sim
