// `kfpbench run` as one call: a scenario file loaded and checked (the
// preflight `validate` shares), its target resolved and opened, and the
// benchmark run and finished. The CLI parses flags into a RunRequest, calls
// this and maps the Outcome to an exit code; everything between is here, so
// it is tested without spawning the binary.
#pragma once

#include <filesystem>
#include <functional>
#include <iosfwd>
#include <string>

#include "harness/benchmark.h"
#include "harness/scenario.h"
#include "harness/session.h"
#include "util/result.h"

namespace kfpbench::harness {

struct RunRequest {
  std::filesystem::path scenario;  // the scenario file
  LoadOptions load;                // --pipelines, --time-scale
  // The target as the flags give it (the embedded backend's flags applied);
  // resolved against the file's "target" here (ResolveTarget).
  TargetOptions target;
  // The embedded backend's --executor as given; empty: not given, and the
  // preflight chooses (stubs for pipelines that cannot run as processes).
  std::string executor;
  std::string shard;  // "i/N": this process's share of the load; empty: all of it
  // The results folder (created); empty: results/<timestamp>.
  std::string out;
  BenchmarkOptions benchmark;
  // Called once the target is open, just before the load: the CLI takes
  // Ctrl-C over from there (until then it ends the process).
  std::function<void()> on_target_open;
};

// Loads and checks the file (a bad "target" is said with the file's other
// problems), resolves the target (the file's executor and replay steps
// become the embedded backend's unless the flags chose), makes the results
// folder, opens the session, says which target it is before any load, and
// runs the benchmark (RunBenchmark). An Error for what stops it before any
// load: bad input.
Result<Outcome> RunScenarioFile(const RunRequest& request, std::ostream& console);

}  // namespace kfpbench::harness
