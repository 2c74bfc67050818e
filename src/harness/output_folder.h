// The results folder (run --out) holds one benchmark's files at a time.
#pragma once

#include <filesystem>
#include <string>

#include "util/result.h"

namespace kfpbench::harness {

// Makes `dir` (creating it) ready for a new benchmark's results: the files
// an earlier benchmark left there (results.json, report.html, rep-K/) move
// into `dir`/previous/, replacing what an older one left there, so that
// nothing of two benchmarks mixes and the last one's results, finished or
// killed midway, stay readable. Other files in `dir` are not touched. Fails,
// before any load, when the folder cannot be written.
Status ClaimOutputFolder(const std::filesystem::path& dir);

// `out` when given, else PREFIX/<timestamp>, created; errors name --out.
Result<std::filesystem::path> OutputFolder(const std::string& out, const std::string& prefix);

}  // namespace kfpbench::harness
