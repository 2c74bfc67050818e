// An artifact as KFP's object store holds what Argo archived: a gzipped
// tarball of the file, or of a folder's regular files, for the artifact read
// endpoint (run_artifact_server.go).
#pragma once

#include <filesystem>
#include <string>

#include "util/result.h"

namespace kfpbench::server {

// A folder with more entries than this is refused (413), whatever their size.
inline constexpr size_t kMaxArchiveEntries = 100000;

// The .tgz of `path` (a file, or a folder's regular files below it, named
// relative to `path`'s parent), served only when `path`, its symbolic links
// resolved, lies below `within` (a run's own folder): anything else is "not
// found". Links below a folder are skipped, never followed. At most
// `max_bytes` of content; more, or nothing there, is an Error (404 when
// missing, 413 when too large).
Result<std::string> TarGzOf(const std::filesystem::path& path, const std::filesystem::path& within,
                            size_t max_bytes);

// RFC 4648 base64 with padding, as Go's base64.StdEncoding writes it.
std::string Base64(std::string_view bytes);

}  // namespace kfpbench::server
