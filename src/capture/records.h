// What a capture keeps of each run and pipeline version, as the JSON it
// writes: one line of runs.jsonl per run, one versions/<key>.json per
// pipeline version (docs/CAPACITY.md, "The capture folder").
#pragma once

#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "ir/pipeline_spec.h"
#include "kfp/model.h"

namespace kfpbench::capture {

// task name (and display name) -> executor label, across nested DAGs.
using TaskLabels = std::map<std::string, std::string>;

// executor label -> its CPU and memory requests and limits, accelerator, node
// selector and tolerations, as compiled.
nlohmann::json StepResources(const ir::PipelineSpec& spec);

// A parameter value as a capture keeps it by default: "sha256:" and the first
// 16 hex digits of its JSON text's SHA-256, so equal values stay equal.
std::string HashedValue(const nlohmann::json& value);

// The pipeline version a run names, as the target wrote it: data, never a
// path. Empty for a run with an inline spec or none.
std::string VersionId(const kfp::Run& run);

// What a run's version is named by in the folder (its file versions/<key>.json,
// its simulate/<key>/ folder, its lines in CSV and YAML): the version id when
// it is a plain file name (IsSafeKey), else "id-" and the id's hash; for a run
// with an inline spec "inline-" and the spec's hash; "unknown" without either.
// Whatever a server answers, a key names a file directly below its folder.
std::string VersionKey(const kfp::Run& run);

// Whether `key` may name a file and a YAML key as it is: 1 to 128 of
// [A-Za-z0-9._-], not starting with '.' or '-' (no "..", no option lookalike).
bool IsSafeKey(std::string_view key);

// versions/<key>.json of a version read from the target; `labels` receives its
// task labels (empty when the spec does not parse, which the file says).
nlohmann::json VersionFile(const std::string& key, const kfp::PipelineVersion& version,
                           TaskLabels& labels);
// A version the target no longer has (deleted since its runs): kept so that
// its runs are, with the spec marked missing.
nlohmann::json MissingVersionFile(const std::string& key, const std::string& version_id,
                                  const std::string& pipeline_id, const std::string& reason);

struct RunLineOptions {
  // Parameter values as given; otherwise hashed. Names that look like
  // credentials (password, token, secret, key, credential) are hashed always.
  bool keep_parameters = false;
};

// One line of runs.jsonl. A run not yet in a final state is "censored": its
// end is unknown, not its finish time.
nlohmann::json RunLine(const kfp::Run& run, const std::string& version_key,
                       const TaskLabels& labels, const RunLineOptions& options);

// How many times a task was started: one, plus one for each retry its state
// history records (a RUNNING state carrying the failed attempt's error); zero
// for a task that never started (a cache hit, a skipped branch).
int Attempts(const kfp::PipelineTaskDetail& task);

}  // namespace kfpbench::capture
