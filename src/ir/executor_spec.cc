#include "ir/executor_spec.h"

#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "ir/spec_fields.h"

namespace kfpbench::ir {
namespace detail {
namespace {

using nlohmann::json;

Status ParseResources(const json& res, const std::string& path, ResourceSpec& out) {
  // Legacy numeric fields: CPU in cores, memory in GB (10^9 bytes), in the
  // units the string quantities are held in (millicores, bytes), which must
  // stay below 2^63: beyond, a conversion to an integer is undefined, and
  // in practice a negative request placed anywhere.
  auto legacy = [&](const char* key, double units) -> Result<double> {
    auto value = OptNumber(res, key, path);
    if (!value.ok()) return value.error();
    if (!(*value >= 0 && *value * units < 0x1p63)) {
      return At(Join(path, key),
                fmt::format("{} is not a size (0 up to {:.4g})", *value, 0x1p63 / units));
    }
    return *value;
  };
  auto cpu_limit = legacy("cpuLimit", 1000);
  if (!cpu_limit.ok()) return cpu_limit.error();
  auto cpu_request = legacy("cpuRequest", 1000);
  if (!cpu_request.ok()) return cpu_request.error();
  auto mem_limit = legacy("memoryLimit", 1e9);
  if (!mem_limit.ok()) return mem_limit.error();
  auto mem_request = legacy("memoryRequest", 1e9);
  if (!mem_request.ok()) return mem_request.error();
  out.cpu_limit = *cpu_limit;
  out.cpu_request = *cpu_request;
  out.memory_limit = static_cast<int64_t>(std::floor(*mem_limit * 1e9 + 0.5));
  out.memory_request = static_cast<int64_t>(std::floor(*mem_request * 1e9 + 0.5));

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

}  // namespace

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

}  // namespace detail

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
