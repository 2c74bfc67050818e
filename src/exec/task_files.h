// The files a task leaves behind in its work dir, read back after it exits:
// output parameter files and the tail of its log.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>

#include "util/result.h"

namespace kfpbench::exec {

// Before launch, as KFP's launcher does: creates each output file's parent
// directory and removes a stale file a previous attempt may have left, so a
// step that writes nothing is caught.
Status PrepareOutputFiles(const std::map<std::string, std::filesystem::path>& files);

// Reads every output parameter file as raw text. A missing file fails with
// "step did not write output parameter 'x' to <path>" (all missing ones are
// named); files over `max_bytes` fail too.
Result<std::map<std::string, std::string>> ReadOutputParameters(
    const std::map<std::string, std::filesystem::path>& files, size_t max_bytes);

// At most the last `max_bytes` of the file, starting at a line boundary when
// the cut falls mid-line, without trailing whitespace. Empty when unreadable.
std::string ReadLogTail(const std::filesystem::path& path, size_t max_bytes);

}  // namespace kfpbench::exec
