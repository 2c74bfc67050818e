#include "harness/collector.h"

#include <iostream>

#include <fmt/format.h>

#include "util/json_reader.h"
#include "util/process.h"
#include "util/secrets.h"

namespace kfpbench::harness {
namespace {

constexpr size_t kMaxOutputBytes = 1 << 20;

}  // namespace

nlohmann::json RunCollector(const std::string& command, const std::string& phase,
                            const std::string& target, Duration timeout) {
  nlohmann::json result = {{"phase", phase}, {"command", Redact(command)}, {"ok", false}};
  const auto seconds = std::max<std::chrono::seconds::rep>(
      1, std::chrono::ceil<std::chrono::seconds>(timeout).count());
  // The command is the user's shell text; phase and target reach it through
  // the environment only, never spliced into a shell line.
  CaptureRequest request{{"/bin/sh", "-c", command},
                         {{"KFPBENCH_PHASE", phase}, {"KFPBENCH_TARGET", target}},
                         std::chrono::seconds(seconds)};
  auto run = Capture(request);
  if (!run.ok()) {
    result["error"] = run.error().message;
    return result;
  }
  std::cerr << run->err;  // a collector's complaints are for the user, as before
  if (run->timed_out) {
    result["error"] = fmt::format("timed out after {} s", seconds);
  } else if (run->exit_code != 0) {
    result["error"] = fmt::format("exited with code {}", run->exit_code);
  } else if (run->out.size() > kMaxOutputBytes) {
    result["error"] = fmt::format("printed more than {} bytes", kMaxOutputBytes);
  } else {
    auto parsed = ParseJson(run->out);
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
