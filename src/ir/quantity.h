// Kubernetes resource quantities, the one parser for all of kfpbench: the
// IR's resource fields, `kfpbench step` flags, serve's node sizes, the
// simulator's cluster file. The grammar is Kubernetes': a non-negative
// decimal number with either a suffix (binary Ki Mi Gi Ti Pi Ei, decimal
// n u m k M G T P E; K accepted as k) or a decimal exponent ("129e6"), no
// spaces. Errors quote the text and carry code 400 (an API client's mistake).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "util/result.h"

namespace kfpbench::ir {

// Cores: "500m" -> 0.5, "2" -> 2.
Result<double> ParseQuantityCpu(std::string_view text);
// Bytes, fractions rounded up as Kubernetes does: "1Gi" -> 1073741824,
// "2G" -> 2e9, "1.5Ki" -> 1536. At or above 2^63 bytes is an error.
Result<int64_t> ParseQuantityMemory(std::string_view text);
// "256Mi" when `bytes` is a whole number of a binary unit, else plain bytes
// ("1000"), as Kubernetes prints quantities.
std::string FormatQuantityBytes(int64_t bytes);
// Bytes to three significant digits in the largest binary unit that keeps
// the number at least 1, for people: "200Mi", "2.93Ti", "512".
std::string FormatBytesRounded(double bytes);

}  // namespace kfpbench::ir
