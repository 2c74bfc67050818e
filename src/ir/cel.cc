#include "ir/cel.h"

#include <cctype>
#include <cmath>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ir/values.h"
#include "util/json_reader.h"

namespace kfpbench::ir {

using nlohmann::json;

struct CelNode {
  enum class Kind { kLiteral, kIdent, kMember, kIndex, kCall, kList, kUnary, kBinary };
  Kind kind = Kind::kLiteral;
  json value;        // kLiteral
  std::string name;  // identifier, member, function or operator
  std::vector<std::shared_ptr<const CelNode>> children;
  int depth = 1;  // levels in this subtree; bounded at parse time
};

namespace {

using NodePtr = std::shared_ptr<const CelNode>;

// ---- Parsing: a recursive-descent parser over the raw text. ----

// The parser recurses per bracket, parenthesis or unary operator, and
// evaluation and destruction recurse per tree level, so both are bounded:
// far above the CEL spec's minimum of 12 nested levels and above any
// condition KFP's compiler writes (an Else over N branches is a chain of N
// conjunctions), far below what overflows a thread's stack even in the
// sanitizer build, where one level of evaluation takes about 8 KiB.
constexpr int kMaxNesting = 100;
constexpr int kMaxTreeDepth = 200;

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Result<NodePtr> ParseAll() {
    auto node = ParseOr();
    if (!node.ok()) return node;
    SkipSpace();
    if (pos_ != text_.size())
      return Fail("unexpected '" + std::string(text_.substr(pos_, 10)) + "'");
    return node;
  }

 private:
  Error Fail(const std::string& what) const {
    return Error{fmt::format("CEL expression '{}': {} at offset {}", text_, what, pos_),
                 kHttpBadRequest};
  }

  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  bool Eat(std::string_view op) {
    SkipSpace();
    if (text_.substr(pos_, op.size()) != op) return false;
    // Keep "<" from eating the first half of "<=", and "!" of "!=".
    if ((op == "<" || op == ">" || op == "!" || op == "=") && pos_ + 1 < text_.size() &&
        text_[pos_ + 1] == '=') {
      return false;
    }
    pos_ += op.size();
    return true;
  }

  Result<NodePtr> Make(CelNode::Kind kind, std::string name, std::vector<NodePtr> children) const {
    auto n = std::make_shared<CelNode>();
    n->kind = kind;
    n->name = std::move(name);
    n->children = std::move(children);
    for (const auto& c : n->children) n->depth = std::max(n->depth, c->depth + 1);
    if (n->depth > kMaxTreeDepth) {
      return Fail(fmt::format("more than {} operations deep", kMaxTreeDepth));
    }
    return NodePtr(std::move(n));
  }

  // Counts one level of the parser's recursion while it lives.
  class Nested {
   public:
    explicit Nested(int& depth) : depth_(depth) { ++depth_; }
    ~Nested() { --depth_; }
    bool too_deep() const { return depth_ > kMaxNesting; }

   private:
    int& depth_;
  };
  Error TooDeep() const {
    return Fail(fmt::format("nested more than {} levels deep", kMaxNesting));
  }

  // A left-associative chain `next (op next)*` of the operators in `ops`.
  Result<NodePtr> ParseChain(std::initializer_list<const char*> ops,
                             Result<NodePtr> (Parser::*next)()) {
    auto left = (this->*next)();
    if (!left.ok()) return left;
    NodePtr node = *left;
    while (true) {
      const char* op = nullptr;
      for (const char* candidate : ops) {
        if (Eat(candidate)) {
          op = candidate;
          break;
        }
      }
      if (op == nullptr) return node;
      auto right = (this->*next)();
      if (!right.ok()) return right;
      auto made = Make(CelNode::Kind::kBinary, op, {node, *right});
      if (!made.ok()) return made;
      node = *made;
    }
  }

  Result<NodePtr> ParseOr() {
    Nested nested(nesting_);
    if (nested.too_deep()) return TooDeep();
    return ParseChain({"||"}, &Parser::ParseAnd);
  }

  Result<NodePtr> ParseAnd() { return ParseChain({"&&"}, &Parser::ParseCompare); }

  Result<NodePtr> ParseCompare() {
    auto left = ParseAdd();
    if (!left.ok()) return left;
    for (std::string_view op : {"==", "!=", "<=", ">=", "<", ">"}) {
      if (Eat(op)) {
        auto right = ParseAdd();
        if (!right.ok()) return right;
        return Make(CelNode::Kind::kBinary, std::string(op), {*left, *right});
      }
    }
    SkipSpace();
    if (text_.substr(pos_, 3) == "in " || text_.substr(pos_, 3) == "in(") {
      pos_ += 2;
      auto right = ParseAdd();
      if (!right.ok()) return right;
      return Make(CelNode::Kind::kBinary, "in", {*left, *right});
    }
    return left;
  }

  Result<NodePtr> ParseAdd() { return ParseChain({"+", "-"}, &Parser::ParseUnary); }

  // Prefix operators in a loop, not by recursion: "!!!!…" costs no stack.
  Result<NodePtr> ParseUnary() {
    std::vector<const char*> ops;  // outermost first
    for (;;) {
      if (Eat("!")) {
        ops.push_back("!");
      } else if (Eat("-")) {
        ops.push_back("-");
      } else {
        break;
      }
      if (static_cast<int>(ops.size()) > kMaxNesting) return TooDeep();
    }
    auto operand = ParsePostfix();
    if (!operand.ok()) return operand;
    NodePtr node = *operand;
    for (auto op = ops.rbegin(); op != ops.rend(); ++op) {
      auto made = Make(CelNode::Kind::kUnary, *op, {node});
      if (!made.ok()) return made;
      node = *made;
    }
    return node;
  }

  Result<NodePtr> ParsePostfix() {
    auto primary = ParsePrimary();
    if (!primary.ok()) return primary;
    NodePtr node = *primary;
    while (true) {
      if (Eat(".")) {
        std::string ident = ReadIdent();
        if (ident.empty()) return Fail("expected a field name after '.'");
        auto made = Make(CelNode::Kind::kMember, ident, {node});
        if (!made.ok()) return made;
        node = *made;
      } else if (Eat("[")) {
        auto index = ParseOr();
        if (!index.ok()) return index;
        if (!Eat("]")) return Fail("expected ']'");
        auto made = Make(CelNode::Kind::kIndex, "", {node, *index});
        if (!made.ok()) return made;
        node = *made;
      } else {
        return node;
      }
    }
  }

  std::string ReadIdent() {
    SkipSpace();
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      ++pos_;
    }
    if (start < text_.size() && std::isdigit(static_cast<unsigned char>(text_[start]))) {
      pos_ = start;
      return "";
    }
    return std::string(text_.substr(start, pos_ - start));
  }

  Result<NodePtr> ParsePrimary() {
    SkipSpace();
    if (pos_ >= text_.size()) return Fail("unexpected end");
    char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      auto inner = ParseOr();
      if (!inner.ok()) return inner;
      if (!Eat(")")) return Fail("expected ')'");
      return inner;
    }
    if (c == '[') {
      ++pos_;
      std::vector<NodePtr> items;
      if (auto bad = ParseItems(']', items)) return *bad;
      return Make(CelNode::Kind::kList, "", std::move(items));
    }
    if (c == '\'' || c == '"') return ParseString();
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return ParseNumber();
    std::string ident = ReadIdent();
    if (ident.empty()) return Fail(fmt::format("unexpected '{}'", c));
    if (ident == "true" || ident == "false" || ident == "null") {
      auto n = std::make_shared<CelNode>();
      n->value = ident == "null" ? json(nullptr) : json(ident == "true");
      return NodePtr(n);
    }
    if (Eat("(")) {
      static constexpr std::string_view kFunctions[] = {"int",  "double",    "string", "bool",
                                                        "size", "parseJson", "dyn"};
      bool known = false;
      for (auto f : kFunctions) known = known || f == ident;
      if (!known) return Fail("unsupported function '" + ident + "'");
      std::vector<NodePtr> args;
      if (auto bad = ParseItems(')', args)) return *bad;
      if (args.size() != 1) return Fail(ident + "() takes one argument");
      return Make(CelNode::Kind::kCall, ident, std::move(args));
    }
    return Make(CelNode::Kind::kIdent, ident, {});
  }

  // Expressions separated by commas up to `close` (the opening bracket read),
  // into `items`; the error when they do not parse.
  std::optional<Result<NodePtr>> ParseItems(char close, std::vector<NodePtr>& items) {
    const std::string end(1, close);
    if (Eat(end)) return std::nullopt;
    while (true) {
      auto item = ParseOr();
      if (!item.ok()) return item;
      items.push_back(*item);
      if (Eat(end)) return std::nullopt;
      if (!Eat(",")) return Fail(fmt::format("expected ',' or '{}'", close));
    }
  }

  Result<NodePtr> ParseString() {
    char quote = text_[pos_++];
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      char c = text_[pos_++];
      if (c == '\\' && pos_ < text_.size()) {
        char e = text_[pos_++];
        switch (e) {
          case 'n':
            out += '\n';
            break;
          case 't':
            out += '\t';
            break;
          case 'r':
            out += '\r';
            break;
          default:
            out += e;
            break;
        }
      } else {
        out += c;
      }
    }
    if (pos_ >= text_.size()) return Fail("unterminated string");
    ++pos_;
    auto n = std::make_shared<CelNode>();
    n->value = json(std::move(out));
    return NodePtr(n);
  }

  Result<NodePtr> ParseNumber() {
    size_t start = pos_;
    bool is_float = false;
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (std::isdigit(static_cast<unsigned char>(c))) {
        ++pos_;
      } else if (c == '.' || c == 'e' || c == 'E') {
        is_float = true;
        ++pos_;
        if ((c == 'e' || c == 'E') && pos_ < text_.size() &&
            (text_[pos_] == '-' || text_[pos_] == '+')) {
          ++pos_;
        }
      } else {
        break;
      }
    }
    std::string_view digits = text_.substr(start, pos_ - start);
    // CEL's unsigned suffix.
    if (pos_ < text_.size() && (text_[pos_] == 'u' || text_[pos_] == 'U')) ++pos_;
    auto parsed = ParseOutputParameter(
        digits, is_float ? ParameterType::kNumberDouble : ParameterType::kNumberInteger);
    if (!parsed.ok()) return Fail("bad number '" + std::string(digits) + "'");
    auto n = std::make_shared<CelNode>();
    n->value = *parsed;
    return NodePtr(n);
  }

  std::string_view text_;
  size_t pos_ = 0;
  int nesting_ = 0;
};

// ---- Evaluation. ----

Error EvalError(const std::string& what) { return Error{what, kHttpBadRequest}; }

Result<json> Compare(const std::string& op, const json& a, const json& b) {
  if (a.is_number() && b.is_number()) {
    bool both_int = a.is_number_integer() && b.is_number_integer();
    int cmp = 0;
    if (both_int) {
      int64_t x = a.get<int64_t>(), y = b.get<int64_t>();
      cmp = x < y ? -1 : (x > y ? 1 : 0);
    } else {
      double x = a.get<double>(), y = b.get<double>();
      cmp = x < y ? -1 : (x > y ? 1 : 0);
    }
    if (op == "==") return json(cmp == 0);
    if (op == "!=") return json(cmp != 0);
    if (op == "<") return json(cmp < 0);
    if (op == "<=") return json(cmp <= 0);
    if (op == ">") return json(cmp > 0);
    return json(cmp >= 0);
  }
  if (op == "==") return json(a == b);
  if (op == "!=") return json(a != b);
  if (a.is_string() && b.is_string()) {
    const auto& x = a.get_ref<const std::string&>();
    const auto& y = b.get_ref<const std::string&>();
    if (op == "<") return json(x < y);
    if (op == "<=") return json(x <= y);
    if (op == ">") return json(x > y);
    return json(x >= y);
  }
  return EvalError(fmt::format("cannot compare {} {} {}", DescribeValue(a), op, DescribeValue(b)));
}

Result<json> Call(const std::string& fn, const json& arg) {
  if (fn == "dyn") return arg;
  if (fn == "int") {
    if (arg.is_number_float()) return json(static_cast<int64_t>(std::trunc(arg.get<double>())));
    if (arg.is_boolean()) return json(arg.get<bool>() ? 1 : 0);
    if (arg.is_number() || arg.is_string()) {
      auto v = CoerceParameterValue(arg, ParameterType::kNumberInteger);
      if (v.ok()) return v;
    }
    return EvalError("int() of " + DescribeValue(arg));
  }
  if (fn == "double") {
    if (arg.is_number() || arg.is_string()) {
      auto v = CoerceParameterValue(arg, ParameterType::kNumberDouble);
      if (v.ok()) return v;
    }
    return EvalError("double() of " + DescribeValue(arg));
  }
  if (fn == "string") return json(ParameterToString(arg));
  if (fn == "bool") {
    auto v = CoerceParameterValue(arg, ParameterType::kBoolean);
    if (v.ok()) return v;
    return EvalError("bool() of " + DescribeValue(arg));
  }
  if (fn == "size") {
    if (arg.is_string())
      return json(static_cast<int64_t>(arg.get_ref<const std::string&>().size()));
    if (arg.is_array() || arg.is_object()) return json(static_cast<int64_t>(arg.size()));
    return EvalError("size() of " + DescribeValue(arg));
  }
  // parseJson
  if (!arg.is_string()) return arg;
  json parsed = ParseJson(arg.get<std::string>());
  if (parsed.is_discarded()) return EvalError("parseJson() of non-JSON " + DescribeValue(arg));
  return parsed;
}

Result<json> Eval(const CelNode& n, const json& activation);

// a.b and a[k]: a map's value by key, a list's by position.
Result<json> EvalIndex(const CelNode& n, const json& activation) {
  auto base = Eval(*n.children[0], activation);
  if (!base.ok()) return base;
  json key = n.name;
  if (n.kind == CelNode::Kind::kIndex) {
    auto k = Eval(*n.children[1], activation);
    if (!k.ok()) return k;
    key = std::move(*k);
  }
  if (base->is_object() && key.is_string()) {
    auto it = base->find(key.get<std::string>());
    if (it == base->end()) return EvalError("no such key: '" + key.get<std::string>() + "'");
    return *it;
  }
  if (base->is_array() && key.is_number_integer()) {
    int64_t i = key.get<int64_t>();
    if (i < 0 || i >= static_cast<int64_t>(base->size())) {
      return EvalError(fmt::format("index {} out of range", i));
    }
    return (*base)[static_cast<size_t>(i)];
  }
  return EvalError(
      fmt::format("cannot index {} with {}", DescribeValue(*base), DescribeValue(key)));
}

// &&, || (short-circuit, as CEL does), in, + and -, and the comparisons.
Result<json> EvalBinary(const CelNode& n, const json& activation) {
  const std::string& op = n.name;
  auto a = Eval(*n.children[0], activation);
  if (!a.ok()) return a;
  if (op == "&&" || op == "||") {
    if (!a->is_boolean()) return EvalError("'" + op + "' of " + DescribeValue(*a));
    // Short-circuit as CEL does.
    if (op == "&&" && !a->get<bool>()) return json(false);
    if (op == "||" && a->get<bool>()) return json(true);
    auto b = Eval(*n.children[1], activation);
    if (!b.ok()) return b;
    if (!b->is_boolean()) return EvalError("'" + op + "' of " + DescribeValue(*b));
    return *b;
  }
  auto b = Eval(*n.children[1], activation);
  if (!b.ok()) return b;
  if (op == "in") {
    if (b->is_array()) {
      for (const auto& item : *b) {
        if (item == *a) return json(true);
      }
      return json(false);
    }
    if (b->is_object() && a->is_string()) return json(b->contains(a->get<std::string>()));
    return EvalError("'in' over " + DescribeValue(*b));
  }
  if (op == "+" || op == "-") {
    if (a->is_number_integer() && b->is_number_integer()) {
      return json(op == "+" ? a->get<int64_t>() + b->get<int64_t>()
                            : a->get<int64_t>() - b->get<int64_t>());
    }
    if (a->is_number() && b->is_number()) {
      return json(op == "+" ? a->get<double>() + b->get<double>()
                            : a->get<double>() - b->get<double>());
    }
    if (op == "+" && a->is_string() && b->is_string()) {
      return json(a->get<std::string>() + b->get<std::string>());
    }
    if (op == "+" && a->is_array() && b->is_array()) {
      json out = *a;
      for (const auto& item : *b) out.push_back(item);
      return out;
    }
    return EvalError(
        fmt::format("cannot apply '{}' to {} and {}", op, DescribeValue(*a), DescribeValue(*b)));
  }
  return Compare(op, *a, *b);
}

Result<json> Eval(const CelNode& n, const json& activation) {
  switch (n.kind) {
    case CelNode::Kind::kLiteral:
      return n.value;
    case CelNode::Kind::kIdent: {
      auto it = activation.find(n.name);
      if (it == activation.end()) return EvalError("undeclared reference to '" + n.name + "'");
      return *it;
    }
    case CelNode::Kind::kMember:
    case CelNode::Kind::kIndex:
      return EvalIndex(n, activation);
    case CelNode::Kind::kCall: {
      auto arg = Eval(*n.children[0], activation);
      if (!arg.ok()) return arg;
      return Call(n.name, *arg);
    }
    case CelNode::Kind::kList: {
      json out = json::array();
      for (const auto& c : n.children) {
        auto v = Eval(*c, activation);
        if (!v.ok()) return v;
        out.push_back(std::move(*v));
      }
      return out;
    }
    case CelNode::Kind::kUnary: {
      auto v = Eval(*n.children[0], activation);
      if (!v.ok()) return v;
      if (n.name == "!") {
        if (!v->is_boolean()) return EvalError("'!' of " + DescribeValue(*v));
        return json(!v->get<bool>());
      }
      if (v->is_number_integer()) return json(-v->get<int64_t>());
      if (v->is_number()) return json(-v->get<double>());
      return EvalError("'-' of " + DescribeValue(*v));
    }
    case CelNode::Kind::kBinary:
      break;
  }
  return EvalBinary(n, activation);
}

}  // namespace

Result<CelExpr> ParseCel(std::string_view text) {
  Parser parser(text);
  auto root = parser.ParseAll();
  if (!root.ok()) return root.error();
  CelExpr expr;
  expr.root_ = *root;
  return expr;
}

Result<json> CelExpr::Eval(const json& activation) const {
  if (!root_) return EvalError("empty CEL expression");
  return ir::Eval(*root_, activation);
}

Result<bool> EvalCondition(const CelExpr& expr, const json& parameter_values) {
  json activation = {{"inputs", {{"parameter_values", parameter_values}}}};
  auto v = expr.Eval(activation);
  if (!v.ok()) return v.error();
  if (!v->is_boolean()) return EvalError("condition is " + DescribeValue(*v) + ", not a boolean");
  return v->get<bool>();
}

Result<json> EvalSelector(const CelExpr& expr, const json& value) {
  json activation = {{"string_value", ParameterToString(value)}};
  return expr.Eval(activation);
}

}  // namespace kfpbench::ir
