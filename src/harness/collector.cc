#include "harness/collector.h"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "util/secrets.h"

namespace kfpbench::harness {
namespace {

// Single quotes for sh: everything literal, ' written as '\''.
std::string ShellQuote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

nlohmann::json RunCollector(const std::string& command, const std::string& phase,
                            const std::string& target, Duration timeout) {
  nlohmann::json result = {{"phase", phase}, {"command", Redact(command)}, {"ok", false}};
  long seconds = std::max<long>(1, std::chrono::ceil<std::chrono::seconds>(timeout).count());
  // coreutils' timeout ends a hanging collector; its stderr goes to ours.
  std::string line =
      fmt::format("KFPBENCH_PHASE={} KFPBENCH_TARGET={} timeout {} sh -c {}", ShellQuote(phase),
                  ShellQuote(target), seconds, ShellQuote(command));
  FILE* pipe = popen(line.c_str(), "r");
  if (!pipe) {
    result["error"] = "cannot start the collector";
    return result;
  }
  std::string output;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0 && output.size() < (1 << 20)) {
    output.append(buffer.data(), n);
  }
  int status = pclose(pipe);
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == 124) {
    result["error"] = fmt::format("timed out after {} s", seconds);
  } else if (code != 0) {
    result["error"] = fmt::format("exited with code {}", code);
  } else {
    auto parsed = nlohmann::json::parse(output, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_object()) {
      result["error"] = "did not print a JSON object";
    } else {
      result["ok"] = true;
      result["output"] = std::move(parsed);
    }
  }
  return result;
}

}  // namespace kfpbench::harness
