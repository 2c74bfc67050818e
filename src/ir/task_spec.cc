#include "ir/task_spec.h"

#include <algorithm>
#include <cstdlib>
#include <utility>

#include <fmt/format.h>

#include "ir/cel.h"
#include "ir/spec_fields.h"
#include "util/json_reader.h"

namespace kfpbench::ir::detail {
namespace {

using nlohmann::json;

// Another task's output: its producerTask and, unless `key_field` is null
// (a final status names the task only), the output's key.
Status ParseTaskOutput(const json& ref, const std::string& path, const char* key_field,
                       std::string& producer_task, std::string* output_key) {
  if (!ref.is_object()) return At(path, "expected a mapping");
  auto producer = ReqString(ref, "producerTask", path);
  if (!producer.ok()) return producer.error();
  if (key_field != nullptr) {
    auto key = ReqString(ref, key_field, path);
    if (!key.ok()) return key.error();
    *output_key = *key;
  }
  producer_task = *producer;
  return Ok();
}

// A parameter's or artifact's binding to an input of the component itself.
template <typename Binding>
Status BindComponentInput(const json& def, const char* key, const std::string& path, Binding& out) {
  out.kind = Binding::Kind::kComponentInput;
  auto name = ReqString(def, key, path);
  if (!name.ok()) return name.error();
  out.component_input = *name;
  return Ok();
}

Status ParseParameterBinding(const json& def, const std::string& path, ParameterBinding& out) {
  if (!def.is_object()) return At(path, "expected a mapping");
  auto selector = OptString(def, "parameterExpressionSelector", path);
  if (!selector.ok()) return selector.error();
  out.expression_selector = *selector;
  if (!out.expression_selector.empty()) {
    auto cel = ParseCel(out.expression_selector);
    if (!cel.ok()) return At(Join(path, "parameterExpressionSelector"), cel.error().message);
  }
  if (def.contains("componentInputParameter")) {
    return BindComponentInput(def, "componentInputParameter", path, out);
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
    return ParseTaskOutput(*it, Join(path, "taskOutputParameter"), "outputParameterKey",
                           out.producer_task, &out.output_key);
  }
  if (auto it = def.find("taskFinalStatus"); it != def.end()) {
    out.kind = ParameterBinding::Kind::kTaskFinalStatus;
    return ParseTaskOutput(*it, Join(path, "taskFinalStatus"), nullptr, out.producer_task, nullptr);
  }
  return At(path,
            "expected one of componentInputParameter, runtimeValue, taskOutputParameter, "
            "taskFinalStatus");
}

Status ParseArtifactBinding(const json& def, const std::string& path, ArtifactBinding& out) {
  if (!def.is_object()) return At(path, "expected a mapping");
  if (def.contains("componentInputArtifact")) {
    return BindComponentInput(def, "componentInputArtifact", path, out);
  }
  if (auto it = def.find("taskOutputArtifact"); it != def.end()) {
    out.kind = ArtifactBinding::Kind::kTaskOutput;
    return ParseTaskOutput(*it, Join(path, "taskOutputArtifact"), "outputArtifactKey",
                           out.producer_task, &out.output_key);
  }
  if (def.contains("runtimeValue")) {
    return At(path, "runtimeValue artifact inputs (importers) are not supported");
  }
  return At(path, "expected componentInputArtifact or taskOutputArtifact");
}

Status ParseRetry(const json& def, const std::string& path, RetryPolicy& out) {
  if (!def.is_object()) return At(path, "expected a mapping");
  auto count = OptInt32(def, "maxRetryCount", path);
  if (!count.ok()) return count.error();
  out.max_retry_count = *count;
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
      out.raw_items = ParseJson(raw->get<std::string>());
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
    auto limit = OptInt32(*policy, "parallelismLimit", Join(path, "iteratorPolicy"));
    if (!limit.ok()) return limit.error();
    out.parallelism_limit = std::max(0, *limit);
  }
  return Ok();
}

// Each entry of the object `name` in `parent`, when there is one, read by
// `parse` into `out` under its key.
template <typename Parse, typename Map>
Status ParseEntries(const json& parent, const char* name, const std::string& path, Parse parse,
                    Map& out) {
  auto object = OptObject(parent, name, path);
  if (!object.ok()) return object.error();
  if (*object == nullptr) return Ok();
  for (const auto& [key, def] : (*object)->items()) {
    typename Map::mapped_type binding;
    if (auto s = parse(def, Join(Join(path, name), key), binding); !s) return s;
    out.emplace(key, std::move(binding));
  }
  return Ok();
}

// inputs.parameters and inputs.artifacts: where each input comes from.
Status ParseInputs(const json& def, const std::string& path, TaskSpec& out) {
  auto inputs = OptObject(def, "inputs", path);
  if (!inputs.ok()) return inputs.error();
  if (*inputs == nullptr) return Ok();
  std::string ipath = Join(path, "inputs");
  if (auto s = ParseEntries(**inputs, "parameters", ipath, ParseParameterBinding, out.parameters);
      !s) {
    return s;
  }
  return ParseEntries(**inputs, "artifacts", ipath, ParseArtifactBinding, out.artifacts);
}

// triggerPolicy: the CEL condition (parsed now, so that a bad one is an
// upload's error rather than a run's) and the strategy.
Status ParseTriggerPolicy(const json& def, const std::string& path, TaskSpec& out) {
  auto trigger = OptObject(def, "triggerPolicy", path);
  if (!trigger.ok()) return trigger.error();
  if (*trigger == nullptr) return Ok();
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
  return Ok();
}

}  // namespace

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
  if (auto s = ParseInputs(def, path, out); !s) return s;
  if (auto c = def.find("cachingOptions"); c != def.end() && c->is_object()) {
    out.enable_cache = c->value("enableCache", false);
  }
  if (auto s = ParseTriggerPolicy(def, path, out); !s) return s;
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

}  // namespace kfpbench::ir::detail
