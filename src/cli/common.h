// Helpers every command uses.
#pragma once

#include <atomic>
#include <filesystem>
#include <string>

#include <CLI/CLI.hpp>

#include "harness/benchmark.h"
#include "harness/output_folder.h"
#include "util/result.h"

namespace kfpbench::cli {

// Set by SIGINT/SIGTERM once InstallSignalHandlers() ran: g_interrupted by
// the first signal (stop gracefully), g_hurry by the second (stop now, skip
// clean-up, still write results); a third ends the process at once.
extern std::atomic<bool> g_interrupted;
extern std::atomic<bool> g_hurry;
void InstallSignalHandlers();

// Prints "kfpbench: <message>" (secrets redacted) to stderr and returns `code`.
int Fail(const std::string& message, int code = 2);

// The exit code CI sees for how a benchmark ended (cli/cli.h).
int ExitCode(harness::Outcome outcome);

// Runs `file` on `session` (the first Ctrl-C stops it gracefully, the second
// promptly) and returns the exit code for how it ended.
int RunBenchmarkToExit(harness::Session& session, const harness::ScenarioFile& file,
                       harness::BenchmarkOptions options);

// "5%" or "0.05" -> 0.05: a finite share, at least 0 and at most `at_most`
// (100% for a share of something; a headroom may be more).
Result<double> ParsePercent(const std::string& text, double at_most = 1);

// An option whose text `parse` (text -> Result) turns into `target` while
// the command line is read; a parse error is a usage error naming the flag.
template <typename T, typename Parse>
CLI::Option* AddParsedOption(CLI::App& cmd, const std::string& name, T& target, Parse parse,
                             const std::string& help, const std::string& shown,
                             const std::string& type) {
  return cmd
      .add_option_function<std::string>(
          name,
          [name, &target, parse](const std::string& text) {
            auto v = parse(text);
            if (!v.ok()) throw CLI::ValidationError(name, v.error().message);
            target = *v;
          },
          help)
      ->default_str(shown)
      ->type_name(type);
}

// A duration flag ("500ms", "10m") or a share flag ("5%"), parsed as the
// command line is read: a bad value is a usage error naming the flag (exit
// 2); `target` holds the default until then.
CLI::Option* AddDurationOption(CLI::App& cmd, const std::string& name, Duration& target,
                               const std::string& help);
// A duration flag that must be above zero and at least `least`, parsed as
// the command line is read; a shorter one is a usage error naming the flag.
CLI::Option* AddPositiveDurationOption(CLI::App& cmd, const std::string& name, Duration& target,
                                       const std::string& help, Duration least = Duration::zero());
CLI::Option* AddPercentOption(CLI::App& cmd, const std::string& name, double& target,
                              const std::string& help);

// Checks for a factor and a count that must be above zero, saying so in
// words: CLI11's PositiveNumber names the whole range of a double.
const CLI::Validator& GreaterThanZero();
const CLI::Validator& CountAboveZero();

// `--out` when given, else PREFIX/<timestamp>, created (harness/output_folder.h).
using harness::OutputFolder;

}  // namespace kfpbench::cli
