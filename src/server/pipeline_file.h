// A pipeline package as KFP's ReadPipelineFile (backend/src/apiserver/server/
// util.go) reads it: by the file name's extension a YAML (.yaml, .yml) or
// JSON (.json) file as it is; otherwise, by its first bytes, a zip or a
// gzipped tarball holding "pipeline.yaml" (or, failing that, a first entry
// whose name ends in .yaml/.yml); anything else is refused. At most
// kMaxUploadBytes (KFP's 32 MiB MaxFileLength) are read.
#pragma once

#include <string>
#include <string_view>

#include "util/result.h"

namespace kfpbench::server {

// The pipeline text, or a 400 with KFP's message.
Result<std::string> ReadPipelineFile(std::string_view file_name, std::string_view bytes);

}  // namespace kfpbench::server
