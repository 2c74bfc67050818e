#include "ir/cel.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "util/strings.h"

namespace kfpbench::ir {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

bool Cond(const std::string& expr, const json& values) {
  auto parsed = ParseCel(expr);
  EXPECT_TRUE(parsed.ok()) << parsed.error().message;
  auto v = EvalCondition(*parsed, values);
  EXPECT_TRUE(v.ok()) << v.error().message;
  return v.ok() && *v;
}

TEST(Cel, EvaluatesCompilerConditions) {
  json values = {{"pipelinechannel--flip-coin-Output", "heads"},
                 {"pipelinechannel--random-num-Output", 7},
                 {"pipelinechannel--s", "12"},
                 {"pipelinechannel--f", 2.5},
                 {"pipelinechannel--b", true}};
  EXPECT_TRUE(
      Cond("inputs.parameter_values['pipelinechannel--flip-coin-Output'] == 'heads'", values));
  EXPECT_FALSE(
      Cond("inputs.parameter_values['pipelinechannel--flip-coin-Output'] == 'tails'", values));
  EXPECT_TRUE(
      Cond("int(inputs.parameter_values['pipelinechannel--random-num-Output']) > 5", values));
  EXPECT_FALSE(
      Cond("int(inputs.parameter_values['pipelinechannel--random-num-Output']) <= 5", values));
  EXPECT_TRUE(Cond("int(inputs.parameter_values['pipelinechannel--s']) >= 12", values));
  EXPECT_TRUE(Cond("double(inputs.parameter_values['pipelinechannel--f']) < 3.0", values));
  EXPECT_TRUE(Cond("inputs.parameter_values['pipelinechannel--b'] == true", values));
  EXPECT_TRUE(
      Cond("!(inputs.parameter_values['pipelinechannel--flip-coin-Output'] == 'tails') && "
           "inputs.parameter_values['pipelinechannel--random-num-Output'] != 3",
           values));
  EXPECT_TRUE(
      Cond("inputs.parameter_values['pipelinechannel--flip-coin-Output'] == 'x' || "
           "inputs.parameter_values[\"pipelinechannel--random-num-Output\"] == 7",
           values));
  EXPECT_TRUE(Cond("inputs.parameter_values['pipelinechannel--random-num-Output'] == 7.0", values));
  EXPECT_TRUE(Cond("'heads' in ['heads', 'tails']", values));
}

TEST(Cel, ReportsErrors) {
  EXPECT_FALSE(ParseCel("a ==").ok());
  EXPECT_FALSE(ParseCel("foo(1)").ok());
  EXPECT_FALSE(ParseCel("(a").ok());
  EXPECT_FALSE(ParseCel("'abc").ok());
  auto expr = ParseCel("inputs.parameter_values['missing'] == 1");
  ASSERT_TRUE(expr.ok());
  auto v = EvalCondition(*expr, json::object());
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(v.error().message, HasSubstr("missing"));
  auto cmp = ParseCel("'a' < 1");
  ASSERT_TRUE(cmp.ok());
  EXPECT_FALSE(EvalCondition(*cmp, json::object()).ok());
  auto not_bool = ParseCel("1 + 2");
  ASSERT_TRUE(not_bool.ok());
  EXPECT_FALSE(EvalCondition(*not_bool, json::object()).ok());
}

// Found by the cel fuzz target: indexing with a key that is not UTF-8 threw
// from the error message's JSON dump and would have ended the server's
// engine thread. It is an error like any other bad index.
TEST(Cel, AKeyThatIsNotUtf8IsAnErrorNotAThrow) {
  auto expr =
      ParseCel(std::string("''['\0\0\0\xc8"
                           "00']",
                           12));
  ASSERT_TRUE(expr.ok()) << expr.error().message;
  auto v = EvalSelector(*expr, json::object());
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(v.error().message, HasSubstr("cannot index string"));
  auto from_value = ParseCel("inputs.parameter_values['list'][inputs.parameter_values['key']]");
  ASSERT_TRUE(from_value.ok());
  json values = {{"list", json::array({1})}, {"key", "\xff"}};
  auto bad_key = EvalCondition(*from_value, values);
  ASSERT_FALSE(bad_key.ok());
  EXPECT_TRUE(IsValidUtf8(bad_key.error().message)) << bad_key.error().message;
}

// Found by the cel fuzz target (590 bytes of '[' overflowed the stack of the
// sanitizer build): nesting and operator chains are bounded, and what is
// refused says why.
TEST(Cel, DeepNestingAndLongChainsAreRefusedNotOverflowed) {
  for (std::string deep : {std::string(100000, '['), std::string(100000, '(') + "1",
                           std::string(100000, '!') + "true", std::string(100000, '-') + "1"}) {
    auto e = ParseCel(deep);
    ASSERT_FALSE(e.ok());
    EXPECT_THAT(e.error().message, HasSubstr("nested more than 100 levels deep"))
        << e.error().message.substr(e.error().message.size() - 80);
  }
  std::string chain = "1";
  for (int i = 0; i < 5000; ++i) chain += " + 1";
  auto long_chain = ParseCel(chain);
  ASSERT_FALSE(long_chain.ok());
  EXPECT_THAT(long_chain.error().message, HasSubstr("more than 200 operations deep"));
  std::string selectors = "a";
  for (int i = 0; i < 5000; ++i) selectors += ".b";
  EXPECT_FALSE(ParseCel(selectors).ok());

  // Within the bounds, both still work: 99 nested lists, a chain of 199.
  auto nested = ParseCel(std::string(99, '[') + "7" + std::string(99, ']'));
  ASSERT_TRUE(nested.ok()) << nested.error().message;
  std::string sum = "1";
  for (int i = 0; i < 198; ++i) sum += " + 1";
  auto added = ParseCel(sum + " == 199");
  ASSERT_TRUE(added.ok()) << added.error().message;
  auto v = EvalCondition(*added, json::object());
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_TRUE(*v);
}

TEST(Cel, EvaluatesSelectors) {
  auto expr = ParseCel("parseJson(string_value)[\"A_a\"]");
  ASSERT_TRUE(expr.ok());
  auto v = EvalSelector(*expr, json{{"A_a", "1"}, {"B_b", "2"}});
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(*v, json("1"));
  // The value may also arrive as JSON text.
  v = EvalSelector(*expr, json(R"({"A_a": 10})"));
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, json(10));
  auto index = ParseCel("parseJson(string_value)[1]");
  ASSERT_TRUE(index.ok());
  EXPECT_EQ(*EvalSelector(*index, json::array({"x", "y"})), json("y"));
}

}  // namespace
}  // namespace kfpbench::ir
