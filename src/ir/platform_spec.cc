// kfp-kubernetes' platform spec: of each executor's KubernetesExecutorConfig
// the node selector, tolerations and required node affinity are kept; what
// else it asks for is named in a warning (docs/COMPATIBILITY.md).
#include <set>
#include <utility>

#include <fmt/format.h>

#include "ir/pipeline_spec.h"
#include "ir/spec_fields.h"

namespace kfpbench::ir {
namespace {

using detail::At;
using detail::Join;
using detail::OptString;
using detail::ReqString;
using detail::StringList;
using nlohmann::json;

Result<std::vector<SelectorRequirement>> ParseRequirements(const json& list,
                                                           const std::string& path) {
  std::vector<SelectorRequirement> out;
  if (list.is_null()) return out;
  if (!list.is_array()) return At(path, "expected a list");
  for (size_t i = 0; i < list.size(); ++i) {
    std::string p = fmt::format("{}[{}]", path, i);
    const json& r = list[i];
    if (!r.is_object()) return At(p, "expected a mapping");
    SelectorRequirement req;
    auto key = ReqString(r, "key", p);
    if (!key.ok()) return key.error();
    req.key = *key;
    auto op = ReqString(r, "operator", p);
    if (!op.ok()) return op.error();
    req.op = *op;
    static const std::set<std::string> kOps = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
    if (!kOps.contains(req.op)) {
      return At(Join(p, "operator"),
                "'" + req.op + "' is not In, NotIn, Exists, DoesNotExist, Gt or Lt");
    }
    auto values = StringList(r, "values", p);
    if (!values.ok()) return values.error();
    req.values = std::move(*values);
    out.push_back(std::move(req));
  }
  return out;
}

// Each item of the list `name` in `config` (none when absent or null),
// which must be a mapping, given to `fn(item, its path)` until one fails.
template <typename Fn>
Status ForEachMapping(const json& config, const char* name, const std::string& path, Fn fn) {
  auto list = config.find(name);
  if (list == config.end() || list->is_null()) return Ok();
  if (!list->is_array()) return At(path + "." + name, "expected a list");
  for (size_t i = 0; i < list->size(); ++i) {
    std::string p = fmt::format("{}.{}[{}]", path, name, i);
    const json& item = (*list)[i];
    if (!item.is_object()) return At(p, "expected a mapping");
    if (Status s = fn(item, p); !s.ok()) return s;
  }
  return Ok();
}

Status ParseToleration(const json& t, const std::string& p, NodeScheduling& out) {
  if (t.contains("tolerationJson")) return Ok();  // from a task input: not applied
  Toleration tol;
  for (auto [key, dst] : {std::pair<const char*, std::string*>{"key", &tol.key},
                          {"operator", &tol.op},
                          {"value", &tol.value},
                          {"effect", &tol.effect}}) {
    auto v = OptString(t, key, p);
    if (!v.ok()) return v.error();
    if (!v->empty()) *dst = *v;
  }
  if (tol.op != "Equal" && tol.op != "Exists") {
    return At(p + ".operator", "'" + tol.op + "' is not Equal or Exists");
  }
  out.tolerations.push_back(std::move(tol));
  return Ok();
}

// A required node affinity term; a preferred one (with a weight) is skipped.
Status ParseAffinityTerm(const json& term, const std::string& p, NodeScheduling& out) {
  if (term.contains("weight")) return Ok();
  auto reqs = ParseRequirements(term.value("matchExpressions", json()), p + ".matchExpressions");
  if (!reqs.ok()) return reqs.error();
  auto fields = ParseRequirements(term.value("matchFields", json()), p + ".matchFields");
  if (!fields.ok()) return fields.error();
  // Nodes have one field, metadata.name; a requirement on it is one on the name.
  for (auto& f : *fields) f.key = "metadata.name";
  reqs->insert(reqs->end(), fields->begin(), fields->end());
  if (!reqs->empty()) out.required_terms.push_back(std::move(*reqs));
  return Ok();
}

// One executor's scheduling fields in kfp-kubernetes' KubernetesExecutorConfig.
Status ParseScheduling(const json& config, const std::string& path, NodeScheduling& out) {
  if (auto sel = config.find("nodeSelector"); sel != config.end() && sel->is_object()) {
    if (auto labels = sel->find("labels"); labels != sel->end() && !labels->is_null()) {
      if (!labels->is_object()) return At(path + ".nodeSelector.labels", "expected a mapping");
      for (const auto& [k, v] : labels->items()) {
        if (!v.is_string()) return At(path + ".nodeSelector.labels." + k, "expected a string");
        out.node_selector[k] = v.get<std::string>();
      }
    }
  }
  Status tolerations = ForEachMapping(
      config, "tolerations", path,
      [&](const json& t, const std::string& p) { return ParseToleration(t, p, out); });
  if (!tolerations.ok()) return tolerations;
  return ForEachMapping(config, "nodeAffinity", path, [&](const json& term, const std::string& p) {
    return ParseAffinityTerm(term, p, out);
  });
}

}  // namespace

Status ParsePlatformSpec(const json& doc, PipelineSpec& spec) {
  const json* executors = &doc;
  for (const char* key : {"platforms", "kubernetes", "deploymentSpec", "executors"}) {
    if (!executors->is_object() || !executors->contains(key)) return Ok();
    executors = &(*executors)[key];
  }
  if (!executors->is_object()) {
    return At("platforms.kubernetes.deploymentSpec.executors", "expected a mapping");
  }
  std::set<std::string> unapplied;
  for (const auto& [label, config] : executors->items()) {
    std::string path = "platforms.kubernetes.deploymentSpec.executors." + label;
    auto exec = spec.executors.find(label);
    if (exec == spec.executors.end()) return At(path, "no such executor in deploymentSpec");
    if (!config.is_object()) return At(path, "expected a mapping");
    if (Status s = ParseScheduling(config, path, exec->second.scheduling); !s.ok()) return s;
    for (const auto& [key, value] : config.items()) {
      if (key != "nodeSelector" && key != "tolerations" && key != "nodeAffinity") {
        unapplied.insert(key);
        continue;
      }
      // Rules given as JSON by a task input are resolved by KFP's driver at
      // run time; the embedded backend does not apply them.
      for (const char* dynamic : {"nodeSelectorJson", "tolerationJson", "nodeAffinityJson"}) {
        bool found = value.is_object() && value.contains(dynamic);
        if (value.is_array()) {
          for (const auto& item : value)
            found = found || (item.is_object() && item.contains(dynamic));
        }
        if (found) unapplied.insert(dynamic);
      }
    }
  }
  if (!unapplied.empty()) {
    std::string keys;
    for (const auto& k : unapplied) keys += (keys.empty() ? "" : ", ") + k;
    spec.warnings.push_back("platform spec: " + keys + " not applied by the embedded backend");
  }
  return Ok();
}

}  // namespace kfpbench::ir
