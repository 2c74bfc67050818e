// YAML -> JSON, for every YAML file kfpbench reads. Pipelines get YAML 1.2
// core-schema typing of plain scalars: yaml-cpp hands every scalar over as
// text, and its tag tells plain ("?") from quoted or block ("!") scalars,
// which must stay strings ('2.1.0', '123', 'true'). Configuration files keep
// the text, which their readers check field by field.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include "ir/yaml_json.h"

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

// Removes a leading '-' or '+' from `body`; true when it was '-'.
bool StripSign(std::string_view& body) {
  if (body.empty() || (body.front() != '-' && body.front() != '+')) return false;
  const bool negative = body.front() == '-';
  body.remove_prefix(1);
  return negative;
}

std::optional<json> ResolveInt(std::string_view s) {
  std::string_view body = s;
  const bool negative = StripSign(body);
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
  const bool negative = StripSign(body);
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

// Aliases are expanded here, so a 300-byte document of nested aliases (a
// "billion laughs") would grow without bound. The expansion is bounded, in
// nodes and in depth, far above any compiled pipeline (KFP's largest test
// pipelines have a few thousand nodes) and far below what exhausts memory or
// the stack (nlohmann::json frees and prints recursively).
constexpr size_t kMaxNodes = 1'000'000;
constexpr size_t kMaxDepth = 256;

// A refusal of the text. Thrown from inside yaml-cpp's parser where going on
// would cost without bound (a stall, too many nodes, nesting too deep); the
// others are kept while the parse goes on (JsonBuilder::refused). It never
// leaves this file.
struct Refusal {
  std::string message;
};

// Which scalars keep their text rather than a type: none (YamlToJson), or
// all but those under the top mapping's `typed_keys` (YamlToTextJson).
struct ScalarTyping {
  bool as_text = false;
  std::span<const std::string_view> typed_keys;
};

// Builds JSON (nlohmann::json, or ordered_json to keep keys as written)
// straight from yaml-cpp's parse events. Going through YAML::LoadAll instead
// would build a YAML::Node tree first, which costs more than the parse
// itself, and LoadAll loops forever, allocating an empty document per turn,
// when a document starts with a token no node can start with (a stray ',').
template <typename Json>
class JsonBuilder : public YAML::EventHandler {
 public:
  JsonBuilder(std::string_view text, ScalarTyping typing) : text_(text), typing_(typing) {}

  std::vector<Json> TakeDocuments() { return std::move(documents_); }

  // The first refusal of what the text says: a key that is not a scalar, a
  // value its tag does not fit, an alias to no anchor. The parse goes on
  // after it, building nothing, so that a syntax error further on is the
  // one reported: it is often the cause (an unclosed '[' reads as a key).
  const std::optional<Refusal>& refused() const { return refused_; }

  void OnDocumentStart(const YAML::Mark& mark) override {
    // A document that consumed nothing leaves the parser where it was; the
    // next one would start there again, forever.
    if (mark.pos == last_document_start_) {
      char c =
          static_cast<size_t>(mark.pos) < text_.size() ? text_[static_cast<size_t>(mark.pos)] : ' ';
      throw Refusal{fmt::format(
          "invalid YAML at line {}, column {}: unexpected {}", mark.line + 1, mark.column + 1,
          std::isgraph(static_cast<unsigned char>(c)) ? fmt::format("'{}'", c)
                                                      : std::string("character"))};
    }
    last_document_start_ = mark.pos;
    anchors_.clear();  // anchors do not reach across documents
  }
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (refused_) return;
    if (AwaitingKey()) return RefuseKey(mark);
    Add(Json(nullptr), mark, anchor, 1, 0);
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    if (refused_) return;
    Json v;
    if (AsText()) {
      v = value;
    } else if (tag == "?") {
      v = ResolvePlain(value);
    } else if (tag.rfind(kTagPrefix, 0) == 0) {
      auto r = ResolveTagged(tag, value, mark);
      if (!r.ok()) return Refuse(r.error().message);
      v = std::move(*r);
    } else {
      v = value;  // "!" (quoted or block) and unknown local tags
    }
    if (AwaitingKey()) {
      stack_.back().key = value;
      Remember(anchor, v, 1, 0, value);
      return;
    }
    Add(std::move(v), mark, anchor, 1, 0, value);
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (refused_) return;
    auto it = anchors_.find(anchor);
    if (it == anchors_.end()) {
      return Refuse(fmt::format("yaml: line {}: alias to an unknown anchor", mark.line + 1));
    }
    const Anchored& a = it->second;
    if (AwaitingKey()) {
      if (!a.scalar) return RefuseKey(mark);
      stack_.back().key = *a.scalar;
      return;
    }
    Add(Json(a.value), mark, YAML::NullAnchor, a.nodes, a.depth, a.scalar);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Open(Json::array(), mark, anchor);
  }
  void OnSequenceEnd() override {
    if (!refused_) Close();
  }

  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    Open(Json::object(), mark, anchor);
  }
  void OnMapEnd() override {
    if (!refused_) Close();
  }

 private:
  struct Collection {
    Json value;
    YAML::anchor_t anchor = YAML::NullAnchor;
    std::optional<std::string> key;  // a mapping's key waiting for its value
    size_t nodes = 1;                // in this collection, itself included
    size_t depth = 0;                // levels below it
  };
  struct Anchored {
    Json value;
    size_t nodes;
    size_t depth;
    std::optional<std::string> scalar;  // its text, if it can be a key
  };

  bool AwaitingKey() const {
    return !stack_.empty() && stack_.back().value.is_object() && !stack_.back().key;
  }

  // Whether the scalar being read keeps its text: below the top mapping's
  // key awaiting its value, that key decides.
  bool AsText() const {
    if (!typing_.as_text || stack_.empty()) return typing_.as_text;
    const Collection& top = stack_.front();
    if (!top.value.is_object() || !top.key) return true;
    const auto& typed = typing_.typed_keys;
    return std::find(typed.begin(), typed.end(), *top.key) == typed.end();
  }

  void Refuse(std::string message) { refused_ = Refusal{std::move(message)}; }

  void RefuseKey(const YAML::Mark& mark) {
    Refuse(fmt::format("yaml: line {}: mapping keys must be scalars", mark.line + 1));
  }

  void Spend(size_t nodes, size_t depth, const YAML::Mark& mark) {
    if (nodes > nodes_left_) {
      throw Refusal{fmt::format(
          "yaml: more than {} nodes once aliases are expanded (an alias bomb?); refused",
          kMaxNodes)};
    }
    nodes_left_ -= nodes;
    if (stack_.size() + depth >= kMaxDepth) {
      throw Refusal{
          fmt::format("yaml: line {}: nested more than {} levels deep", mark.line + 1, kMaxDepth)};
    }
  }

  void Remember(YAML::anchor_t anchor, const Json& value, size_t nodes, size_t depth,
                std::optional<std::string> scalar = std::nullopt) {
    if (anchor != YAML::NullAnchor) anchors_[anchor] = Anchored{value, nodes, depth, scalar};
  }

  // Places a finished node in its parent, or makes it the document.
  void Add(Json value, const YAML::Mark& mark, YAML::anchor_t anchor, size_t nodes, size_t depth,
           std::optional<std::string> scalar = std::nullopt) {
    Spend(nodes, depth, mark);
    Remember(anchor, value, nodes, depth, std::move(scalar));
    Place(std::move(value), nodes, depth);
  }

  void Place(Json value, size_t nodes, size_t depth) {
    if (stack_.empty()) {
      documents_.push_back(std::move(value));
      return;
    }
    Collection& parent = stack_.back();
    parent.nodes += nodes;
    parent.depth = std::max(parent.depth, depth + 1);
    if (parent.value.is_array()) {
      parent.value.push_back(std::move(value));
    } else {
      parent.value[*parent.key] = std::move(value);  // the last of duplicate keys wins
      parent.key.reset();
    }
  }

  void Open(Json empty, const YAML::Mark& mark, YAML::anchor_t anchor) {
    if (refused_) return;
    if (AwaitingKey()) return RefuseKey(mark);
    Spend(1, 0, mark);
    Collection c;
    c.value = std::move(empty);
    c.anchor = anchor;
    stack_.push_back(std::move(c));
  }

  void Close() {
    Collection done = std::move(stack_.back());
    stack_.pop_back();
    Remember(done.anchor, done.value, done.nodes, done.depth);
    Place(std::move(done.value), done.nodes, done.depth);
  }

  std::string_view text_;
  ScalarTyping typing_;
  std::vector<Json> documents_;
  std::vector<Collection> stack_;
  std::unordered_map<YAML::anchor_t, Anchored> anchors_;
  size_t nodes_left_ = kMaxNodes;  // shared by every document of the text
  int last_document_start_ = -1;
  std::optional<Refusal> refused_;
};

// Every document of `text`, or the parser's error.
template <typename Json>
Result<std::vector<Json>> ParseDocuments(std::string_view text, ScalarTyping typing) {
  std::istringstream in{std::string(text)};
  JsonBuilder<Json> builder(text, typing);
  try {
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(builder)) {
    }
  } catch (const YAML::Exception& e) {
    // yaml-cpp's marks are 0-based; people count lines from 1.
    return Error{fmt::format("invalid YAML at line {}, column {}: {}", e.mark.line + 1,
                             e.mark.column + 1, e.msg),
                 kHttpBadRequest};
  } catch (const Refusal& r) {
    return Error{r.message, kHttpBadRequest};
  }
  if (builder.refused()) return Error{builder.refused()->message, kHttpBadRequest};
  return builder.TakeDocuments();
}

}  // namespace

Result<std::vector<json>> YamlToJson(std::string_view text) {
  return ParseDocuments<json>(text, {});
}

Result<TextTree> YamlToTextJson(std::string_view text,
                                std::span<const std::string_view> typed_keys) {
  auto docs = ParseDocuments<TextTree>(text, {true, typed_keys});
  if (!docs.ok()) return docs.error();
  std::erase_if(*docs, [](const TextTree& doc) { return doc.is_null(); });
  if (docs->size() > 1) {
    return Error{fmt::format("{} YAML documents: a configuration file holds one", docs->size()),
                 kHttpBadRequest};
  }
  return docs->empty() ? TextTree() : std::move(docs->front());
}

}  // namespace kfpbench::ir
