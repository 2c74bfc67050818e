#include "kfp/lean_reader.h"

#include <simdjson.h>

namespace kfpbench::kfp {
namespace {

namespace od = simdjson::ondemand;

// One parser per thread: it keeps its buffers between answers.
od::parser& Parser() {
  thread_local od::parser parser;
  return parser;
}

simdjson::padded_string_view Padded(std::string& body) {
  body.reserve(body.size() + simdjson::SIMDJSON_PADDING);
  return simdjson::padded_string_view(body.data(), body.size(), body.capacity());
}

Error Bad(std::string_view what, simdjson::error_code code) {
  return Error{std::string(what) + ": " + simdjson::error_message(code)};
}

// Reads the top-level object's fields, handing each to `field(key, value)`,
// which returns an error code (SUCCESS to go on).
template <typename Field>
Status ForEachField(std::string& body, Field&& field) {
  od::document doc;
  if (auto e = Parser().iterate(Padded(body)).get(doc)) return Bad("answer is not JSON", e);
  od::object object;
  if (auto e = doc.get_object().get(object)) return Bad("answer is not a JSON object", e);
  for (auto entry : object) {
    std::string_view key;
    if (auto e = entry.unescaped_key().get(key)) return Bad("bad field name", e);
    od::value value;
    if (auto e = entry.value().get(value)) return Bad(key, e);
    if (auto e = field(key, value)) return Bad(key, e);
  }
  return Ok();
}

}  // namespace

Result<IdPage> ReadIdPage(std::string& body, std::string_view list_key, std::string_view id_key) {
  IdPage page;
  auto status = ForEachField(body, [&](std::string_view key, od::value& value) {
    if (key == list_key) {
      od::array items;
      if (auto e = value.get_array().get(items)) return e;
      for (auto item : items) {
        od::object object;
        if (auto e = item.get_object().get(object)) return e;
        for (auto field : object) {
          std::string_view name;
          if (auto e = field.unescaped_key().get(name)) return e;
          if (name != id_key) continue;  // the value is skipped by the loop
          std::string_view id;
          if (auto e = field.value().get_string().get(id)) return e;
          page.ids.emplace_back(id);
        }
      }
    } else if (key == "total_size") {
      // int32 in the proto: a JSON number (grpc-gateway writes int64 as strings).
      if (auto e = value.get_int64().get(page.total_size)) return e;
    } else if (key == "next_page_token") {
      std::string_view token;
      if (auto e = value.get_string().get(token)) return e;
      page.next_page_token = token;
    }
    return simdjson::SUCCESS;
  });
  if (!status.ok()) return status.error();
  return page;
}

Result<RuntimeState> ReadRunState(std::string& body) {
  RuntimeState state = RuntimeState::kUnspecified;
  std::string unknown;
  auto status = ForEachField(body, [&](std::string_view key, od::value& value) {
    if (key != "state") return simdjson::SUCCESS;
    std::string_view name;
    if (auto e = value.get_string().get(name)) return e;
    if (auto s = ParseRuntimeState(name)) {
      state = *s;
    } else {
      unknown = name;
    }
    return simdjson::SUCCESS;
  });
  if (!status.ok()) return status.error();
  if (!unknown.empty()) return Error{"state: unknown run state '" + unknown + "'"};
  return state;
}

}  // namespace kfpbench::kfp
