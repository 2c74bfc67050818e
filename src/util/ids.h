#pragma once

#include <string>

namespace kfpbench {

// A random RFC 4122 version-4 UUID in lower-case hex, as KFP uses for ids.
std::string NewUuid();

}  // namespace kfpbench
