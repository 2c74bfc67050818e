// Parsing the KFP v2 IR into typed structs: the document, its components and
// their DAGs here; executors, tasks and the platform spec beside it
// (executor_spec.cc, task_spec.cc, platform_spec.cc). Once every component is
// known, pipeline_spec_check.cc checks the names they use.
#include "ir/pipeline_spec.h"

#include <memory>
#include <utility>

#include <fmt/format.h>

#include "ir/executor_spec.h"
#include "ir/pipeline_spec_check.h"
#include "ir/spec_fields.h"
#include "ir/task_spec.h"
#include "util/enum_names.h"
#include "util/files.h"
#include "util/json_reader.h"

namespace kfpbench::ir {
namespace {

using detail::At;
using detail::Join;
using detail::OptObject;
using detail::OptString;
using detail::ParseExecutor;
using detail::ParseTask;
using detail::ReqObject;
using detail::ReqString;
using detail::TypeName;
using nlohmann::json;

// Calls `each(name, def, path)` for every entry of parent[key] (if there is
// one), each of which must be a mapping.
template <typename Each>
Status EachMapping(const json& parent, std::string_view key, const std::string& path, Each each) {
  auto obj = OptObject(parent, key, path);
  if (!obj.ok()) return obj.error();
  if (*obj == nullptr) return Ok();
  const std::string base = Join(path, key);
  for (const auto& [name, def] : (*obj)->items()) {
    std::string p = Join(base, name);
    if (!def.is_object()) return At(p, "expected a mapping");
    if (Status s = each(name, def, p); !s.ok()) return s;
  }
  return Ok();
}

Status ParseInterface(const json& parent, std::string_view key, const std::string& path,
                      InterfaceSpec& out) {
  auto obj = OptObject(parent, key, path);
  if (!obj.ok()) return obj.error();
  if (*obj == nullptr) return Ok();
  std::string base = Join(path, key);
  Status params =
      EachMapping(**obj, "parameters", base,
                  [&](const std::string& name, const json& def, const std::string& p) -> Status {
                    ParameterSpec spec;
                    spec.name = name;
                    auto type = ReqString(def, "parameterType", p);
                    if (!type.ok()) return type.error();
                    auto parsed = ParseParameterType(*type);
                    if (!parsed)
                      return At(Join(p, "parameterType"), "unknown parameter type '" + *type + "'");
                    spec.type = *parsed;
                    if (auto it = def.find("defaultValue"); it != def.end())
                      spec.default_value = *it;
                    spec.is_optional = def.value("isOptional", false);
                    auto desc = OptString(def, "description", p);
                    if (!desc.ok()) return desc.error();
                    spec.description = *desc;
                    out.parameters.emplace(name, std::move(spec));
                    return Ok();
                  });
  if (!params.ok()) return params;
  return EachMapping(**obj, "artifacts", base,
                     [&](const std::string& name, const json& def, const std::string&) -> Status {
                       ArtifactSpec spec;
                       spec.name = name;
                       if (auto type = def.find("artifactType");
                           type != def.end() && type->is_object()) {
                         spec.schema_title = type->value("schemaTitle", "");
                         spec.schema_version = type->value("schemaVersion", "");
                       }
                       spec.is_artifact_list = def.value("isArtifactList", false);
                       spec.is_optional = def.value("isOptional", false);
                       out.artifacts.emplace(name, std::move(spec));
                       return Ok();
                     });
}

Status ParseOutputSources(const json& def, const char* single, const char* oneof,
                          const char* selectors, const char* key_field, const std::string& path,
                          std::vector<OutputSource>& out) {
  auto add = [&](const json& sel, const std::string& p) -> Status {
    if (!sel.is_object()) return At(p, "expected a mapping");
    auto producer = ReqString(sel, "producerSubtask", p);
    if (!producer.ok()) return producer.error();
    auto key = ReqString(sel, key_field, p);
    if (!key.ok()) return key.error();
    out.push_back({*producer, *key});
    return Ok();
  };
  if (!def.is_object()) return At(path, "expected a mapping");
  if (single != nullptr) {
    if (auto it = def.find(single); it != def.end()) return add(*it, Join(path, single));
  }
  const json* list = nullptr;
  std::string lpath;
  if (oneof != nullptr) {
    if (auto it = def.find(oneof); it != def.end() && it->is_object()) {
      lpath = Join(Join(path, oneof), selectors);
      if (auto s = it->find(selectors); s != it->end()) list = &*s;
    }
  } else if (auto it = def.find(selectors); it != def.end()) {
    lpath = Join(path, selectors);
    list = &*it;
  }
  if (list == nullptr || !list->is_array() || list->empty()) {
    return At(path, "expected a source for the DAG output");
  }
  for (size_t i = 0; i < list->size(); ++i) {
    if (auto s = add((*list)[i], fmt::format("{}[{}]", lpath, i)); !s) return s;
  }
  return Ok();
}

// The pipeline spec document: pipelineInfo, the executors, the components
// and the root, then the checks that need them all.
class SpecParser {
 public:
  explicit SpecParser(PipelineSpec& spec) : spec_(spec) {}

  Status Parse(const json& doc) {
    if (!doc.is_object()) return At("", fmt::format("expected a mapping, got {}", TypeName(doc)));
    auto info = ReqObject(doc, "pipelineInfo", "");
    if (!info.ok()) return info.error();
    auto name = ReqString(**info, "name", "pipelineInfo");
    if (!name.ok()) return name.error();
    spec_.name = *name;
    auto desc = OptString(**info, "description", "pipelineInfo");
    if (!desc.ok()) return desc.error();
    spec_.description = *desc;
    auto display = OptString(**info, "displayName", "pipelineInfo");
    if (!display.ok()) return display.error();
    spec_.display_name = *display;
    auto schema = OptString(doc, "schemaVersion", "");
    if (!schema.ok()) return schema.error();
    spec_.schema_version = *schema;
    if (!spec_.schema_version.empty() && spec_.schema_version.rfind("2.", 0) != 0) {
      return At("schemaVersion",
                "unsupported schema version '" + spec_.schema_version + "' (want 2.x)");
    }
    auto sdk = OptString(doc, "sdkVersion", "");
    if (!sdk.ok()) return sdk.error();
    spec_.sdk_version = *sdk;

    if (auto s = ParseExecutors(doc); !s) return s;
    if (auto s = ParseComponents(doc); !s) return s;
    auto root = ReqObject(doc, "root", "");
    if (!root.ok()) return root.error();
    spec_.root.name = "root";
    if (auto s = ParseComponentBody(**root, "root", spec_.root); !s) return s;
    if (!spec_.root.is_dag()) return At("root.dag", "required field is missing");
    // Names can only be checked once every component is known.
    return detail::CheckPipelineSpec(spec_);
  }

 private:
  Status ParseExecutors(const json& doc) {
    auto deployment = OptObject(doc, "deploymentSpec", "");
    if (!deployment.ok()) return deployment.error();
    if (*deployment == nullptr) return Ok();
    auto executors = OptObject(**deployment, "executors", "deploymentSpec");
    if (!executors.ok()) return executors.error();
    if (*executors == nullptr) return Ok();
    for (const auto& [label, def] : (*executors)->items()) {
      ExecutorSpec exec;
      if (auto s = ParseExecutor(label, def, "deploymentSpec.executors." + label, exec); !s) {
        return s;
      }
      spec_.executors.emplace(label, std::move(exec));
    }
    return Ok();
  }

  Status ParseComponents(const json& doc) {
    auto comps = OptObject(doc, "components", "");
    if (!comps.ok()) return comps.error();
    if (*comps == nullptr) return Ok();
    for (const auto& [name, def] : (*comps)->items()) {
      std::string path = "components." + name;
      if (!def.is_object()) return At(path, "expected a mapping");
      ComponentSpec comp;
      comp.name = name;
      if (auto s = ParseComponentBody(def, path, comp); !s) return s;
      auto label = OptString(def, "executorLabel", path);
      if (!label.ok()) return label.error();
      comp.executor_label = *label;
      if (comp.is_dag() == !comp.executor_label.empty()) {
        return At(path, comp.is_dag() ? "has both dag and executorLabel"
                                      : "needs either executorLabel or dag");
      }
      if (!comp.executor_label.empty() && !spec_.executors.contains(comp.executor_label)) {
        return At(path + ".executorLabel", "unknown executor '" + comp.executor_label +
                                               "' (not in deploymentSpec.executors)");
      }
      spec_.components.emplace(name, std::move(comp));
    }
    return Ok();
  }

  Status ParseComponentBody(const json& def, const std::string& path, ComponentSpec& comp) {
    if (auto s = ParseInterface(def, "inputDefinitions", path, comp.inputs); !s) return s;
    if (auto s = ParseInterface(def, "outputDefinitions", path, comp.outputs); !s) return s;
    auto dag = OptObject(def, "dag", path);
    if (!dag.ok()) return dag.error();
    if (*dag == nullptr) return Ok();
    std::string dpath = Join(path, "dag");
    comp.dag = std::make_shared<DagSpec>();
    auto tasks = OptObject(**dag, "tasks", dpath);
    if (!tasks.ok()) return tasks.error();
    if (*tasks == nullptr || (*tasks)->empty())
      return At(Join(dpath, "tasks"), "a DAG needs tasks");
    for (const auto& [tname, tdef] : (*tasks)->items()) {
      TaskSpec task;
      if (auto s = ParseTask(tname, tdef, Join(Join(dpath, "tasks"), tname), task); !s) return s;
      comp.dag->tasks.emplace(tname, std::move(task));
    }
    auto outputs = OptObject(**dag, "outputs", dpath);
    if (!outputs.ok()) return outputs.error();
    if (*outputs != nullptr) {
      std::string opath = Join(dpath, "outputs");
      auto params = OptObject(**outputs, "parameters", opath);
      if (!params.ok()) return params.error();
      if (*params != nullptr) {
        for (const auto& [oname, odef] : (*params)->items()) {
          auto& sources = comp.dag->output_parameters[oname];
          if (auto s = ParseOutputSources(odef, "valueFromParameter", "valueFromOneof",
                                          "parameterSelectors", "outputParameterKey",
                                          Join(Join(opath, "parameters"), oname), sources);
              !s) {
            return s;
          }
        }
      }
      auto arts = OptObject(**outputs, "artifacts", opath);
      if (!arts.ok()) return arts.error();
      if (*arts != nullptr) {
        for (const auto& [oname, odef] : (*arts)->items()) {
          auto& sources = comp.dag->output_artifacts[oname];
          if (auto s = ParseOutputSources(odef, nullptr, nullptr, "artifactSelectors",
                                          "outputArtifactKey",
                                          Join(Join(opath, "artifacts"), oname), sources);
              !s) {
            return s;
          }
        }
      }
    }
    return Ok();
  }

  PipelineSpec& spec_;
};

}  // namespace

namespace {
constexpr EnumName<ParameterType> kParameterTypeNames[] = {
    {ParameterType::kUnspecified, "PARAMETER_TYPE_ENUM_UNSPECIFIED"},
    {ParameterType::kString, "STRING"},
    {ParameterType::kNumberInteger, "NUMBER_INTEGER"},
    {ParameterType::kNumberDouble, "NUMBER_DOUBLE"},
    {ParameterType::kBoolean, "BOOLEAN"},
    {ParameterType::kList, "LIST"},
    {ParameterType::kStruct, "STRUCT"},
    {ParameterType::kTaskFinalStatus, "TASK_FINAL_STATUS"}};
}  // namespace

std::string_view ParameterTypeName(ParameterType t) {
  return NameIn(kParameterTypeNames, t, "PARAMETER_TYPE_ENUM_UNSPECIFIED");
}

std::optional<ParameterType> ParseParameterType(std::string_view name) {
  return ValueIn(kParameterTypeNames, name);
}

const ComponentSpec* PipelineSpec::FindComponent(std::string_view name) const {
  auto it = components.find(std::string(name));
  return it == components.end() ? nullptr : &it->second;
}

const ExecutorSpec* PipelineSpec::FindExecutor(std::string_view label) const {
  auto it = executors.find(std::string(label));
  return it == executors.end() ? nullptr : &it->second;
}

std::map<std::string, std::string> PipelineSpec::TaskExecutorLabels() const {
  std::map<std::string, std::string> labels;
  auto add_dag = [&](const ComponentSpec& component) {
    if (!component.is_dag()) return;
    for (const auto& [name, task] : component.dag->tasks) {
      const ComponentSpec* ref = FindComponent(task.component_ref);
      if (ref == nullptr || ref->executor_label.empty()) continue;
      labels.emplace(name, ref->executor_label);
      if (!task.display_name.empty()) labels.emplace(task.display_name, ref->executor_label);
    }
  };
  add_dag(root);
  for (const auto& [name, component] : components) add_dag(component);
  return labels;
}

Result<PipelineSpec> ParsePipelineSpecJson(const json& doc) {
  PipelineSpec spec;
  const json* body = &doc;
  const json* platform = nullptr;
  // The SDK's wrapper when a pipeline has a platform spec (client.py,
  // _PipelineDoc.to_dict): {"pipeline_spec": ..., "platform_spec": ...}.
  if (doc.is_object() && !doc.contains("root")) {
    for (const char* key : {"pipelineSpec", "pipeline_spec"}) {
      if (auto it = doc.find(key); it != doc.end() && it->is_object()) {
        body = &*it;
        for (const char* p : {"platformSpec", "platform_spec"}) {
          if (auto pit = doc.find(p); pit != doc.end()) platform = &*pit;
        }
        break;
      }
    }
  }
  try {
    if (auto s = SpecParser(spec).Parse(*body); !s) return s.error();
    if (platform != nullptr) {
      if (auto s = ParsePlatformSpec(*platform, spec); !s.ok()) return s.error();
    }
  } catch (const json::exception& e) {
    // Only the typed accessors (value(), at()) throw, on a field of the wrong type.
    return Error{std::string("malformed pipeline spec: ") + e.what(), kHttpBadRequest};
  }
  spec.json = *body;
  return spec;
}

Result<PipelineSpec> LoadPipelineSpec(const std::filesystem::path& path, std::string* text) {
  auto read = ReadFile(path);
  if (!read.ok()) return read.error();
  auto spec = ParsePipelineSpec(*read);
  if (text != nullptr) *text = std::move(*read);
  if (!spec.ok()) return Error{fmt::format("{}: {}", path.string(), spec.error().message)};
  return spec;
}

Result<PipelineSpec> ParsePipelineSpec(std::string_view text) {
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return Error{"empty pipeline spec", kHttpBadRequest};
  if (text[first] == '{') {
    json doc = ParseJson(text);
    if (!doc.is_discarded()) return ParsePipelineSpecJson(doc);
    // Not JSON after all; YAML flow style also starts with '{'.
  }
  auto docs = YamlToJson(text);
  if (!docs.ok()) return docs.error();
  // Skip empty documents (a leading "---" makes one).
  std::vector<json> real;
  for (auto& d : *docs) {
    if (!d.is_null()) real.push_back(std::move(d));
  }
  if (real.empty()) return Error{"empty pipeline spec", kHttpBadRequest};
  auto spec = ParsePipelineSpecJson(real[0]);
  if (!spec.ok()) return spec;
  for (size_t i = 1; i < real.size(); ++i) {
    if (!real[i].is_object() || !real[i].contains("platforms")) {
      spec->warnings.push_back(fmt::format("YAML document {} (unknown content) ignored", i + 1));
      continue;
    }
    if (Status s = ParsePlatformSpec(real[i], *spec); !s.ok()) return s.error();
  }
  return spec;
}

Result<std::string> WithCaching(std::string_view text, bool enable) {
  auto docs = YamlToJson(text);
  if (!docs.ok()) return docs.error();
  if (docs->empty() || !(*docs)[0].is_object()) return Error{"not a compiled pipeline"};
  nlohmann::json& spec = (*docs)[0];
  auto set_dag = [enable](nlohmann::json& holder) {
    if (!holder.is_object()) return;
    auto dag = holder.find("dag");
    if (dag == holder.end() || !dag->is_object()) return;
    auto tasks = dag->find("tasks");
    if (tasks == dag->end() || !tasks->is_object()) return;
    for (auto& [name, task] : tasks->items()) {
      if (task.is_object()) task["cachingOptions"]["enableCache"] = enable;
    }
  };
  if (auto root = spec.find("root"); root != spec.end()) set_dag(*root);
  if (auto components = spec.find("components");
      components != spec.end() && components->is_object()) {
    for (auto& [name, component] : components->items()) set_dag(component);
  }
  std::string out;
  for (size_t i = 0; i < docs->size(); ++i) {
    if (i > 0) out += "\n---\n";
    out += (*docs)[i].dump();
  }
  return out;
}

}  // namespace kfpbench::ir
