#include "store/list_query.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/json_reader.h"
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
    if (!p) return Error{"Invalid page token", kHttpBadRequest};
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
    if (f.kind != FieldKind::kColumn) continue;
    for (const auto& n : f.api_names) {
      if (n == name) return &f;
    }
  }
  return nullptr;
}

const Field* FindSortField(const std::vector<Field>& fields, const std::string& name) {
  if (const Field* f = FindField(fields, name)) return f;
  for (const auto& f : fields) {
    if (f.kind != FieldKind::kSortPrefix) continue;
    for (const auto& n : f.api_names) {
      if (name.size() > n.size() && name.compare(0, n.size(), n) == 0) return &f;
    }
  }
  return nullptr;
}

// The tags field a "tags.<key>" filter key names, if the resource has tags.
const Field* FindTagField(const std::vector<Field>& fields, const std::string& key) {
  for (const auto& f : fields) {
    if (f.kind != FieldKind::kTagPrefix) continue;
    for (const auto& n : f.api_names) {
      if (key.size() > n.size() && key.compare(0, n.size(), n) == 0) return &f;
    }
  }
  return nullptr;
}

// Go's %q for the texts KFP quotes in its messages.
std::string GoQuote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out += fmt::format("\\x{:02x}", c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

Error BadInput(std::string message) { return Error{std::move(message), kHttpBadRequest}; }

// A predicate as protojson reads the API's Predicate message: field names in
// proto (string_value) or JSON (stringValue) form, the operation by name or
// by its enum number; anything else is a 400, as it is from KFP's server.
// The operation comes back under "operation" whichever API named it.
Result<json> NormalizePredicate(const json& p, FilterApi api) {
  // v1beta1's Predicate: `Op op = 1`; v2beta1's: `Operation operation = 1`.
  const char* op_field = api == FilterApi::kV1beta1 ? "op" : "operation";
  const std::pair<const char*, const char*> kNames[] = {
      {op_field, "operation"},          {"key", "key"},
      {"intValue", "int_value"},        {"longValue", "long_value"},
      {"stringValue", "string_value"},  {"timestampValue", "timestamp_value"},
      {"intValues", "int_values"},      {"longValues", "long_values"},
      {"stringValues", "string_values"}};
  json out = json::object();
  for (const auto& [k, v] : p.items()) {
    const char* proto = nullptr;
    for (const auto& [json_name, proto_name] : kNames) {
      if (k == json_name || k == proto_name) proto = proto_name;
    }
    // The other API's operation field is unknown here, as protojson says.
    if (k == "operation" && api == FilterApi::kV1beta1) proto = nullptr;
    if (proto == nullptr) return BadInput("unknown field \"" + k + "\"");
    // protojson: a field given twice (under both names), or a second member
    // of the value oneof.
    if (out.contains(proto)) return BadInput(fmt::format("duplicate field \"{}\"", k));
    if (std::string_view(proto).find("value") != std::string_view::npos) {
      for (const auto& [name, value] : out.items()) {
        if (name.find("value") != std::string::npos) {
          return BadInput(fmt::format("oneof value is already set: \"{}\" and \"{}\"", name, k));
        }
      }
    }
    out[proto] = v;
  }
  if (out.contains("key") && !out["key"].is_string()) {
    return Error{"invalid filter: a predicate's key must be a string", kHttpBadRequest};
  }
  // Predicate.Op (v1beta1) and Predicate.Operation (v2beta1) in KFP's
  // filter.proto: the same numbers, 0 named apart (4 is not used).
  const std::pair<int, const char*> kOperations[] = {
      {0, api == FilterApi::kV1beta1 ? "UNKNOWN" : "OPERATION_UNSPECIFIED"},
      {1, "EQUALS"},
      {2, "NOT_EQUALS"},
      {3, "GREATER_THAN"},
      {5, "GREATER_THAN_EQUALS"},
      {6, "LESS_THAN"},
      {7, "LESS_THAN_EQUALS"},
      {8, "IN"},
      {9, "IS_SUBSTRING"}};
  if (auto op = out.find("operation"); op != out.end()) {
    const char* name = nullptr;
    for (const auto& [number, n] : kOperations) {
      if ((op->is_number_integer() && op->get<int64_t>() == number) ||
          (op->is_string() && op->get_ref<const std::string&>() == n)) {
        name = n;
      }
    }
    // protojson refuses an enum value the enum does not have.
    if (name == nullptr) {
      return Error{fmt::format("invalid value for enum type: {}", op->dump()), kHttpBadRequest};
    }
    *op = name;
  }
  return out;
}

// One predicate value converted to the column's storage type.
Result<SqlValue> PredicateValue(const json& p, const Field& field, const std::string& key) {
  auto bad = [&](const std::string& why) {
    return Error{fmt::format("invalid filter on '{}': {}", key, why), kHttpBadRequest};
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
    return Error{fmt::format("invalid filter on '{}': {}", key, why), kHttpBadRequest};
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

// KFP's transformJSONForBackwardCompatibility: the camelCase value keys
// older clients send, replaced as text (so also inside a string value, as
// KFP's strings.Replacer does).
std::string CamelCaseValueKeysToProto(std::string text) {
  static const std::pair<std::string_view, std::string_view> kKeys[] = {
      {"\"intValue\":", "\"int_value\":"},        {"\"longValue\":", "\"long_value\":"},
      {"\"stringValue\":", "\"string_value\":"},  {"\"timestampValue\":", "\"timestamp_value\":"},
      {"\"intValues\":", "\"int_values\":"},      {"\"longValues\":", "\"long_values\":"},
      {"\"stringValues\":", "\"string_values\":"}};
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    bool replaced = false;
    for (const auto& [from, to] : kKeys) {
      if (text.compare(i, from.size(), from) == 0) {
        out += to;
        i += from.size();
        replaced = true;
        break;
      }
    }
    if (!replaced) out += text[i++];
  }
  return out;
}

// One WHERE clause and its values; sorted so that two filters naming the same
// predicates in another order plan alike (KFP groups predicates by key).
struct Clause {
  std::string sql;
  std::vector<SqlValue> binds;
};

// A tag predicate ("tags.<key>"): EQUALS on a string only, matched inside
// the JSON object the tags column holds.
Result<Clause> TagClause(const json& p, const Field& tags, const std::string& key,
                         const std::string& op, ListPlan& plan) {
  if (op != "EQUALS") {
    return BadInput(
        fmt::format("only EQUALS operation is supported for tag filtering, got {} for key {}", op,
                    GoQuote(key)));
  }
  auto value = p.find("string_value");
  if (value == p.end() || !value->is_string()) {
    return BadInput(fmt::format("tag filter value must be a string for key {}", GoQuote(key)));
  }
  plan.equals_only = false;
  return Clause{
      fmt::format("EXISTS (SELECT 1 FROM json_each({}) WHERE key = ? AND value = ?)", tags.column),
      {SqlValue(key.substr(key.find('.') + 1)), SqlValue(value->get<std::string>())}};
}

// A predicate on a column: a comparison, IN or IS_SUBSTRING. Only EQUALS
// leaves the plan an equality lookup.
Result<Clause> FieldClause(const json& p, const Field& field, const std::string& key,
                           const std::string& op, ListPlan& plan) {
  static const std::pair<const char*, const char*> kCompare[] = {
      {"EQUALS", "="},    {"NOT_EQUALS", "!="},          {"GREATER_THAN", ">"},
      {"LESS_THAN", "<"}, {"GREATER_THAN_EQUALS", ">="}, {"LESS_THAN_EQUALS", "<="}};
  for (const auto& [name, sql] : kCompare) {
    if (op != name) continue;
    auto value = PredicateValue(p, field, key);
    if (!value.ok()) return value.error();
    if (std::string_view(name) == "EQUALS") {
      plan.equals.emplace_back(field.column, *value);
    } else {
      plan.equals_only = false;
    }
    return Clause{fmt::format("{} {} ?", field.column, sql), {std::move(*value)}};
  }
  plan.equals_only = false;
  if (op == "IN") {
    auto values = PredicateValues(p, field, key);
    if (!values.ok()) return values.error();
    std::string marks;
    for (size_t i = 0; i < values->size(); ++i) marks += i == 0 ? "?" : ", ?";
    return Clause{fmt::format("{} IN ({})", field.column, marks), std::move(*values)};
  }
  if (op == "IS_SUBSTRING") {
    if (field.type != FieldType::kString) {
      return BadInput("invalid filter: IS_SUBSTRING needs a string field");
    }
    auto value = PredicateValue(p, field, key);
    if (!value.ok()) return value.error();
    // instr() instead of LIKE: no wildcard characters to escape.
    return Clause{fmt::format("instr({}, ?) > 0", field.column), {std::move(*value)}};
  }
  return BadInput(fmt::format("invalid predicate operation: {}", op));
}

Error Unparsable(const std::string& encoded, const std::string& why) {
  return BadInput(fmt::format("failed to parse valid filter from {}: {}", GoQuote(encoded), why));
}

// The filter's predicates (null when it has none), or why the filter does not
// parse, in KFP's words.
Result<json> FilterPredicates(const std::string& encoded) {
  auto unparsable = [&](const std::string& why) { return Unparsable(encoded, why); };
  // The query string was decoded once already; KFP unescapes the filter again.
  auto decoded = QueryUnescape(encoded);
  if (!decoded.ok()) return unparsable(decoded.error().message);
  json filter = ParseJson(CamelCaseValueKeysToProto(*decoded));
  if (filter.is_discarded()) return unparsable("not valid JSON");
  if (!filter.is_object()) return unparsable("a Filter must be a JSON object");
  for (const auto& [k, v] : filter.items()) {
    if (k != "predicates") return unparsable("unknown field \"" + k + "\"");
  }
  auto preds = filter.find("predicates");
  if (preds == filter.end() || preds->is_null()) return json();
  if (!preds->is_array()) return unparsable("predicates must be an array");
  return std::move(*preds);
}

Status AddFilter(const std::string& encoded, FilterApi api, const std::vector<Field>& fields,
                 ListPlan& plan) {
  if (encoded.empty()) return Ok();
  auto preds = FilterPredicates(encoded);
  if (!preds.ok()) return preds.error();
  std::vector<Clause> clauses;
  for (const auto& raw : *preds) {
    if (!raw.is_object()) return Unparsable(encoded, "each predicate must be an object");
    auto normalized = NormalizePredicate(raw, api);
    if (!normalized.ok()) return Unparsable(encoded, normalized.error().message);
    const json& p = *normalized;
    std::string key = p.value("key", "");
    std::string op = p.value("operation", "OPERATION_UNSPECIFIED");
    if (key.empty()) {
      return BadInput(fmt::format("Predicate key cannot be empty for operation {}", op));
    }
    Result<Clause> clause = Error{};
    if (const Field* tags = FindTagField(fields, key)) {
      clause = TagClause(p, *tags, key, op, plan);
    } else if (const Field* field = FindField(fields, key)) {
      clause = FieldClause(p, *field, key, op, plan);
    } else {
      return BadInput(
          fmt::format("no support for filtering on unrecognized field {}", GoQuote(key)));
    }
    if (!clause.ok()) return clause.error();
    clauses.push_back(std::move(*clause));
  }
  std::stable_sort(clauses.begin(), clauses.end(),
                   [](const Clause& a, const Clause& b) { return a.sql < b.sql; });
  for (auto& c : clauses) {
    plan.where += plan.where.empty() ? "(" + c.sql + ")" : " AND (" + c.sql + ")";
    for (auto& v : c.binds) plan.where_binds.push_back(std::move(v));
  }
  return Ok();
}

Result<int> PageSize(const std::string& text) {
  if (text.empty()) return kDefaultPageSize;
  int size = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), size);
  if (ec != std::errc() || end != text.data() + text.size()) {
    // grpc-gateway's answer for a query parameter that does not parse.
    return BadInput(fmt::format(
        "type mismatch, parameter: page_size, error: strconv.ParseInt: parsing {}: invalid syntax",
        GoQuote(text)));
  }
  if (size < 0) {
    return BadInput(fmt::format("The page size should be greater than 0. Got {}", size));
  }
  return size == 0 ? kDefaultPageSize : std::min(size, kMaxPageSize);
}

// Sort and filter as list.NewOptions reads them: sort_by lowercased and split
// on white space into a field and an optional direction.
Status PlanCriteria(const std::string& sort_by, const std::string& filter, FilterApi api,
                    const Listable& listable, ListPlan& plan) {
  std::vector<std::string> words;
  std::string lowered = sort_by;
  std::transform(lowered.begin(), lowered.end(), lowered.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (size_t i = 0; i < lowered.size();) {
    if (std::isspace(static_cast<unsigned char>(lowered[i]))) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < lowered.size() && !std::isspace(static_cast<unsigned char>(lowered[end]))) ++end;
    words.push_back(lowered.substr(i, end - i));
    i = end;
  }
  if (words.size() > 2 || (words.size() == 2 && words[1] != "desc" && words[1] != "asc")) {
    return BadInput(
        fmt::format("Received invalid sort by format {}. Supported format: "
                    "\"field_name\", \"field_name desc\", or \"field_name asc\"",
                    GoQuote(sort_by)));
  }
  std::string field_name = words.empty() ? listable.default_sort : words[0];
  plan.descending = words.size() == 2 && words[1] == "desc";
  plan.sort_field = FindSortField(listable.fields, field_name);
  if (!plan.sort_field) {
    return BadInput(fmt::format("Invalid sorting field: {} on listable type {}",
                                GoQuote(field_name), listable.model));
  }
  plan.sort_by = field_name + (plan.descending ? " desc" : " asc");
  const char* dir = plan.descending ? "DESC" : "ASC";
  plan.order_by =
      fmt::format("{} {}, {} {}", plan.sort_field->column, dir, listable.id_column, dir);
  plan.filter = filter;
  plan.filter_api = api;
  return AddFilter(filter, api, listable.fields, plan);
}

// KFP's Options.Matches: the same sort column, direction and filter.
bool SameCriteria(const ListPlan& a, const ListPlan& b) {
  return a.sort_field->column == b.sort_field->column && a.descending == b.descending &&
         a.where == b.where && a.where_binds == b.where_binds;
}

}  // namespace

Result<std::string> QueryUnescape(std::string_view text) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] != '%') {
      out += text[i];
    } else if (i + 2 < text.size() && hex(text[i + 1]) >= 0 && hex(text[i + 2]) >= 0) {
      out += static_cast<char>(hex(text[i + 1]) * 16 + hex(text[i + 2]));
      i += 2;
    } else {
      return BadInput(fmt::format("invalid URL escape {}",
                                  GoQuote(text.substr(i, std::min<size_t>(3, text.size() - i)))));
    }
  }
  return out;
}

Result<ListPlan> PlanList(const ListRequest& request, const Listable& listable) {
  ListPlan plan;
  auto size = PageSize(request.page_size);
  if (!size.ok()) return size.error();
  plan.page_size = *size;

  if (request.page_token.empty()) {
    if (Status s = PlanCriteria(request.sort_by, request.filter, request.api, listable, plan);
        !s.ok()) {
      return s.error();
    }
    return plan;
  }
  // The token carries the sort and filter of the first page, as KFP's does.
  auto decoded = Base64UrlDecode(request.page_token);
  if (!decoded.ok()) return decoded.error();
  json cursor = ParseJson(*decoded);
  if (cursor.is_discarded() || !cursor.is_object() || !cursor.contains("s") ||
      !cursor.contains("i") || !cursor.contains("v") || !cursor["s"].is_string() ||
      !cursor["i"].is_string() || (cursor.contains("f") && !cursor["f"].is_string()) ||
      (cursor.contains("a") && cursor["a"] != "v1beta1")) {
    return BadInput("Invalid page token");
  }
  // The token's filter reads as the API it came from says; the criteria are
  // compared as KFP compares its parsed filters, so a v1beta1 token goes on
  // in v2beta1 with the same filter in v2beta1's words, and back.
  const FilterApi token_api = cursor.contains("a") ? FilterApi::kV1beta1 : FilterApi::kV2beta1;
  if (Status s = PlanCriteria(cursor["s"].get<std::string>(), cursor.value("f", ""), token_api,
                              listable, plan);
      !s.ok()) {
    return BadInput("Invalid page token");
  }
  if (!request.sort_by.empty() || !request.filter.empty()) {
    ListPlan asked;
    if (Status s = PlanCriteria(request.sort_by, request.filter, request.api, listable, asked);
        !s.ok()) {
      return s.error();
    }
    if (!SameCriteria(plan, asked)) {
      return BadInput(
          "page token does not match the supplied sort by and/or filtering criteria. Either "
          "specify the same criteria or leave the latter empty if page token is specified");
    }
  }
  const json& v = cursor["v"];
  SqlValue last;
  if (v.is_number_integer()) {
    last = v.get<int64_t>();
  } else if (v.is_string()) {
    last = v.get<std::string>();
  } else {
    return BadInput("Invalid page token");
  }
  plan.cursor_where = fmt::format("({}, {}) {} (?, ?)", plan.sort_field->column, listable.id_column,
                                  plan.descending ? "<" : ">");
  plan.cursor_binds = {last, cursor["i"].get<std::string>()};
  return plan;
}

std::string NextPageToken(const ListPlan& plan, const SqlValue& last_sort_value,
                          const std::string& last_id) {
  json token;
  token["s"] = plan.sort_by;
  token["f"] = plan.filter;
  if (plan.filter_api == FilterApi::kV1beta1) token["a"] = "v1beta1";
  token["i"] = last_id;
  if (const auto* i = std::get_if<int64_t>(&last_sort_value)) {
    token["v"] = *i;
  } else if (const auto* s = std::get_if<std::string>(&last_sort_value)) {
    token["v"] = *s;
  } else {
    token["v"] = "";
  }
  // The filter is the client's text: never let a byte that is not UTF-8 throw.
  return Base64UrlEncode(DumpJson(token));
}

}  // namespace kfpbench::store
