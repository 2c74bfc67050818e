// Typed parsing and cross-checking of the KFP v2 IR. Every error names the
// JSON path of the offending field so that a person can find it in the YAML.
#include "ir/pipeline_spec.h"

#include <algorithm>
#include <charconv>
#include <functional>
#include <set>

#include <fmt/format.h>

#include "ir/cel.h"

namespace kfpbench::ir {
namespace {

using nlohmann::json;

Error At(const std::string& path, const std::string& what) {
  return Error{path.empty() ? what : path + ": " + what, kHttpBadRequest};
}

std::string Join(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

const char* TypeName(const json& j) {
  switch (j.type()) {
    case json::value_t::object:
      return "a mapping";
    case json::value_t::array:
      return "a list";
    case json::value_t::string:
      return "a string";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::null:
      return "null";
    default:
      return "a number";
  }
}

// The object at `key` of `parent`, or nullptr when absent or null. Errors when
// present but not an object.
Result<const json*> OptObject(const json& parent, std::string_view key, const std::string& path) {
  auto it = parent.find(key);
  if (it == parent.end() || it->is_null()) return static_cast<const json*>(nullptr);
  if (!it->is_object()) {
    return At(Join(path, key), fmt::format("expected a mapping, got {}", TypeName(*it)));
  }
  return &*it;
}

Result<const json*> ReqObject(const json& parent, std::string_view key, const std::string& path) {
  auto r = OptObject(parent, key, path);
  if (r.ok() && *r == nullptr) return At(Join(path, key), "required field is missing");
  return r;
}

Result<std::string> OptString(const json& parent, std::string_view key, const std::string& path) {
  auto it = parent.find(key);
  if (it == parent.end() || it->is_null()) return std::string();
  if (!it->is_string()) {
    return At(Join(path, key), fmt::format("expected a string, got {}", TypeName(*it)));
  }
  return it->get<std::string>();
}

Result<std::string> ReqString(const json& parent, std::string_view key, const std::string& path) {
  auto r = OptString(parent, key, path);
  if (r.ok() && r->empty()) return At(Join(path, key), "required field is missing");
  return r;
}

Result<std::vector<std::string>> StringList(const json& parent, std::string_view key,
                                            const std::string& path) {
  std::vector<std::string> out;
  auto it = parent.find(key);
  if (it == parent.end() || it->is_null()) return out;
  if (!it->is_array()) {
    return At(Join(path, key), fmt::format("expected a list, got {}", TypeName(*it)));
  }
  for (size_t i = 0; i < it->size(); ++i) {
    const json& item = (*it)[i];
    if (item.is_string()) {
      out.push_back(item.get<std::string>());
    } else if (item.is_number() || item.is_boolean()) {
      out.push_back(item.dump());  // an unquoted arg like `- 5`
    } else {
      return At(fmt::format("{}[{}]", Join(path, key), i),
                fmt::format("expected a string, got {}", TypeName(item)));
    }
  }
  return out;
}

// A number, or a numeric string (counts in the IR are sometimes quoted).
Result<double> OptNumber(const json& parent, std::string_view key, const std::string& path) {
  auto it = parent.find(key);
  if (it == parent.end() || it->is_null()) return 0.0;
  if (it->is_number()) return it->get<double>();
  if (it->is_string()) {
    const std::string& s = it->get_ref<const std::string&>();
    char* end = nullptr;
    double v = std::strtod(s.c_str(), &end);
    if (!s.empty() && end == s.c_str() + s.size()) return v;
  }
  return At(Join(path, key), fmt::format("expected a number, got {}", TypeName(*it)));
}

// ---- Interfaces ----

Status ParseInterface(const json& parent, std::string_view key, const std::string& path,
                      InterfaceSpec& out) {
  auto obj = OptObject(parent, key, path);
  if (!obj.ok()) return obj.error();
  if (*obj == nullptr) return Ok();
  std::string base = Join(path, key);
  auto params = OptObject(**obj, "parameters", base);
  if (!params.ok()) return params.error();
  if (*params != nullptr) {
    for (const auto& [name, def] : (*params)->items()) {
      std::string p = Join(Join(base, "parameters"), name);
      if (!def.is_object()) return At(p, "expected a mapping");
      ParameterSpec spec;
      spec.name = name;
      auto type = ReqString(def, "parameterType", p);
      if (!type.ok()) return type.error();
      auto parsed = ParseParameterType(*type);
      if (!parsed) return At(Join(p, "parameterType"), "unknown parameter type '" + *type + "'");
      spec.type = *parsed;
      if (auto it = def.find("defaultValue"); it != def.end()) spec.default_value = *it;
      spec.is_optional = def.value("isOptional", false);
      auto desc = OptString(def, "description", p);
      if (!desc.ok()) return desc.error();
      spec.description = *desc;
      out.parameters.emplace(name, std::move(spec));
    }
  }
  auto artifacts = OptObject(**obj, "artifacts", base);
  if (!artifacts.ok()) return artifacts.error();
  if (*artifacts != nullptr) {
    for (const auto& [name, def] : (*artifacts)->items()) {
      std::string p = Join(Join(base, "artifacts"), name);
      if (!def.is_object()) return At(p, "expected a mapping");
      ArtifactSpec spec;
      spec.name = name;
      if (auto type = def.find("artifactType"); type != def.end() && type->is_object()) {
        spec.schema_title = type->value("schemaTitle", "");
        spec.schema_version = type->value("schemaVersion", "");
      }
      spec.is_artifact_list = def.value("isArtifactList", false);
      spec.is_optional = def.value("isOptional", false);
      out.artifacts.emplace(name, std::move(spec));
    }
  }
  return Ok();
}

// ---- Executors ----

Status ParseResources(const json& res, const std::string& path, ResourceSpec& out) {
  // Legacy numeric fields: CPU in cores, memory in GB (10^9 bytes).
  auto cpu_limit = OptNumber(res, "cpuLimit", path);
  if (!cpu_limit.ok()) return cpu_limit.error();
  auto cpu_request = OptNumber(res, "cpuRequest", path);
  if (!cpu_request.ok()) return cpu_request.error();
  auto mem_limit = OptNumber(res, "memoryLimit", path);
  if (!mem_limit.ok()) return mem_limit.error();
  auto mem_request = OptNumber(res, "memoryRequest", path);
  if (!mem_request.ok()) return mem_request.error();
  out.cpu_limit = *cpu_limit;
  out.cpu_request = *cpu_request;
  out.memory_limit = static_cast<int64_t>(*mem_limit * 1e9 + 0.5);
  out.memory_request = static_cast<int64_t>(*mem_request * 1e9 + 0.5);

  // Newer string quantities win: they are exact. A placeholder in one (a
  // pipeline input, an upstream output) is resolved when the task starts, as
  // KFP's driver does.
  auto text_field = [&out](const json& obj, const std::string& obj_path, const char* key,
                           const std::string& templated_key) -> Status {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return Ok();
    std::string text;
    if (it->is_string()) {
      text = it->get<std::string>();
    } else if (it->is_number_integer()) {
      text = it->dump();
    } else if (it->is_number()) {
      text = fmt::format("{}", it->get<double>());  // 2.0 -> "2"
    } else {
      return At(Join(obj_path, key), "expected a string");
    }
    if (text.empty()) return Ok();
    if (text.find("{{$") != std::string::npos) {
      out.templated[templated_key] = std::move(text);
      return Ok();
    }
    if (Status s = SetResourceField(out, templated_key, text); !s.ok()) {
      return At(Join(obj_path, key), s.error().message);
    }
    return Ok();
  };
  for (const char* key :
       {"resourceCpuLimit", "resourceCpuRequest", "resourceMemoryLimit", "resourceMemoryRequest"}) {
    if (Status s = text_field(res, path, key, key); !s.ok()) return s;
  }
  if (auto acc = res.find("accelerator"); acc != res.end() && acc->is_object()) {
    std::string acc_path = Join(path, "accelerator");
    // Older IR: "type" and "count".
    const char* type_key = acc->contains("resourceType") ? "resourceType" : "type";
    const char* count_key = acc->contains("resourceCount") ? "resourceCount" : "count";
    if (Status s = text_field(*acc, acc_path, type_key, "accelerator.resourceType"); !s.ok()) {
      return s;
    }
    if (Status s = text_field(*acc, acc_path, count_key, "accelerator.resourceCount"); !s.ok()) {
      return s;
    }
  }
  return Ok();
}

Status ParseImporter(const json& def, const std::string& path, ImporterSpec& out) {
  if (!def.is_object()) return At(path, "expected a mapping");
  auto uri = ReqObject(def, "artifactUri", path);
  if (!uri.ok()) return uri.error();
  std::string uri_path = Join(path, "artifactUri");
  if (auto c = (*uri)->find("constant"); c != (*uri)->end()) {
    // A protobuf Value: a string, or {"stringValue": ...} in older IR.
    if (c->is_object() && c->contains("stringValue")) {
      out.uri_constant = c->value("stringValue", "");
    } else if (c->is_string()) {
      out.uri_constant = c->get<std::string>();
    } else {
      return At(Join(uri_path, "constant"), "expected a string");
    }
  } else {
    auto param = OptString(**uri, "runtimeParameter", uri_path);
    if (!param.ok()) return param.error();
    if (param->empty()) return At(uri_path, "neither constant nor runtimeParameter is set");
    out.uri_runtime_parameter = *param;
  }
  if (auto m = def.find("metadata"); m != def.end() && !m->is_null()) {
    if (!m->is_object()) return At(Join(path, "metadata"), "expected a mapping");
    out.metadata = *m;
  }
  auto schema = OptObject(def, "typeSchema", path);
  if (!schema.ok()) return schema.error();
  if (*schema != nullptr) {
    out.schema_title = (*schema)->value("schemaTitle", "");
    out.schema_version = (*schema)->value("schemaVersion", "");
  }
  auto bool_field = [&](const char* key, bool& dst) -> Status {
    auto it = def.find(key);
    if (it == def.end() || it->is_null()) return Ok();
    if (!it->is_boolean()) return At(Join(path, key), "expected true or false");
    dst = it->get<bool>();
    return Ok();
  };
  if (Status s = bool_field("reimport", out.reimport); !s.ok()) return s;
  return bool_field("downloadToWorkspace", out.download_to_workspace);
}

Status ParseExecutor(const std::string& label, const json& def, const std::string& path,
                     ExecutorSpec& out) {
  out.label = label;
  if (!def.is_object()) return At(path, "expected a mapping");
  auto container = OptObject(def, "container", path);
  if (!container.ok()) return container.error();
  if (*container == nullptr && def.contains("importer")) {
    ImporterSpec importer;
    if (Status s = ParseImporter(def["importer"], Join(path, "importer"), importer); !s.ok()) {
      return s;
    }
    out.importer = std::move(importer);
    return Ok();
  }
  if (*container == nullptr) {
    // KFP's backend compiles neither (argocompiler: "resolver"/"customJob"
    // are Vertex AI's).
    for (const char* kind : {"resolver", "customJob"}) {
      if (def.contains(kind)) {
        return At(
            path,
            fmt::format("{} executors are not supported (only containers and importers)", kind));
      }
    }
    return At(Join(path, "container"), "required field is missing");
  }
  const json& c = **container;
  std::string cpath = Join(path, "container");
  auto image = OptString(c, "image", cpath);
  if (!image.ok()) return image.error();
  out.container.image = *image;
  auto command = StringList(c, "command", cpath);
  if (!command.ok()) return command.error();
  out.container.command = std::move(*command);
  auto args = StringList(c, "args", cpath);
  if (!args.ok()) return args.error();
  out.container.args = std::move(*args);
  // Neither command nor args: the image's own entrypoint runs, as in any pod.
  if (auto env = c.find("env"); env != c.end() && !env->is_null()) {
    if (!env->is_array()) return At(Join(cpath, "env"), "expected a list");
    for (size_t i = 0; i < env->size(); ++i) {
      std::string epath = fmt::format("{}.env[{}]", cpath, i);
      const json& e = (*env)[i];
      if (!e.is_object()) return At(epath, "expected a mapping");
      auto name = ReqString(e, "name", epath);
      if (!name.ok()) return name.error();
      auto it = e.find("value");
      std::string value;
      if (it != e.end() && !it->is_null())
        value = it->is_string() ? it->get<std::string>() : it->dump();
      out.container.env.emplace_back(*name, value);
    }
  }
  auto res = OptObject(c, "resources", cpath);
  if (!res.ok()) return res.error();
  if (*res != nullptr)
    return ParseResources(**res, Join(cpath, "resources"), out.container.resources);
  return Ok();
}

// ---- DAGs ----

Status ParseParameterBinding(const json& def, const std::string& path, ParameterBinding& out) {
  if (!def.is_object()) return At(path, "expected a mapping");
  auto selector = OptString(def, "parameterExpressionSelector", path);
  if (!selector.ok()) return selector.error();
  out.expression_selector = *selector;
  if (!out.expression_selector.empty()) {
    auto cel = ParseCel(out.expression_selector);
    if (!cel.ok()) return At(Join(path, "parameterExpressionSelector"), cel.error().message);
  }
  if (auto it = def.find("componentInputParameter"); it != def.end()) {
    out.kind = ParameterBinding::Kind::kComponentInput;
    auto name = ReqString(def, "componentInputParameter", path);
    if (!name.ok()) return name.error();
    out.component_input = *name;
    return Ok();
  }
  if (auto it = def.find("runtimeValue"); it != def.end()) {
    out.kind = ParameterBinding::Kind::kConstant;
    if (!it->is_object()) return At(Join(path, "runtimeValue"), "expected a mapping");
    auto c = it->find("constant");
    if (c == it->end()) {
      // Old IR: runtimeValue.constantValue.{stringValue,intValue,doubleValue}.
      auto cv = it->find("constantValue");
      if (cv == it->end() || !cv->is_object() || cv->empty()) {
        return At(Join(path, "runtimeValue.constant"), "required field is missing");
      }
      auto first = cv->begin();
      out.constant = first.value();
      if (first.key() == "intValue" && out.constant.is_string()) {
        out.constant = std::strtoll(out.constant.get<std::string>().c_str(), nullptr, 10);
      }
      return Ok();
    }
    out.constant = *c;
    return Ok();
  }
  if (auto it = def.find("taskOutputParameter"); it != def.end()) {
    out.kind = ParameterBinding::Kind::kTaskOutput;
    std::string p = Join(path, "taskOutputParameter");
    if (!it->is_object()) return At(p, "expected a mapping");
    auto producer = ReqString(*it, "producerTask", p);
    if (!producer.ok()) return producer.error();
    auto key = ReqString(*it, "outputParameterKey", p);
    if (!key.ok()) return key.error();
    out.producer_task = *producer;
    out.output_key = *key;
    return Ok();
  }
  if (auto it = def.find("taskFinalStatus"); it != def.end()) {
    out.kind = ParameterBinding::Kind::kTaskFinalStatus;
    std::string p = Join(path, "taskFinalStatus");
    if (!it->is_object()) return At(p, "expected a mapping");
    auto producer = ReqString(*it, "producerTask", p);
    if (!producer.ok()) return producer.error();
    out.producer_task = *producer;
    return Ok();
  }
  return At(path,
            "expected one of componentInputParameter, runtimeValue, taskOutputParameter, "
            "taskFinalStatus");
}

Status ParseArtifactBinding(const json& def, const std::string& path, ArtifactBinding& out) {
  if (!def.is_object()) return At(path, "expected a mapping");
  if (def.contains("componentInputArtifact")) {
    out.kind = ArtifactBinding::Kind::kComponentInput;
    auto name = ReqString(def, "componentInputArtifact", path);
    if (!name.ok()) return name.error();
    out.component_input = *name;
    return Ok();
  }
  if (auto it = def.find("taskOutputArtifact"); it != def.end()) {
    out.kind = ArtifactBinding::Kind::kTaskOutput;
    std::string p = Join(path, "taskOutputArtifact");
    if (!it->is_object()) return At(p, "expected a mapping");
    auto producer = ReqString(*it, "producerTask", p);
    if (!producer.ok()) return producer.error();
    auto key = ReqString(*it, "outputArtifactKey", p);
    if (!key.ok()) return key.error();
    out.producer_task = *producer;
    out.output_key = *key;
    return Ok();
  }
  if (def.contains("runtimeValue")) {
    return At(path, "runtimeValue artifact inputs (importers) are not supported");
  }
  return At(path, "expected componentInputArtifact or taskOutputArtifact");
}

Status ParseRetry(const json& def, const std::string& path, RetryPolicy& out) {
  if (!def.is_object()) return At(path, "expected a mapping");
  auto count = OptNumber(def, "maxRetryCount", path);
  if (!count.ok()) return count.error();
  out.max_retry_count = static_cast<int>(*count);
  if (out.max_retry_count < 0) return At(Join(path, "maxRetryCount"), "must not be negative");
  auto factor = OptNumber(def, "backoffFactor", path);
  if (!factor.ok()) return factor.error();
  out.backoff_factor = *factor > 0 ? *factor : 2.0;
  for (auto [key, dst] : {std::pair<std::string_view, Duration*>{"backoffDuration", &out.backoff},
                          {"backoffMaxDuration", &out.backoff_max}}) {
    auto s = OptString(def, key, path);
    if (!s.ok()) return s.error();
    if (s->empty()) continue;
    auto d = ParseProtoDuration(*s);
    if (!d.ok()) return At(Join(path, key), d.error().message);
    *dst = *d;
  }
  return Ok();
}

Status ParseIterator(const json& task, const char* kind, const std::string& path,
                     IteratorSpec& out) {
  std::string p = Join(path, kind);
  const json& it = task.at(kind);
  if (!it.is_object()) return At(p, "expected a mapping");
  auto item = ReqString(it, "itemInput", p);
  if (!item.ok()) return item.error();
  out.item_input = *item;
  auto items = ReqObject(it, "items", p);
  if (!items.ok()) return items.error();
  std::string ipath = Join(p, "items");
  if (auto raw = (*items)->find("raw"); raw != (*items)->end()) {
    out.raw = true;
    if (raw->is_string()) {
      out.raw_items = json::parse(raw->get<std::string>(), nullptr, false);
      if (out.raw_items.is_discarded()) return At(Join(ipath, "raw"), "not valid JSON");
    } else {
      out.raw_items = *raw;
    }
    if (!out.raw_items.is_array()) return At(Join(ipath, "raw"), "expected a JSON list");
    if (out.raw_items.size() > kMaxLoopItems) {
      return At(Join(ipath, "raw"), fmt::format("{} items; a ParallelFor iterates at most {} times",
                                                out.raw_items.size(), kMaxLoopItems));
    }
  } else if (std::string_view(kind) == "artifactIterator") {
    auto input = ReqString(**items, "inputArtifact", ipath);
    if (!input.ok()) return input.error();
    out.input_artifact = *input;
  } else {
    auto input = ReqString(**items, "inputParameter", ipath);
    if (!input.ok()) return input.error();
    out.input_parameter = *input;
  }
  if (auto policy = task.find("iteratorPolicy"); policy != task.end() && policy->is_object()) {
    auto limit = OptNumber(*policy, "parallelismLimit", Join(path, "iteratorPolicy"));
    if (!limit.ok()) return limit.error();
    out.parallelism_limit = std::max(0, static_cast<int>(*limit));
  }
  return Ok();
}

Status ParseTask(const std::string& name, const json& def, const std::string& path, TaskSpec& out) {
  if (!def.is_object()) return At(path, "expected a mapping");
  out.name = name;
  auto ref = ReqObject(def, "componentRef", path);
  if (!ref.ok()) return ref.error();
  auto comp = ReqString(**ref, "name", Join(path, "componentRef"));
  if (!comp.ok()) return comp.error();
  out.component_ref = *comp;
  auto info = OptObject(def, "taskInfo", path);
  if (!info.ok()) return info.error();
  if (*info != nullptr) {
    auto dn = OptString(**info, "name", Join(path, "taskInfo"));
    if (!dn.ok()) return dn.error();
    out.display_name = *dn;
  }
  if (out.display_name.empty()) out.display_name = name;
  auto deps = StringList(def, "dependentTasks", path);
  if (!deps.ok()) return deps.error();
  out.dependent_tasks = std::move(*deps);

  auto inputs = OptObject(def, "inputs", path);
  if (!inputs.ok()) return inputs.error();
  if (*inputs != nullptr) {
    std::string ipath = Join(path, "inputs");
    auto params = OptObject(**inputs, "parameters", ipath);
    if (!params.ok()) return params.error();
    if (*params != nullptr) {
      for (const auto& [pname, pdef] : (*params)->items()) {
        ParameterBinding b;
        if (auto s = ParseParameterBinding(pdef, Join(Join(ipath, "parameters"), pname), b); !s) {
          return s;
        }
        out.parameters.emplace(pname, std::move(b));
      }
    }
    auto arts = OptObject(**inputs, "artifacts", ipath);
    if (!arts.ok()) return arts.error();
    if (*arts != nullptr) {
      for (const auto& [aname, adef] : (*arts)->items()) {
        ArtifactBinding b;
        if (auto s = ParseArtifactBinding(adef, Join(Join(ipath, "artifacts"), aname), b); !s) {
          return s;
        }
        out.artifacts.emplace(aname, std::move(b));
      }
    }
  }
  if (auto c = def.find("cachingOptions"); c != def.end() && c->is_object()) {
    out.enable_cache = c->value("enableCache", false);
  }
  auto trigger = OptObject(def, "triggerPolicy", path);
  if (!trigger.ok()) return trigger.error();
  if (*trigger != nullptr) {
    std::string tpath = Join(path, "triggerPolicy");
    auto cond = OptString(**trigger, "condition", tpath);
    if (!cond.ok()) return cond.error();
    out.condition = *cond;
    if (!out.condition.empty()) {
      auto cel = ParseCel(out.condition);
      if (!cel.ok()) return At(Join(tpath, "condition"), cel.error().message);
    }
    auto strategy = OptString(**trigger, "strategy", tpath);
    if (!strategy.ok()) return strategy.error();
    if (*strategy == "ALL_UPSTREAM_TASKS_COMPLETED") {
      out.run_when_upstream_done = true;
    } else if (!strategy->empty() && *strategy != "ALL_UPSTREAM_TASKS_SUCCEEDED" &&
               *strategy != "TRIGGER_STRATEGY_UNSPECIFIED") {
      return At(Join(tpath, "strategy"), "unknown trigger strategy '" + *strategy + "'");
    }
  }
  for (const char* kind : {"parameterIterator", "artifactIterator"}) {
    if (!def.contains(kind)) continue;
    IteratorSpec it;
    if (auto s = ParseIterator(def, kind, path, it); !s) return s;
    out.iterator = std::move(it);
  }
  if (auto r = def.find("retryPolicy"); r != def.end() && !r->is_null()) {
    RetryPolicy retry;
    if (auto s = ParseRetry(*r, Join(path, "retryPolicy"), retry); !s) return s;
    out.retry = retry;
  }
  return Ok();
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

// Orders tasks so that every task follows its upstream; reports a cycle as the
// path "a -> b -> a".
Status TopoSort(DagSpec& dag, const std::string& path) {
  enum Mark { kNew, kActive, kDone };
  std::map<std::string, Mark> mark;
  std::vector<std::string> stack;
  std::optional<Error> cycle;
  std::function<void(const std::string&)> visit = [&](const std::string& name) {
    if (cycle) return;
    Mark& m = mark[name];
    if (m == kDone) return;
    if (m == kActive) {
      auto start = std::find(stack.begin(), stack.end(), name);
      std::string text;
      for (auto it = start; it != stack.end(); ++it) text += *it + " -> ";
      cycle = At(path, "dependency cycle: " + text + name);
      return;
    }
    m = kActive;
    stack.push_back(name);
    for (const auto& up : dag.tasks.at(name).upstream) visit(up);
    stack.pop_back();
    mark[name] = kDone;
    if (!cycle) dag.topo_order.push_back(name);
  };
  for (const auto& [name, task] : dag.tasks) visit(name);
  if (cycle) return *cycle;
  return Ok();
}

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
    // Second pass: names can only be checked once every component is known.
    for (auto& [cname, comp] : spec_.components) {
      if (comp.is_dag()) {
        if (auto s = CheckDag(comp, "components." + cname + ".dag"); !s) return s;
      }
    }
    if (auto s = CheckDag(spec_.root, "root.dag"); !s) return s;
    return CheckComponentNesting();
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

  // Resolves every name a DAG's tasks use and orders the tasks.
  Status CheckDag(ComponentSpec& owner, const std::string& path) {
    DagSpec& dag = *owner.dag;
    for (auto& [tname, task] : dag.tasks) {
      std::string tpath = path + ".tasks." + tname;
      const ComponentSpec* comp = spec_.FindComponent(task.component_ref);
      if (comp == nullptr) {
        return At(tpath + ".componentRef.name", "unknown component '" + task.component_ref + "'");
      }
      std::set<std::string> upstream;
      for (const auto& dep : task.dependent_tasks) {
        if (!dag.tasks.contains(dep)) {
          return At(tpath + ".dependentTasks", "unknown task '" + dep + "'");
        }
        upstream.insert(dep);
      }
      const std::string& self = tname;  // clang before 16 cannot capture a structured binding
      auto check_producer = [&](const std::string& producer, const std::string& p) -> Status {
        if (producer == self) return At(p, "a task cannot consume its own output");
        if (!dag.tasks.contains(producer)) return At(p, "unknown producer task '" + producer + "'");
        upstream.insert(producer);
        return Ok();
      };
      for (const auto& [pname, b] : task.parameters) {
        std::string p = tpath + ".inputs.parameters." + pname;
        switch (b.kind) {
          case ParameterBinding::Kind::kComponentInput:
            if (!owner.inputs.parameters.contains(b.component_input)) {
              return At(p + ".componentInputParameter",
                        "'" + b.component_input + "' is not an input of " + owner.name);
            }
            break;
          case ParameterBinding::Kind::kTaskOutput: {
            if (auto s = check_producer(b.producer_task, p + ".taskOutputParameter.producerTask");
                !s) {
              return s;
            }
            const auto* producer = spec_.FindComponent(dag.tasks.at(b.producer_task).component_ref);
            if (producer != nullptr && !producer->outputs.parameters.contains(b.output_key)) {
              return At(
                  p + ".taskOutputParameter.outputParameterKey",
                  "task '" + b.producer_task + "' has no output parameter '" + b.output_key + "'");
            }
            break;
          }
          case ParameterBinding::Kind::kTaskFinalStatus:
            if (auto s = check_producer(b.producer_task, p + ".taskFinalStatus.producerTask"); !s) {
              return s;
            }
            break;
          case ParameterBinding::Kind::kConstant:
            break;
        }
      }
      for (const auto& [aname, b] : task.artifacts) {
        std::string p = tpath + ".inputs.artifacts." + aname;
        if (b.kind == ArtifactBinding::Kind::kComponentInput) {
          if (!owner.inputs.artifacts.contains(b.component_input)) {
            return At(p + ".componentInputArtifact",
                      "'" + b.component_input + "' is not an input artifact of " + owner.name);
          }
          continue;
        }
        if (auto s = check_producer(b.producer_task, p + ".taskOutputArtifact.producerTask"); !s) {
          return s;
        }
        const auto* producer = spec_.FindComponent(dag.tasks.at(b.producer_task).component_ref);
        if (producer != nullptr && !producer->outputs.artifacts.contains(b.output_key)) {
          return At(p + ".taskOutputArtifact.outputArtifactKey",
                    "task '" + b.producer_task + "' has no output artifact '" + b.output_key + "'");
        }
      }
      if (const auto& it = task.iterator) {
        std::string ipath =
            tpath + (it->over_artifacts() ? ".artifactIterator" : ".parameterIterator");
        if (!comp->is_dag()) return At(ipath, "ParallelFor needs a DAG component");
        if (it->over_artifacts() ? !comp->inputs.artifacts.contains(it->item_input)
                                 : !comp->inputs.parameters.contains(it->item_input)) {
          return At(ipath + ".itemInput",
                    "'" + it->item_input + "' is not an input of " + comp->name);
        }
        if (it->over_artifacts() && !task.artifacts.contains(it->input_artifact)) {
          return At(ipath + ".items.inputArtifact",
                    "'" + it->input_artifact + "' is not an input artifact of the task");
        }
        if (!it->over_artifacts() && !it->raw && !task.parameters.contains(it->input_parameter)) {
          return At(ipath + ".items.inputParameter",
                    "'" + it->input_parameter + "' is not an input of the task");
        }
      }
      // Every required input of the component must be bound.
      for (const auto& [pname, pspec] : comp->inputs.parameters) {
        if (pspec.is_optional || pspec.default_value || task.parameters.contains(pname)) continue;
        if (task.iterator && task.iterator->item_input == pname) continue;
        return At(tpath + ".inputs.parameters",
                  "required input parameter '" + pname + "' of " + comp->name + " is not bound");
      }
      for (const auto& [aname, aspec] : comp->inputs.artifacts) {
        if (aspec.is_optional || task.artifacts.contains(aname)) continue;
        if (task.iterator && task.iterator->item_input == aname) continue;
        return At(tpath + ".inputs.artifacts",
                  "required input artifact '" + aname + "' of " + comp->name + " is not bound");
      }
      task.upstream.assign(upstream.begin(), upstream.end());
    }
    for (const auto& [oname, sources] : dag.output_parameters) {
      for (const auto& src : sources) {
        if (!dag.tasks.contains(src.producer_task)) {
          return At(path + ".outputs.parameters." + oname,
                    "unknown producer task '" + src.producer_task + "'");
        }
      }
    }
    for (const auto& [oname, sources] : dag.output_artifacts) {
      for (const auto& src : sources) {
        if (!dag.tasks.contains(src.producer_task)) {
          return At(path + ".outputs.artifacts." + oname,
                    "unknown producer task '" + src.producer_task + "'");
        }
      }
    }
    return TopoSort(dag, path);
  }

  // A DAG component that (indirectly) contains itself would recurse forever,
  // and one nested deeper than kMaxDagNesting is refused as Argo refuses it.
  // The walk never goes deeper than the limit, so no input can exhaust the
  // stack, and the chain is spelled out only in an error.
  Status CheckComponentNesting() {
    std::map<std::string, int> levels;  // finished DAG components: DAG levels from it down
    std::vector<const ComponentSpec*> chain;
    auto chain_text = [&](const ComponentSpec& last) {
      std::string text = "root";
      for (size_t k = 1; k < chain.size(); ++k) text += " -> " + chain[k]->name;
      return text + " -> " + last.name;
    };
    std::function<Result<int>(const ComponentSpec&)> visit =
        [&](const ComponentSpec& comp) -> Result<int> {
      if (!comp.is_dag()) return 0;
      if (auto done = levels.find(comp.name); done != levels.end()) return done->second;
      if (std::find(chain.begin(), chain.end(), &comp) != chain.end()) {
        return At("components." + comp.name, "component recursion: " + chain_text(comp));
      }
      if (chain.size() >= kMaxDagNesting) {
        return At("components." + comp.name, NestingError());
      }
      chain.push_back(&comp);
      int below = 0;
      for (const auto& [tname, task] : comp.dag->tasks) {
        auto child = visit(*spec_.FindComponent(task.component_ref));
        if (!child.ok()) return child.error();
        below = std::max(below, *child);
      }
      chain.pop_back();
      return levels[comp.name] = below + 1;
    };
    auto depth = visit(spec_.root);
    if (!depth.ok()) return depth.error();
    if (*depth > static_cast<int>(kMaxDagNesting)) return At("root", NestingError());
    return Ok();
  }

  static std::string NestingError() {
    return fmt::format("DAGs nested more than {} deep (Argo's limit for nested templates)",
                       kMaxDagNesting);
  }

  PipelineSpec& spec_;
};

}  // namespace

std::string_view ParameterTypeName(ParameterType t) {
  switch (t) {
    case ParameterType::kUnspecified:
      return "PARAMETER_TYPE_ENUM_UNSPECIFIED";
    case ParameterType::kString:
      return "STRING";
    case ParameterType::kNumberInteger:
      return "NUMBER_INTEGER";
    case ParameterType::kNumberDouble:
      return "NUMBER_DOUBLE";
    case ParameterType::kBoolean:
      return "BOOLEAN";
    case ParameterType::kList:
      return "LIST";
    case ParameterType::kStruct:
      return "STRUCT";
    case ParameterType::kTaskFinalStatus:
      return "TASK_FINAL_STATUS";
  }
  return "PARAMETER_TYPE_ENUM_UNSPECIFIED";
}

std::optional<ParameterType> ParseParameterType(std::string_view name) {
  for (auto t : {ParameterType::kUnspecified, ParameterType::kString, ParameterType::kNumberInteger,
                 ParameterType::kNumberDouble, ParameterType::kBoolean, ParameterType::kList,
                 ParameterType::kStruct, ParameterType::kTaskFinalStatus}) {
    if (ParameterTypeName(t) == name) return t;
  }
  return std::nullopt;
}

const ComponentSpec* PipelineSpec::FindComponent(std::string_view name) const {
  auto it = components.find(std::string(name));
  return it == components.end() ? nullptr : &it->second;
}

const ExecutorSpec* PipelineSpec::FindExecutor(std::string_view label) const {
  auto it = executors.find(std::string(label));
  return it == executors.end() ? nullptr : &it->second;
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

namespace {

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
  if (auto tols = config.find("tolerations"); tols != config.end() && !tols->is_null()) {
    if (!tols->is_array()) return At(path + ".tolerations", "expected a list");
    for (size_t i = 0; i < tols->size(); ++i) {
      std::string p = fmt::format("{}.tolerations[{}]", path, i);
      const json& t = (*tols)[i];
      if (!t.is_object()) return At(p, "expected a mapping");
      if (t.contains("tolerationJson")) continue;  // from a task input: not applied
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
    }
  }
  if (auto terms = config.find("nodeAffinity"); terms != config.end() && !terms->is_null()) {
    if (!terms->is_array()) return At(path + ".nodeAffinity", "expected a list");
    for (size_t i = 0; i < terms->size(); ++i) {
      std::string p = fmt::format("{}.nodeAffinity[{}]", path, i);
      const json& term = (*terms)[i];
      if (!term.is_object()) return At(p, "expected a mapping");
      if (term.contains("weight")) continue;  // preferred, not required
      auto reqs =
          ParseRequirements(term.value("matchExpressions", json()), p + ".matchExpressions");
      if (!reqs.ok()) return reqs.error();
      auto fields = ParseRequirements(term.value("matchFields", json()), p + ".matchFields");
      if (!fields.ok()) return fields.error();
      // Nodes have one field, metadata.name; a requirement on it is one on the name.
      for (auto& f : *fields) f.key = "metadata.name";
      reqs->insert(reqs->end(), fields->begin(), fields->end());
      if (!reqs->empty()) out.required_terms.push_back(std::move(*reqs));
    }
  }
  return Ok();
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

Result<PipelineSpec> ParsePipelineSpec(std::string_view text) {
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return Error{"empty pipeline spec", kHttpBadRequest};
  if (text[first] == '{') {
    json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
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

Status SetResourceField(ResourceSpec& spec, std::string_view key, std::string_view text) {
  if (key == "resourceCpuLimit" || key == "resourceCpuRequest") {
    auto q = ParseQuantityCpu(text);
    if (!q.ok()) return q.error();
    (key == "resourceCpuLimit" ? spec.cpu_limit : spec.cpu_request) = *q;
  } else if (key == "resourceMemoryLimit" || key == "resourceMemoryRequest") {
    auto q = ParseQuantityMemory(text);
    if (!q.ok()) return q.error();
    (key == "resourceMemoryLimit" ? spec.memory_limit : spec.memory_request) = *q;
  } else if (key == "accelerator.resourceType") {
    spec.accelerator_type = std::string(text);
  } else if (key == "accelerator.resourceCount") {
    int64_t count = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), count);
    if (ec != std::errc() || end != text.data() + text.size() || count < 0) {
      return Error{fmt::format("'{}' is not a count", text)};
    }
    spec.accelerator_count = count;
  } else {
    return Error{fmt::format("unknown resource field '{}'", key)};
  }
  return Ok();
}

}  // namespace kfpbench::ir
