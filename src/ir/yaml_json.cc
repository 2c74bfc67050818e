// YAML -> JSON with YAML 1.2 core-schema typing of plain scalars. yaml-cpp
// hands every scalar over as text; its tag tells plain ("?") from quoted or
// block ("!") scalars, which must stay strings ('2.1.0', '123', 'true').
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "ir/pipeline_spec.h"

namespace kfpbench::ir {
namespace {

using nlohmann::json;

constexpr std::string_view kTagPrefix = "tag:yaml.org,2002:";

bool IsDigits(std::string_view s, int base) {
  if (s.empty()) return false;
  for (char c : s) {
    bool ok = base == 16  ? std::isxdigit(static_cast<unsigned char>(c)) != 0
              : base == 8 ? (c >= '0' && c <= '7')
                          : std::isdigit(static_cast<unsigned char>(c)) != 0;
    if (!ok) return false;
  }
  return true;
}

std::optional<json> ResolveInt(std::string_view s) {
  std::string_view body = s;
  bool negative = false;
  if (!body.empty() && (body.front() == '-' || body.front() == '+')) {
    negative = body.front() == '-';
    body.remove_prefix(1);
  }
  int base = 10;
  if (body.size() > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'o')) {
    if (s.size() != body.size()) return std::nullopt;  // no sign on 0x / 0o in the core schema
    base = body[1] == 'x' ? 16 : 8;
    body.remove_prefix(2);
  }
  if (!IsDigits(body, base)) return std::nullopt;
  uint64_t magnitude = 0;
  auto [p, ec] = std::from_chars(body.data(), body.data() + body.size(), magnitude, base);
  if (ec != std::errc() || p != body.data() + body.size()) {
    // Too big for 64 bits: keep it as a float like JSON parsers do.
    return json(std::strtod(std::string(s).c_str(), nullptr));
  }
  if (negative) {
    if (magnitude > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1) {
      return json(-static_cast<double>(magnitude));
    }
    return json(static_cast<int64_t>(0 - magnitude));
  }
  if (magnitude > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return json(magnitude);
  }
  return json(static_cast<int64_t>(magnitude));
}

std::optional<json> ResolveFloat(std::string_view s) {
  std::string_view body = s;
  bool negative = false;
  if (!body.empty() && (body.front() == '-' || body.front() == '+')) {
    negative = body.front() == '-';
    body.remove_prefix(1);
  }
  if (body == ".inf" || body == ".Inf" || body == ".INF") {
    return json(negative ? -std::numeric_limits<double>::infinity()
                         : std::numeric_limits<double>::infinity());
  }
  if (s == ".nan" || s == ".NaN" || s == ".NAN") return json(std::nan(""));
  // [0-9]+ ( . [0-9]* )? ( [eE] [-+]? [0-9]+ )?  or  . [0-9]+ ( exponent )?
  size_t i = 0;
  size_t int_digits = 0, frac_digits = 0;
  while (i < body.size() && std::isdigit(static_cast<unsigned char>(body[i]))) ++i, ++int_digits;
  bool dot = i < body.size() && body[i] == '.';
  if (dot) {
    ++i;
    while (i < body.size() && std::isdigit(static_cast<unsigned char>(body[i]))) ++i, ++frac_digits;
  }
  if (int_digits == 0 && frac_digits == 0) return std::nullopt;
  bool exponent = false;
  if (i < body.size() && (body[i] == 'e' || body[i] == 'E')) {
    ++i;
    if (i < body.size() && (body[i] == '-' || body[i] == '+')) ++i;
    size_t exp_digits = 0;
    while (i < body.size() && std::isdigit(static_cast<unsigned char>(body[i]))) ++i, ++exp_digits;
    if (exp_digits == 0) return std::nullopt;
    exponent = true;
  }
  if (i != body.size() || (!dot && !exponent)) return std::nullopt;
  return json(std::strtod(std::string(s).c_str(), nullptr));
}

json ResolvePlain(const std::string& s) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  char c = s.front();
  if (std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '+' || c == '.') {
    if (auto i = ResolveInt(s)) return *i;
    if (auto f = ResolveFloat(s)) return *f;
  }
  return s;
}

Result<json> ResolveTagged(const std::string& tag, const std::string& s, const YAML::Mark& mark) {
  std::string_view type = std::string_view(tag).substr(kTagPrefix.size());
  std::optional<json> v;
  if (type == "str") return json(s);
  if (type == "int") v = ResolveInt(s);
  if (type == "float") v = ResolveFloat(s);
  if (type == "float" && !v) v = ResolveInt(s);
  if (type == "bool" || type == "null") {
    json plain = ResolvePlain(s);
    if ((type == "bool" && plain.is_boolean()) || (type == "null" && plain.is_null())) v = plain;
  }
  if (!v) {
    return Error{fmt::format("yaml: line {}: '{}' is not a valid !!{}", mark.line + 1, s, type)};
  }
  return *v;
}

// yaml-cpp keeps an alias as a second reference to one node, so a 300-byte
// document of nested aliases (a "billion laughs") is small until it is
// expanded here. The expansion is bounded, in nodes and in depth, far above
// any compiled pipeline (KFP's largest test pipelines have a few thousand
// nodes) and far below what exhausts memory or the stack.
constexpr size_t kMaxNodes = 1'000'000;
constexpr int kMaxDepth = 256;

struct Budget {
  size_t nodes_left = kMaxNodes;
  int depth = 0;
};

Result<json> Convert(const YAML::Node& node, Budget& budget) {
  if (budget.nodes_left == 0) {
    return Error{fmt::format(
        "yaml: more than {} nodes once aliases are expanded (an alias bomb?); refused", kMaxNodes)};
  }
  --budget.nodes_left;
  if (budget.depth >= kMaxDepth) {
    return Error{fmt::format("yaml: line {}: nested more than {} levels deep", node.Mark().line + 1,
                             kMaxDepth)};
  }
  struct Level {
    Budget& b;
    explicit Level(Budget& budget) : b(budget) { ++b.depth; }
    ~Level() { --b.depth; }
  } level(budget);
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return json(nullptr);
    case YAML::NodeType::Scalar: {
      const std::string& tag = node.Tag();
      const std::string& s = node.Scalar();
      if (tag == "?") return ResolvePlain(s);
      if (tag.rfind(kTagPrefix, 0) == 0) return ResolveTagged(tag, s, node.Mark());
      return json(s);  // "!" (quoted or block) and unknown local tags
    }
    case YAML::NodeType::Sequence: {
      json out = json::array();
      for (const auto& item : node) {
        auto v = Convert(item, budget);
        if (!v.ok()) return v;
        out.push_back(std::move(*v));
      }
      return out;
    }
    case YAML::NodeType::Map: {
      json out = json::object();
      for (const auto& kv : node) {
        if (!kv.first.IsScalar()) {
          return Error{
              fmt::format("yaml: line {}: mapping keys must be scalars", kv.first.Mark().line + 1)};
        }
        auto v = Convert(kv.second, budget);
        if (!v.ok()) return v;
        out[kv.first.Scalar()] = std::move(*v);
      }
      return out;
    }
  }
  return json(nullptr);
}

}  // namespace

Result<std::vector<json>> YamlToJson(std::string_view text) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& e) {
    // yaml-cpp's marks are 0-based; people count lines from 1.
    return Error{fmt::format("invalid YAML at line {}, column {}: {}", e.mark.line + 1,
                             e.mark.column + 1, e.msg),
                 400};
  }
  std::vector<json> out;
  out.reserve(docs.size());
  Budget budget;  // shared by every document of the text
  for (const auto& doc : docs) {
    auto v = Convert(doc, budget);
    if (!v.ok()) return Error{v.error().message, 400};
    out.push_back(std::move(*v));
  }
  return out;
}

}  // namespace kfpbench::ir
