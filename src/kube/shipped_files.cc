#include "kube/shipped_files.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "util/files.h"
#include "util/strings.h"

namespace kfpbench::kube {

using nlohmann::json;

Result<std::string> ReadShippedText(const std::string& where, const std::filesystem::path& path) {
  auto text = ReadFile(path);
  if (!text.ok()) return Error{where + ": " + text.error().message};
  if (!IsValidUtf8(*text)) {
    return Error{fmt::format("{}: {} is not UTF-8 text; a ConfigMap's data holds text only", where,
                             path.string())};
  }
  return text;
}

std::string ConfigMapKey(const std::string& path, const std::vector<std::string>& taken) {
  std::string key;
  for (char c : path) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
    key += c == '/' ? '.' : ok ? c : '_';
  }
  if (key.empty() || key == "." || key == "..") key = "file" + key;
  std::string unique = key;
  for (int n = 2; std::find(taken.begin(), taken.end(), unique) != taken.end(); ++n) {
    unique = fmt::format("{}-{}", key, n);
  }
  return unique;
}

Status CheckConfigMapSize(const std::vector<ShippedFile>& files, const std::string& what) {
  size_t total = 0;
  std::vector<std::string> keys;
  for (const auto& f : files) {
    keys.push_back(ConfigMapKey(f.path, keys));
    total += keys.back().size() + f.text.size();
  }
  if (total <= kConfigMapMaxBytes) return Ok();
  std::string sizes;
  for (const auto& f : files) sizes += fmt::format("\n  {} ({} bytes)", f.path, f.text.size());
  return Error{
      fmt::format("{} are {} bytes, over the 1 MiB ({} bytes) a ConfigMap holds, so no "
                  "pod could be given them:{}",
                  what, total, kConfigMapMaxBytes, sizes)};
}

ShippedConfigMap RenderShippedFiles(const std::string& name, const std::string& namespace_,
                                    const json& labels, const std::vector<ShippedFile>& files) {
  json data = json::object();
  json items = json::array();
  std::vector<std::string> keys;
  for (const auto& f : files) {
    keys.push_back(ConfigMapKey(f.path, keys));
    data[keys.back()] = f.text;
    items.push_back({{"key", keys.back()}, {"path", f.path}});
  }
  return {{{"apiVersion", "v1"},
           {"kind", "ConfigMap"},
           {"metadata", {{"name", name}, {"namespace", namespace_}, {"labels", labels}}},
           {"data", data}},
          {{"name", name}, {"items", items}}};
}

}  // namespace kfpbench::kube
