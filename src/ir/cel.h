// The subset of CEL (Common Expression Language) the KFP compiler emits:
// trigger conditions such as
//   int(inputs.parameter_values['pipelinechannel--n']) > 5 && !(... == 'heads')
// and parameter expression selectors such as parseJson(string_value)["A_a"].
//
// Supported: literals (strings, ints, doubles, true/false/null, [lists]),
// identifiers and member/index access into a JSON activation, ! - unary,
// == != < <= > >= in, && ||, + for numbers/strings/lists, parentheses, and the
// functions int(), double(), string(), bool(), size(), parseJson().
#pragma once

#include <memory>
#include <string_view>

#include <nlohmann/json.hpp>

#include "util/result.h"

namespace kfpbench::ir {

struct CelNode;

// A parsed expression; cheap to copy, safe to share between runs.
class CelExpr {
 public:
  CelExpr() = default;
  // Evaluates against `activation`, a JSON object whose keys are the
  // top-level identifiers (e.g. {"inputs": {"parameter_values": {...}}}).
  Result<nlohmann::json> Eval(const nlohmann::json& activation) const;
  bool empty() const { return root_ == nullptr; }

 private:
  friend Result<CelExpr> ParseCel(std::string_view text);
  std::shared_ptr<const CelNode> root_;
};

Result<CelExpr> ParseCel(std::string_view text);

// A triggerPolicy.condition against a task's resolved input parameter values.
Result<bool> EvalCondition(const CelExpr& expr, const nlohmann::json& parameter_values);

// A parameterExpressionSelector applied to `value` (bound as `string_value`,
// in its string form).
Result<nlohmann::json> EvalSelector(const CelExpr& expr, const nlohmann::json& value);

}  // namespace kfpbench::ir
