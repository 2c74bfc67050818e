#include "sim/virtual_loop.h"

#include <utility>

namespace kfpbench::sim {

void VirtualLoop::Post(std::function<void()> fn) { After(Duration::zero(), std::move(fn)); }

engine::TimerId VirtualLoop::After(Duration delay, std::function<void()> fn) {
  uint32_t slot = slots_.Acquire();
  Slot& s = slots_[slot];
  s.fn = std::move(fn);
  ++live_;
  // A negative delay means "now": virtual time never runs backwards.
  queue_.push({When(delay), seq_++, slot, s.generation});
  return (static_cast<uint64_t>(s.generation) << 32) | slot;
}

void VirtualLoop::AfterKeyed(Duration delay, uint32_t key, uint32_t generation) {
  ++live_;
  queue_.push({When(delay), seq_++, key | kKeyed, generation});
}

void VirtualLoop::Cancel(engine::TimerId id) {
  auto slot = static_cast<uint32_t>(id & 0xffffffffu);
  auto generation = static_cast<uint32_t>(id >> 32);
  if (slot >= slots_.size()) return;
  Slot& s = slots_[slot];
  if (!s.live || s.generation != generation) return;
  // The queue entry stays and is skipped when popped; the slot is freed then.
  s.live = false;
  s.fn = nullptr;
  --live_;
}

bool VirtualLoop::RunOne(WallTime limit) {
  while (!queue_.empty()) {
    Event e = queue_.top();
    if (e.when > limit) return false;
    queue_.pop();
    if (e.slot & kKeyed) {
      --live_;
      const WallTime before = now_;
      if (e.when > now_) now_ = e.when;
      ++events_run_;  // before it runs, as for a callback: what it runs may read the count
      if (target_ != nullptr && target_->Fire(e.slot & ~kKeyed, e.generation)) return true;
      // Canceled: as if it had never been due.
      now_ = before;
      --events_run_;
      continue;
    }
    Slot& s = slots_[e.slot];
    if (s.generation != e.generation) continue;  // cannot happen; defensive
    if (!s.live) {
      slots_.Release(e.slot);  // canceled: reclaim the slot now
      continue;
    }
    std::function<void()> fn = std::move(s.fn);
    s.fn = nullptr;
    s.live = false;
    --live_;
    slots_.Release(e.slot);
    if (e.when > now_) now_ = e.when;
    ++events_run_;
    fn();
    return true;
  }
  return false;
}

void VirtualLoop::RunUntilIdle() {
  while (RunOne(WallTime::max())) {
  }
}

void VirtualLoop::RunUntil(WallTime t) {
  while (RunOne(t)) {
  }
  if (t > now_) now_ = t;
}

}  // namespace kfpbench::sim
