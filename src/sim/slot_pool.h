// Slots reused through a free list, each with a generation: the virtual
// loop's timers and the simulated executor's tasks allocate nothing once
// warm, and an id that names a slot since reused finds a newer generation and
// is ignored. T has `uint32_t generation` and `bool live`.
#pragma once

#include <cstdint>
#include <vector>

namespace kfpbench::sim {

template <typename T>
class SlotPool {
 public:
  // A free slot (reused, else new), its generation advanced, marked live.
  uint32_t Acquire() {
    uint32_t slot;
    if (!free_.empty()) {
      slot = free_.back();
      free_.pop_back();
    } else {
      slot = static_cast<uint32_t>(slots_.size());
      slots_.emplace_back();
    }
    ++slots_[slot].generation;
    slots_[slot].live = true;
    return slot;
  }
  // The slot may be handed out again; its owner has cleared it.
  void Release(uint32_t slot) { free_.push_back(slot); }

  T& operator[](uint32_t slot) { return slots_[slot]; }
  uint32_t size() const { return static_cast<uint32_t>(slots_.size()); }

 private:
  std::vector<T> slots_;
  std::vector<uint32_t> free_;
};

}  // namespace kfpbench::sim
