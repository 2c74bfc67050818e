// Binary byte units, as Kubernetes quantities write them ("512Mi", "2Gi").
#pragma once

#include <cstdint>

namespace kfpbench {

inline constexpr int64_t kKi = int64_t{1} << 10;
inline constexpr int64_t kMi = int64_t{1} << 20;
inline constexpr int64_t kGi = int64_t{1} << 30;

}  // namespace kfpbench
