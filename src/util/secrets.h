// Tokens and cookies must never reach logs, reports or error messages. Every
// secret the program learns is registered here, and every text that leaves the
// process through a log line, a report or an error passes through Redact().
#pragma once

#include <string>
#include <string_view>

namespace kfpbench {

void RegisterSecret(std::string_view secret);
// Replaces every registered secret (and any "Bearer <token>" value) with
// "[REDACTED]".
std::string Redact(std::string_view text);

}  // namespace kfpbench
