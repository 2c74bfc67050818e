#include "store/list_query.h"

#include <charconv>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/time.h"

namespace kfpbench::store {
namespace {

using nlohmann::json;

constexpr int kDefaultPageSize = 20;
constexpr int kMaxPageSize = 200;
constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string Base64UrlEncode(const std::string& in) {
  std::string out;
  uint32_t buffer = 0;
  int bits = 0;
  for (unsigned char c : in) {
    buffer = (buffer << 8) | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += kAlphabet[(buffer >> bits) & 63];
    }
  }
  if (bits > 0) out += kAlphabet[(buffer << (6 - bits)) & 63];
  return out;
}

Result<std::string> Base64UrlDecode(const std::string& in) {
  std::string out;
  uint32_t buffer = 0;
  int bits = 0;
  for (char c : in) {
    const char* p = std::char_traits<char>::find(kAlphabet, 64, c);
    if (!p) return Error{"invalid page_token", 400};
    buffer = (buffer << 6) | static_cast<uint32_t>(p - kAlphabet);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buffer >> bits) & 0xff);
    }
  }
  return out;
}

const Field* FindField(const std::vector<Field>& fields, const std::string& name) {
  for (const auto& f : fields) {
    for (const auto& n : f.api_names) {
      if (n == name) return &f;
    }
  }
  return nullptr;
}

std::string FieldNames(const std::vector<Field>& fields) {
  std::string out;
  for (const auto& f : fields) {
    if (!out.empty()) out += ", ";
    out += f.api_names.front();
  }
  return out;
}

// One predicate value converted to the column's storage type.
Result<SqlValue> PredicateValue(const json& p, const Field& field, const std::string& key) {
  auto bad = [&](const std::string& why) {
    return Error{fmt::format("invalid filter on '{}': {}", key, why), 400};
  };
  if (auto it = p.find("string_value"); it != p.end()) {
    if (!it->is_string()) return bad("string_value must be a string");
    if (field.type == FieldType::kString) return SqlValue(it->get<std::string>());
    if (field.type == FieldType::kTime) {
      auto t = ParseRfc3339(it->get<std::string>());
      if (!t.ok()) return bad(t.error().message);
      return SqlValue(int64_t(
          std::chrono::duration_cast<std::chrono::nanoseconds>(t->time_since_epoch()).count()));
    }
    return bad("expects a number");
  }
  if (auto it = p.find("timestamp_value"); it != p.end()) {
    if (field.type != FieldType::kTime) return bad("timestamp_value on a field that is not a time");
    if (!it->is_string()) return bad("timestamp_value must be an RFC 3339 string");
    auto t = ParseRfc3339(it->get<std::string>());
    if (!t.ok()) return bad(t.error().message);
    return SqlValue(int64_t(
        std::chrono::duration_cast<std::chrono::nanoseconds>(t->time_since_epoch()).count()));
  }
  for (const char* name : {"int_value", "long_value"}) {
    auto it = p.find(name);
    if (it == p.end()) continue;
    int64_t v = 0;
    if (it->is_number_integer()) {
      v = it->get<int64_t>();
    } else if (it->is_string()) {
      const auto& s = it->get_ref<const std::string&>();
      auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      if (ec != std::errc() || end != s.data() + s.size()) return bad("not an integer");
    } else {
      return bad(std::string(name) + " must be an integer");
    }
    if (field.type == FieldType::kString) return bad("expects a string");
    // KFP compares times in Unix seconds.
    if (field.type == FieldType::kTime) v *= 1'000'000'000;
    return SqlValue(v);
  }
  return bad("no value given");
}

Result<std::vector<SqlValue>> PredicateValues(const json& p, const Field& field,
                                              const std::string& key) {
  auto bad = [&](const std::string& why) {
    return Error{fmt::format("invalid filter on '{}': {}", key, why), 400};
  };
  std::vector<SqlValue> out;
  for (const char* name : {"string_values", "int_values", "long_values"}) {
    auto it = p.find(name);
    if (it == p.end()) continue;
    if (!it->is_object() || !it->contains("values") || !(*it)["values"].is_array()) {
      return bad(std::string(name) + " must be {\"values\": [...]}");
    }
    std::string single = std::string(name).substr(0, std::string(name).size() - 1);
    for (const auto& v : (*it)["values"]) {
      auto value = PredicateValue(json{{single, v}}, field, key);
      if (!value.ok()) return value.error();
      out.push_back(std::move(*value));
    }
    if (out.empty()) return bad("IN needs at least one value");
    return out;
  }
  return bad("IN needs string_values, int_values or long_values");
}

Status AddFilter(const std::string& filter_text, const std::vector<Field>& fields, ListPlan& plan) {
  if (filter_text.empty()) return Ok();
  json filter = json::parse(filter_text, nullptr, false);
  if (filter.is_discarded() || !filter.is_object()) {
    return Error{"invalid filter: not a JSON object", 400};
  }
  for (const auto& [k, v] : filter.items()) {
    if (k != "predicates") return Error{"invalid filter: unknown field \"" + k + "\"", 400};
  }
  auto preds = filter.find("predicates");
  if (preds == filter.end()) return Ok();
  if (!preds->is_array()) return Error{"invalid filter: predicates must be an array", 400};
  std::vector<std::string> clauses;
  for (const auto& p : *preds) {
    if (!p.is_object()) return Error{"invalid filter: each predicate must be an object", 400};
    std::string key = p.value("key", "");
    const Field* field = FindField(fields, key);
    if (!field) {
      return Error{fmt::format("invalid filter: cannot filter on '{}' (fields: {})", key,
                               FieldNames(fields)),
                   400};
    }
    std::string op = p.value("operation", "");
    static const std::pair<const char*, const char*> kCompare[] = {
        {"EQUALS", "="},    {"NOT_EQUALS", "!="},          {"GREATER_THAN", ">"},
        {"LESS_THAN", "<"}, {"GREATER_THAN_EQUALS", ">="}, {"LESS_THAN_EQUALS", "<="}};
    bool done = false;
    for (const auto& [name, sql] : kCompare) {
      if (op != name) continue;
      auto value = PredicateValue(p, *field, key);
      if (!value.ok()) return value.error();
      clauses.push_back(fmt::format("{} {} ?", field->column, sql));
      if (std::string_view(name) == "EQUALS") {
        plan.equals.emplace_back(field->column, *value);
      } else {
        plan.equals_only = false;
      }
      plan.where_binds.push_back(std::move(*value));
      done = true;
    }
    if (done) continue;
    plan.equals_only = false;
    if (op == "IN") {
      auto values = PredicateValues(p, *field, key);
      if (!values.ok()) return values.error();
      std::string marks;
      for (auto& v : *values) {
        marks += marks.empty() ? "?" : ", ?";
        plan.where_binds.push_back(std::move(v));
      }
      clauses.push_back(fmt::format("{} IN ({})", field->column, marks));
    } else if (op == "IS_SUBSTRING") {
      if (field->type != FieldType::kString) {
        return Error{"invalid filter: IS_SUBSTRING needs a string field", 400};
      }
      auto value = PredicateValue(p, *field, key);
      if (!value.ok()) return value.error();
      // instr() instead of LIKE: no wildcard characters to escape.
      clauses.push_back(fmt::format("instr({}, ?) > 0", field->column));
      plan.where_binds.push_back(std::move(*value));
    } else {
      return Error{fmt::format("invalid filter: unknown operation '{}'", op), 400};
    }
  }
  for (const auto& c : clauses) {
    plan.where += plan.where.empty() ? "(" + c + ")" : " AND (" + c + ")";
  }
  return Ok();
}

}  // namespace

Result<ListPlan> PlanList(const ListRequest& request, const std::vector<Field>& fields,
                          const std::string& default_sort, const std::string& id_column) {
  ListPlan plan;
  if (!request.page_size.empty()) {
    int size = 0;
    const auto& s = request.page_size;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), size);
    if (ec != std::errc() || end != s.data() + s.size()) {
      return Error{"invalid page_size '" + s + "': not an integer", 400};
    }
    if (size < 0) return Error{"invalid page_size: must not be negative", 400};
    plan.page_size = size == 0 ? kDefaultPageSize : std::min(size, kMaxPageSize);
  }

  std::string sort_by = request.sort_by;
  std::string filter = request.filter;
  json cursor;
  if (!request.page_token.empty()) {
    // The token carries the sort and filter of the first page, as KFP's does.
    auto decoded = Base64UrlDecode(request.page_token);
    if (!decoded.ok()) return decoded.error();
    cursor = json::parse(*decoded, nullptr, false);
    if (cursor.is_discarded() || !cursor.is_object() || !cursor.contains("s") ||
        !cursor.contains("i") || !cursor.contains("v") || !cursor["s"].is_string() ||
        !cursor["i"].is_string()) {
      return Error{"invalid page_token", 400};
    }
    sort_by = cursor["s"].get<std::string>();
    filter = cursor.value("f", "");
  }

  std::string field_name = sort_by;
  if (auto space = sort_by.find(' '); space != std::string::npos) {
    field_name = sort_by.substr(0, space);
    std::string dir = sort_by.substr(space + 1);
    if (dir == "desc") {
      plan.descending = true;
    } else if (dir != "asc") {
      return Error{"invalid sort_by '" + sort_by + "': direction must be asc or desc", 400};
    }
  }
  if (field_name.empty()) field_name = default_sort;
  plan.sort_field = FindField(fields, field_name);
  if (!plan.sort_field) {
    return Error{fmt::format("invalid sort_by: cannot sort by '{}' (fields: {})", field_name,
                             FieldNames(fields)),
                 400};
  }
  const char* dir = plan.descending ? "DESC" : "ASC";
  plan.order_by = fmt::format("{} {}, {} {}", plan.sort_field->column, dir, id_column, dir);
  plan.filter = filter;
  if (Status s = AddFilter(filter, fields, plan); !s.ok()) return s.error();
  // Store the normalised sort so later pages agree with the first.
  plan.filter = filter;

  if (!cursor.is_null()) {
    const json& v = cursor["v"];
    SqlValue last;
    if (v.is_number_integer()) {
      last = v.get<int64_t>();
    } else if (v.is_string()) {
      last = v.get<std::string>();
    } else {
      return Error{"invalid page_token", 400};
    }
    plan.cursor_where = fmt::format("({}, {}) {} (?, ?)", plan.sort_field->column, id_column,
                                    plan.descending ? "<" : ">");
    plan.cursor_binds = {last, cursor["i"].get<std::string>()};
  }
  return plan;
}

std::string NextPageToken(const ListPlan& plan, const SqlValue& last_sort_value,
                          const std::string& last_id) {
  json token;
  token["s"] = plan.sort_field->api_names.front() + (plan.descending ? " desc" : " asc");
  token["f"] = plan.filter;
  token["i"] = last_id;
  if (const auto* i = std::get_if<int64_t>(&last_sort_value)) {
    token["v"] = *i;
  } else if (const auto* s = std::get_if<std::string>(&last_sort_value)) {
    token["v"] = *s;
  } else {
    token["v"] = "";
  }
  return Base64UrlEncode(token.dump());
}

}  // namespace kfpbench::store
