#include "ir/values.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

#include "util/json_reader.h"
#include "util/strings.h"

namespace kfpbench::ir {
namespace {

using nlohmann::json;

std::optional<int64_t> ParseInt(std::string_view s) {
  s = TrimSpace(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc() && p == s.data() + s.size() && !s.empty()) return v;
  return std::nullopt;
}

std::optional<double> ParseDouble(std::string_view s) {
  s = TrimSpace(s);
  if (s.empty()) return std::nullopt;
  std::string copy(s);
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || errno == ERANGE) return std::nullopt;
  return v;
}

// An integral double as an int; std::nullopt when it has a fraction or is huge.
std::optional<int64_t> IntegralDouble(double d) {
  if (!std::isfinite(d) || std::trunc(d) != d) return std::nullopt;
  if (d < -9.2e18 || d > 9.2e18) return std::nullopt;
  return static_cast<int64_t>(d);
}

Error TypeError(const json& value, ParameterType type) {
  return Error{fmt::format("expected {}, got {}", ParameterTypeName(type), DescribeValue(value)),
               400};
}

}  // namespace

std::string ParameterToString(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  return value.dump();
}

std::string DescribeValue(const json& value) {
  // Replace, not throw, on bytes that are not UTF-8: the value came from outside.
  std::string text = DumpJson(value);
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  const char* kind = "value";
  switch (value.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::string:
      kind = "string";
      break;
    case json::value_t::boolean:
      kind = "boolean";
      break;
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      kind = "integer";
      break;
    case json::value_t::number_float:
      kind = "number";
      break;
    case json::value_t::array:
      kind = "list";
      break;
    case json::value_t::object:
      kind = "struct";
      break;
    default:
      break;
  }
  return fmt::format("{} {}", kind, text);
}

Result<json> CheckParameterValue(const json& value, ParameterType type) {
  switch (type) {
    case ParameterType::kString:
      if (value.is_string()) return value;
      break;
    case ParameterType::kNumberInteger:
      if (value.is_number_integer()) return value;
      if (value.is_number_float()) {
        if (auto i = IntegralDouble(value.get<double>())) return json(*i);
      }
      break;
    case ParameterType::kNumberDouble:
      if (value.is_number()) return json(value.get<double>());
      break;
    case ParameterType::kBoolean:
      if (value.is_boolean()) return value;
      break;
    case ParameterType::kList:
      if (value.is_array()) return value;
      break;
    case ParameterType::kStruct:
    case ParameterType::kTaskFinalStatus:
      if (value.is_object()) return value;
      break;
    case ParameterType::kUnspecified:
      return value;
  }
  return TypeError(value, type);
}

Result<json> CoerceParameterValue(const json& value, ParameterType type) {
  auto strict = CheckParameterValue(value, type);
  if (strict.ok()) return strict;
  if (type == ParameterType::kString) return json(ParameterToString(value));
  if (value.is_string()) return ParseOutputParameter(value.get<std::string>(), type);
  if (type == ParameterType::kNumberInteger && value.is_boolean()) {
    return json(value.get<bool>() ? 1 : 0);
  }
  return strict;
}

Result<json> ParseOutputParameter(std::string_view text, ParameterType type) {
  switch (type) {
    case ParameterType::kString:
    case ParameterType::kUnspecified:
      return json(std::string(text));
    case ParameterType::kNumberInteger: {
      if (auto i = ParseInt(text)) return json(*i);
      // Python writes ints that went through a float as "3.0".
      if (auto d = ParseDouble(text)) {
        if (auto i = IntegralDouble(*d)) return json(*i);
      }
      break;
    }
    case ParameterType::kNumberDouble:
      if (auto d = ParseDouble(text)) return json(*d);
      break;
    case ParameterType::kBoolean: {
      std::string_view t = TrimSpace(text);
      if (t == "true" || t == "True" || t == "TRUE" || t == "1") return json(true);
      if (t == "false" || t == "False" || t == "FALSE" || t == "0") return json(false);
      break;
    }
    case ParameterType::kList:
    case ParameterType::kStruct:
    case ParameterType::kTaskFinalStatus: {
      json parsed = ParseJson(text);
      if (parsed.is_discarded()) {
        return Error{fmt::format("expected {} as JSON, got text '{}'", ParameterTypeName(type),
                                 text.substr(0, 60))};
      }
      return CheckParameterValue(parsed, type);
    }
  }
  return Error{fmt::format("expected {}, got text '{}'", ParameterTypeName(type),
                           TrimSpace(text).substr(0, 60))};
}

}  // namespace kfpbench::ir
