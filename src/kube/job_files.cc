#include "kube/job_files.h"

#include <filesystem>

#include <fmt/format.h>

#include "kube/manifest.h"

namespace kfpbench::kube {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Stands for {{config_dir}} while the templates are resolved, so what
// follows it can be read off the result.
constexpr std::string_view kMarker = "\x01config_dir\x01";
constexpr std::string_view kFlag = "--set config_dir=FOLDER (a folder in the image that holds it)";

// The file named right after each marker: "/ddp_cpu.py" up to a separator.
Status CollectNamed(const std::string& where, const std::string& resolved,
                    std::vector<std::string>& names) {
  for (size_t at = resolved.find(kMarker); at != std::string::npos;
       at = resolved.find(kMarker, at + 1)) {
    size_t begin = at + kMarker.size();
    size_t end = resolved.find_first_of(" \t\n:;,=\"'", begin);
    std::string tail = resolved.substr(begin, end == std::string::npos ? end : end - begin);
    fs::path rel = fs::path(tail).relative_path().lexically_normal();
    if (tail.size() < 2 || tail.front() != '/' || rel.empty() || *rel.begin() == ".." ||
        !rel.has_filename()) {
      return Error{fmt::format(
          "{}: {{{{config_dir}}}} must name a file inside the config's folder, "
          "{{{{config_dir}}}}/FILE, to be shipped to the pods (got '{}'); or pass {}",
          where, std::string(resolved).replace(at, kMarker.size(), "{{config_dir}}"), kFlag)};
    }
    names.push_back(rel.generic_string());
  }
  return Ok();
}

// Adds the files volume to every pod template of the manifest.
void MountFiles(json& node, const json& volume_source) {
  if (node.is_object()) {
    if (node.contains("containers") && node.contains("restartPolicy")) {
      node["volumes"] = json::array({{{"name", "job-files"}, {"configMap", volume_source}}});
      for (auto& c : node["containers"]) {
        c["volumeMounts"] = json::array(
            {{{"name", "job-files"}, {"mountPath", kJobFilesMount}, {"readOnly", true}}});
      }
      return;
    }
    for (auto& [k, v] : node.items()) MountFiles(v, volume_source);
  }
}

}  // namespace

Result<ClusterJob> PrepareClusterJob(const JobConfig& config) {
  ClusterJob out;
  // Set by the user: a folder in the image, which the pods have.
  if (config.parameters.count("config_dir")) return out;
  std::vector<std::string> names;
  for (auto point : ExpandSweep(config)) {
    point.params["config_dir"] = std::string(kMarker);
    for (size_t i = 0; i < config.command.size(); ++i) {
      auto s = Substitute(config.command[i], point.params);
      if (!s.ok()) return s.error();
      if (auto st = CollectNamed(fmt::format("command[{}]", i), *s, names); !st.ok())
        return st.error();
    }
    for (const auto& [k, v] : config.env) {
      auto s = Substitute(v, point.params);
      if (!s.ok()) return s.error();
      if (auto st = CollectNamed("env." + k, *s, names); !st.ok()) return st.error();
    }
  }
  for (const auto& name : names) {
    bool seen = false;
    for (const auto& f : out.files) seen = seen || f.path == name;
    if (seen) continue;
    fs::path local = config.dir / name;
    std::error_code ec;
    if (!fs::is_regular_file(local, ec)) {
      return Error{fmt::format(
          "{{{{config_dir}}}}/{}: {} is not a file, so it cannot be shipped to the pods; pass {}",
          name, local.string(), kFlag)};
    }
    auto text = ReadShippedText("{{config_dir}}/" + name, local);
    if (!text.ok()) return Error{text.error().message + "; pass " + std::string(kFlag)};
    out.files.push_back({name, std::move(*text)});
  }
  if (out.files.empty()) return out;
  if (auto st = CheckConfigMapSize(out.files, "the files {{config_dir}} names"); !st.ok()) {
    return Error{st.error().message + "\npass " + std::string(kFlag)};
  }
  json labels = {{"app.kubernetes.io/managed-by", "kfpbench"}, {"kfpbench.io/config", config.name}};
  auto shipped = RenderShippedFiles(config.name + "-files", config.namespace_, labels, out.files);
  out.config_map = std::move(shipped.config_map);
  out.volume_source = std::move(shipped.volume_source);
  return out;
}

Result<json> RenderClusterManifest(const JobConfig& config, const ClusterJob& cluster,
                                   SweepPoint point) {
  if (!cluster.config_map) return RenderManifest(config, point);
  point.params["config_dir"] = kJobFilesMount;
  auto doc = RenderManifest(config, point);
  if (!doc.ok()) return doc;
  MountFiles((*doc)["spec"], cluster.volume_source);
  return doc;
}

}  // namespace kfpbench::kube
