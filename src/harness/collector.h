// Site-specific metrics without plugins: `--collector CMD` runs a shell
// command at the start and at the end of a benchmark; whatever JSON object it
// prints is kept in the results beside kfpbench's own measurements.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "util/time.h"

namespace kfpbench::harness {

// Runs `command` with KFPBENCH_PHASE=<phase> (and KFPBENCH_TARGET=<target>)
// under `sh -c`, for at most `timeout`. Returns {"phase", "ok", "output" or
// "error"}; a command that fails, hangs or prints something other than a JSON
// object yields ok=false and the reason, never an exception.
nlohmann::json RunCollector(const std::string& command, const std::string& phase,
                            const std::string& target, Duration timeout);

}  // namespace kfpbench::harness
