#include "util/ids.h"

#include <random>

#include <fmt/format.h>

namespace kfpbench {

std::string NewUuid() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  uint64_t hi = rng();
  uint64_t lo = rng();
  hi = (hi & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;  // version 4
  lo = (lo & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;  // variant 10
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", hi >> 32, (hi >> 16) & 0xffff,
                     hi & 0xffff, lo >> 48, lo & 0xffffffffffffULL);
}

}  // namespace kfpbench
