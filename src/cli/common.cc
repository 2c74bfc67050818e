#include "cli/common.h"

#include <cmath>
#include <csignal>
#include <iostream>
#include <sstream>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "cli/cli.h"
#include "util/secrets.h"
#include "util/time.h"

namespace kfpbench::cli {

std::atomic<bool> g_interrupted{false};
std::atomic<bool> g_hurry{false};

namespace {
// The first signal asks for a graceful stop, the second for a prompt one
// (results are still written); a third is fatal, as no handler is left.
extern "C" void OnSignal(int) {
  if (!g_interrupted.exchange(true)) return;
  g_hurry.store(true);
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
}

void Handle(int signal, void (*handler)(int)) {
  struct sigaction action {};
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // stays installed: the second signal is ours too
  sigaction(signal, &action, nullptr);
}
}  // namespace

void InstallSignalHandlers() {
  g_interrupted.store(false);
  g_hurry.store(false);
  Handle(SIGINT, OnSignal);
  Handle(SIGTERM, OnSignal);
}

int Fail(const std::string& message, int code) {
  // One "kfpbench: " per line: a file's problems come several at once.
  std::istringstream lines(Redact(message));
  for (std::string line; std::getline(lines, line);) std::cerr << "kfpbench: " << line << "\n";
  return code;
}

int RunBenchmarkToExit(harness::Session& session, const harness::ScenarioFile& file,
                       harness::BenchmarkOptions options) {
  options.harness.interrupted = options.finish.interrupted = &g_interrupted;
  options.harness.hurry = &g_hurry;
  InstallSignalHandlers();
  auto outcome = harness::RunBenchmark(session, file, options, std::cout);
  if (!outcome.ok()) return Fail(outcome.error().message);
  return ExitCode(*outcome);
}

int ExitCode(harness::Outcome outcome) {
  switch (outcome) {
    case harness::Outcome::kOk:
      return kExitOk;
    case harness::Outcome::kFailed:
      return kExitFailed;
    case harness::Outcome::kThresholdsFailed:
      return kExitThresholdsFailed;
    case harness::Outcome::kInterrupted:
      return kExitInterrupted;
  }
  return kExitFailed;
}

Result<double> ParsePercent(const std::string& text, double at_most) {
  std::string t = text;
  bool percent = !t.empty() && t.back() == '%';
  if (percent) t.pop_back();
  char* end = nullptr;
  double v = std::strtod(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size() || !(v >= 0) || !std::isfinite(v)) {
    return Error{"expected a percentage like 5% (got '" + text + "')"};
  }
  if (percent) v /= 100;
  if (v > at_most) {
    return Error{fmt::format("must be at most {:g}% (got '{}')", at_most * 100, text)};
  }
  return v;
}

CLI::Option* AddDurationOption(CLI::App& cmd, const std::string& name, Duration& target,
                               const std::string& help) {
  return AddParsedOption(cmd, name, target, ParseDuration, help, FormatDuration(target),
                         "DURATION");
}

CLI::Option* AddPositiveDurationOption(CLI::App& cmd, const std::string& name, Duration& target,
                                       const std::string& help, Duration least) {
  auto parse = [least](const std::string& text) -> Result<Duration> {
    auto d = ParseDuration(text);
    if (d.ok() && *d > Duration::zero() && *d >= least) return d;
    if (least > Duration::zero()) {
      return Error{fmt::format("expected a duration of at least {}, such as {} (got '{}')",
                               FormatDuration(least), FormatDuration(least * 10), text)};
    }
    return Error{"expected a positive duration such as 30m (got '" + text + "')"};
  };
  return AddParsedOption(cmd, name, target, parse, help,
                         target > Duration::zero() ? FormatDuration(target) : "", "DURATION");
}

CLI::Option* AddPercentOption(CLI::App& cmd, const std::string& name, double& target,
                              const std::string& help) {
  return AddParsedOption(
      cmd, name, target, [](const std::string& text) { return ParsePercent(text); }, help,
      fmt::format("{:g}%", target * 100), "PERCENT");
}

const CLI::Validator& GreaterThanZero() {
  static const CLI::Validator check(
      [](const std::string& text) -> std::string {
        double value = 0;
        if (!CLI::detail::lexical_cast(text, value)) return "must be a number, got " + text;
        if (!(value > 0)) return "must be greater than 0, got " + text;
        return {};
      },
      "> 0");
  return check;
}

const CLI::Validator& CountAboveZero() {
  static const CLI::Validator check(
      [](const std::string& text) -> std::string {
        int64_t value = 0;
        if (!CLI::detail::lexical_cast(text, value)) return "must be a whole number, got " + text;
        if (value <= 0) return "must be at least 1, got " + text;
        return {};
      },
      ">= 1");
  return check;
}

}  // namespace kfpbench::cli
