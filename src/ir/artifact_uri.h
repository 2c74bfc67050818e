// Where an artifact named by URI lives on this machine, and which URIs a run
// may name at all.
//
// KFP's importer registers an object of an object store (gs://, s3://,
// minio://, oci://) and its launcher hands a step the object at the store's
// mount in the pod (component.LocalPathForURI: /gcs/b/k). KFP never reads the
// API server's own disk. The embedded backend has no object store, so each
// scheme is a folder under `object_store`, and a plain absolute path is
// allowed only below one of `local`: the work root that tasks write their
// artifacts to, and the --package-root a user opened. Every URI is normalised
// before it is checked ('.', '..', repeated '/', symbolic links of what
// exists), so no URI can name a file outside those folders.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/result.h"

namespace kfpbench::ir {

struct PipelineSpec;

struct ArtifactRoots {
  // gs://b/k -> object_store/gcs/b/k. Empty: KFP's in-pod mounts (/gcs/b/k),
  // for an engine that runs nothing on this machine (the simulator).
  std::filesystem::path object_store;
  // Absolute URIs must lie below one of these; none: no local path allowed.
  std::vector<std::filesystem::path> local;
};

// The local path of `uri`, or an Error (400) saying why it is refused: an
// unsupported scheme, a key that climbs out of its store, a path outside
// every local root, a NUL byte.
Result<std::string> LocalPathForUri(std::string_view uri, const ArtifactRoots& roots);

// Every importer URI a run of `spec` with these resolved root parameters is
// known to name before it starts (constants anywhere in the pipeline, and
// runtime parameters bound to the root DAG's inputs), refused when KFP's
// importer would fail on it: a URI of no store KFP's importer takes (gs://,
// s3://, minio://, mem://, oci://), or a plain path (kfpbench's own, for
// local steps) outside the artifact roots. An object key that climbs out of
// its store is imported as KFP imports it, with no local copy. A URI only
// known later (from a sub-DAG's input) is recorded by its importer, local
// copy or not. The Error names the task and the URI.
Status CheckImporterUris(const PipelineSpec& spec, const nlohmann::json& root_parameters,
                         const ArtifactRoots& roots);

}  // namespace kfpbench::ir
