// Helpers every command uses.
#pragma once

#include <atomic>
#include <string>

#include "util/result.h"

namespace kfpbench::cli {

// Set by SIGINT/SIGTERM once InstallSignalHandlers() ran; a second signal
// ends the process at once.
extern std::atomic<bool> g_interrupted;
void InstallSignalHandlers();

// Prints "kfpbench: <message>" (secrets redacted) to stderr and returns `code`.
int Fail(const std::string& message, int code = 2);

}  // namespace kfpbench::cli
