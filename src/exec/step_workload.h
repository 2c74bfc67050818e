// The built-in benchmark step behind `kfpbench step`: burns a chosen amount of
// CPU and memory for a chosen time, writes output parameters, and exits with a
// chosen code, so that benchmark pipelines need no image but kfpbench's own.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "util/result.h"
#include "util/time.h"

namespace kfpbench::exec {

struct StepOptions {
  Duration duration{0};
  // Cores kept busy. A fraction is a duty cycle spread over ceil(cpu) threads,
  // so 1.5 keeps two threads busy 75% of the time each.
  double cpu = 0;
  // Allocated and touched page by page up front, then held for the duration.
  int64_t memory_bytes = 0;
  // (file, value) pairs written after the duration, parent dirs created, value
  // written as is (no trailing newline), like a KFP component's output file.
  std::vector<std::pair<std::string, std::string>> output_params;
  int exit_code = 0;  // what the step exits with once done (--fail-with)
  // LARGE_DATASET: a file of artifact_size bytes written to write_artifact,
  // and files read back in full, before the duration's wait.
  std::string write_artifact;
  int64_t artifact_size = -1;
  std::vector<std::string> read_artifacts;
};

// The flags ParseStepArgs reads, for `kfpbench step --help` and docs/CLI.md.
inline constexpr const char* kStepFlags =
    "Flags (also --flag=value):\n"
    "  --duration 2s                        how long the step runs (a bare number is seconds)\n"
    "  --cpu 0.5                            cores kept busy (or 500m)\n"
    "  --memory 256Mi                       memory touched and held (Ki/Mi/Gi/K/M/G or bytes)\n"
    "  --output-param FILE=VALUE            write an output parameter (repeatable)\n"
    "  --fail-with N                        exit with N (0..255) when done\n"
    "  --write-artifact PATH --size 512Mi   write and flush an artifact of that size\n"
    "  --read-artifact PATH                 read an artifact in full (repeatable)";

// Parses the arguments after `kfpbench step` (kStepFlags). Errors name the
// offending flag.
Result<StepOptions> ParseStepArgs(const std::vector<std::string>& args);

// Runs the step in this process and returns its exit code. Progress goes to
// stdout, problems to stderr (both end up in the task's log).
int RunStep(const StepOptions& options);

}  // namespace kfpbench::exec
