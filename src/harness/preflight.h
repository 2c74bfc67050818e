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
};

// Checks a loaded scenario file: every pipeline file parses as KFP IR, every run's parameters are
// the pipeline's inputs with the right types (as KFP's API server checks them), the thresholds
// parse and name real metrics, and a "target" has a host and only known keys.
Preflight CheckScenarioFile(const ScenarioFile& file);

// What `run` does before any load: loads the file, refuses it with every
// preflight problem (one per line), logs the notes, and applies `shard`
// ("i/N", empty for none).
Result<ScenarioFile> LoadCheckedScenarioFile(const std::filesystem::path& path,
                                             const LoadOptions& options, const std::string& shard);

}  // namespace kfpbench::harness
