#include "ir/artifact_uri.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "ir/pipeline_spec.h"
#include "util/files.h"

namespace kfpbench::ir {
namespace {

namespace fs = std::filesystem;

Error Refused(std::string_view uri, std::string_view why) {
  return Error{fmt::format("artifact URI '{}' is refused: {}", uri, why), kHttpBadRequest};
}

// An object key made relative and normalised; nullopt when it names nothing
// or climbs out of its store.
std::optional<fs::path> ObjectKey(std::string_view key) {
  key.remove_prefix(std::min(key.find_first_not_of('/'), key.size()));
  fs::path normal = fs::path(key).lexically_normal();
  if (normal.empty() || normal == "." || *normal.begin() == "..") return std::nullopt;
  return normal;
}

}  // namespace

Result<std::string> LocalPathForUri(std::string_view uri, const ArtifactRoots& roots) {
  if (uri.find('\0') != std::string_view::npos) return Refused(uri, "it holds a NUL byte");
  static constexpr std::pair<std::string_view, std::string_view> kStores[] = {
      {"gs://", "gcs"}, {"minio://", "minio"}, {"s3://", "s3"}, {"oci://", "oci"}};
  for (auto [scheme, folder] : kStores) {
    if (!uri.starts_with(scheme)) continue;
    std::string key(uri.substr(scheme.size()));
    if (folder == "oci") {
      // component.LocalPathForURI: the whole reference is one folder's name.
      std::replace(key.begin(), key.end(), '/', '_');
      if (key.empty() || key == "." || key == "..") return Refused(uri, "no model named");
      key += "/models";
    }
    auto object = ObjectKey(key);
    if (!object) return Refused(uri, "its key names no object inside the store");
    fs::path mounted = fs::path(folder) / *object;
    if (roots.object_store.empty()) return ("/" / mounted).string();
    auto path = ResolveWithin(roots.object_store / mounted, roots.object_store);
    if (!path) return Refused(uri, "its key leads out of the object store's folder");
    return path->string();
  }
  if (uri.empty() || uri.front() != '/') {
    return Refused(uri, "unsupported storage scheme (gs://, s3://, minio://, oci:// or a path)");
  }
  for (const auto& root : roots.local) {
    if (root.empty()) continue;
    if (auto path = ResolveWithin(fs::path(uri), root)) return path->string();
  }
  return Refused(uri,
                 "a local path must lie below the backend's work root or the --package-root "
                 "it was started with");
}

Status CheckImporterUris(const PipelineSpec& spec, const nlohmann::json& root_parameters,
                         const ArtifactRoots& roots) {
  // Every run is checked (a simulation submits thousands): most pipelines
  // have no importer, and that is found without looking up any task.
  if (std::none_of(spec.executors.begin(), spec.executors.end(),
                   [](const auto& entry) { return entry.second.importer.has_value(); })) {
    return Ok();
  }
  auto check_dag = [&](const ComponentSpec& dag_component, bool is_root) -> Status {
    for (const auto& [name, task] : dag_component.dag->tasks) {
      const ComponentSpec* component = spec.FindComponent(task.component_ref);
      if (component == nullptr || component->is_dag()) continue;
      const ExecutorSpec* executor = spec.FindExecutor(component->executor_label);
      if (executor == nullptr || !executor->importer) continue;
      const ImporterSpec& importer = *executor->importer;
      std::string uri = importer.uri_constant;
      if (!importer.uri_runtime_parameter.empty()) {
        auto binding = task.parameters.find(importer.uri_runtime_parameter);
        if (binding == task.parameters.end()) continue;
        const nlohmann::json* value = nullptr;
        if (binding->second.kind == ParameterBinding::Kind::kConstant) {
          value = &binding->second.constant;
        } else if (is_root && binding->second.kind == ParameterBinding::Kind::kComponentInput &&
                   root_parameters.is_object()) {
          auto it = root_parameters.find(binding->second.component_input);
          if (it != root_parameters.end()) value = &*it;
        }
        uri = value != nullptr && value->is_string() ? value->get<std::string>() : std::string();
      }
      if (uri.empty()) continue;  // the importer fails as KFP's does, with its message
      static constexpr std::string_view kKfpStores[] = {"gs://", "s3://", "minio://", "mem://",
                                                        "oci://"};
      if (std::any_of(std::begin(kKfpStores), std::end(kKfpStores),
                      [&](std::string_view s) { return uri.starts_with(s); }) &&
          uri.find('\0') == std::string::npos) {
        continue;
      }
      if (auto path = LocalPathForUri(uri, roots); !path.ok()) {
        return Error{fmt::format("task '{}': {}", name, path.error().message), kHttpBadRequest};
      }
    }
    return Ok();
  };
  if (spec.root.is_dag()) {
    if (Status s = check_dag(spec.root, true); !s.ok()) return s;
  }
  for (const auto& [name, component] : spec.components) {
    if (!component.is_dag()) continue;
    if (Status s = check_dag(component, false); !s.ok()) return s;
  }
  return Ok();
}

}  // namespace kfpbench::ir
