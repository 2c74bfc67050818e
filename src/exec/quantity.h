// Kubernetes-style resource quantities as steps and stubs read them: memory
// ("256Mi", "1G", "1.5Gi", "1048576") and CPU ("500m", "0.5", "2").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "util/result.h"

namespace kfpbench::exec {

// Bytes from a number with an optional binary (Ki Mi Gi Ti Pi Ei) or decimal
// (k K M G T P E) suffix. Fractions are allowed ("1.5Gi") and rounded to whole
// bytes; negative values, unknown suffixes and overflow are errors.
Result<int64_t> ParseBytes(std::string_view text);

// "256Mi" when `bytes` is a whole number of a binary unit, else plain bytes.
std::string FormatBytes(int64_t bytes);

// Cores from "0.5", "2" or millicores "500m". Negative values are errors.
Result<double> ParseCpu(std::string_view text);

}  // namespace kfpbench::exec
