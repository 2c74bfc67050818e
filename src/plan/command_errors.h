// How the one-call commands (answer, calibration, profile_folder) tell the
// CLI whose fault an error was: the input's (400, exit 2) or the work's.
#pragma once

#include <string>

#include "util/result.h"

namespace kfpbench::plan {

// The files or flags the command was given.
inline Error BadInput(std::string message) { return Error{std::move(message), kHttpBadRequest}; }

// The work's, whatever the error says of itself (a write that failed).
inline Error Failed(const Error& e) { return Error{e.message, e.BadInput() ? 0 : e.code}; }

}  // namespace kfpbench::plan
