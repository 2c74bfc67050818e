// What `run` checks before it sends any load, and what `validate` checks: one
// function, so a file that validates is a file that runs, and a file that
// would be refused is refused by both with the same words.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "harness/scenario.h"

namespace kfpbench::harness {

struct Preflight {
  // Each problem on its own line, naming the file and the JSON path:
  // "s.json: [0].params: unknown parameter 'durtion' (pipeline inputs: duration)".
  std::vector<std::string> problems;
  // Things that are right but easy to read wrong (a bare number of minutes).
  std::vector<std::string> notes;
  // Each pipeline file as read (and parsed) here: uploads send this text, so
  // a file is read once and what was checked is what is sent.
  std::map<std::string, std::string> pipeline_texts;
  // The embedded backend's executor: as given, or the one chosen when none
  // was ("process", or "stub" when some pipeline cannot run as processes),
  // with the reason for a stub chosen. Empty against a remote target.
  std::string executor{};
  std::string executor_reason;
};

// Where the runs' steps will execute, as far as the preflight can tell.
struct PreflightOptions {
  // A KFP named by --host (or a config or the file) runs the steps in its
  // cluster, in their images: nothing of the executor to check here.
  bool remote_target = false;
  // The embedded backend's --executor as given; empty when not given: the
  // preflight then chooses (Preflight::executor). Members have initializers
  // so that designated initializers may leave them out.
  std::string executor{};
  // The image that replaces kfpbench's unpublished placeholder in the steps
  // sent (kube loadgen --image); empty: a remote target is told when a
  // pipeline's steps name the placeholder, which its cluster cannot pull.
  std::string image{};
};

// Checks a loaded scenario file: every pipeline file parses as KFP IR, every run's parameters are
// the pipeline's inputs with the right types (as KFP's API server checks them), the thresholds
// parse and name real metrics, and a "target" has a host and only known keys. On the embedded
// backend, whether its executor can run every pipeline the file starts runs of (see
// exec::CheckRunsAsProcesses): with --executor process such a pipeline is a problem; with no
// --executor the whole benchmark runs its steps as timed stubs, said in a note.
Preflight CheckScenarioFile(const ScenarioFile& file, const PreflightOptions& options = {});

// What `run` does before any load: checks the loaded file, refuses it with
// every preflight problem (one per line), logs the notes, keeps the pipeline
// texts and the executor chosen in `file`, and applies `shard` ("i/N",
// empty for none).
Status PrepareScenarioFile(ScenarioFile& file, const PreflightOptions& options,
                           const std::string& shard);
// LoadScenarioFile, then PrepareScenarioFile.
Result<ScenarioFile> LoadCheckedScenarioFile(const std::filesystem::path& path,
                                             const LoadOptions& options, const std::string& shard,
                                             const PreflightOptions& preflight = {});

}  // namespace kfpbench::harness
