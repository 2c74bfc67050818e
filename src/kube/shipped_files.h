// Files a pod reads that kfpbench ships in a ConfigMap, mounted as a volume
// with one item per file, so the pod finds each one at the path its command
// line names (`kube loadgen`'s scenario and pipelines, a job's scripts).
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/result.h"

namespace kfpbench::kube {

// Kubernetes refuses a ConfigMap whose keys and values add up to more
// (validation.MaxSecretSize, which ConfigMaps share).
inline constexpr size_t kConfigMapMaxBytes = 1024 * 1024;

// One file at its path below the volume's mount.
struct ShippedFile {
  std::string path;  // relative, '/'-separated, no ".."
  std::string text;
};

// The file's text, refused (naming `where`) when unreadable or not UTF-8: a
// ConfigMap's data holds text.
Result<std::string> ReadShippedText(const std::string& where, const std::filesystem::path& path);

// A ConfigMap key for a path ([-._a-zA-Z0-9]+, unique among `taken`).
std::string ConfigMapKey(const std::string& path, const std::vector<std::string>& taken);

// Refuses files a ConfigMap cannot hold, listing their sizes.
Status CheckConfigMapSize(const std::vector<ShippedFile>& files, const std::string& what);

// The ConfigMap holding `files`, and the configMap volume source that puts
// each at its path.
struct ShippedConfigMap {
  nlohmann::json config_map;
  nlohmann::json volume_source;  // {"name": ..., "items": [{key, path}, ...]}
};
ShippedConfigMap RenderShippedFiles(const std::string& name, const std::string& namespace_,
                                    const nlohmann::json& labels,
                                    const std::vector<ShippedFile>& files);

}  // namespace kfpbench::kube
