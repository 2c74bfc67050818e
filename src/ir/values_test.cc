#include "ir/values.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kfpbench::ir {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

TEST(Values, StringForms) {
  EXPECT_EQ(ParameterToString(json("abc")), "abc");
  EXPECT_EQ(ParameterToString(json(3)), "3");
  EXPECT_EQ(ParameterToString(json(2.5)), "2.5");
  EXPECT_EQ(ParameterToString(json(true)), "true");
  EXPECT_EQ(ParameterToString(json::parse(R"(["a",1])")), R"(["a",1])");
  EXPECT_EQ(ParameterToString(json::parse(R"({"k":1})")), R"({"k":1})");
}

TEST(Values, StrictCheck) {
  EXPECT_EQ(*CheckParameterValue(json(200.0), ParameterType::kNumberInteger), json(200));
  EXPECT_TRUE(CheckParameterValue(json(200.0), ParameterType::kNumberInteger)->is_number_integer());
  EXPECT_FALSE(CheckParameterValue(json(2.5), ParameterType::kNumberInteger).ok());
  EXPECT_FALSE(CheckParameterValue(json("3"), ParameterType::kNumberInteger).ok());
  EXPECT_TRUE(CheckParameterValue(json(3), ParameterType::kNumberDouble)->is_number_float());
  EXPECT_FALSE(CheckParameterValue(json(3), ParameterType::kString).ok());
  EXPECT_FALSE(CheckParameterValue(json("x"), ParameterType::kList).ok());
  EXPECT_TRUE(CheckParameterValue(json::array(), ParameterType::kList).ok());
  EXPECT_TRUE(CheckParameterValue(json::object(), ParameterType::kStruct).ok());
  auto err = CheckParameterValue(json("3"), ParameterType::kNumberInteger);
  EXPECT_EQ(err.error().message, "expected NUMBER_INTEGER, got string \"3\"");
}

// Found by fuzzing: describing a string that is not UTF-8 threw from dump().
TEST(Values, DescribesTextThatIsNotUtf8) {
  auto err = CheckParameterValue(json("ech\x83o"), ParameterType::kNumberInteger);
  ASSERT_FALSE(err.ok());
  EXPECT_THAT(err.error().message, HasSubstr("got string \"ech")) << err.error().message;
}

TEST(Values, LenientCoercion) {
  EXPECT_EQ(*CoerceParameterValue(json("3"), ParameterType::kNumberInteger), json(3));
  EXPECT_EQ(*CoerceParameterValue(json(3), ParameterType::kString), json("3"));
  EXPECT_EQ(*CoerceParameterValue(json("[1,2]"), ParameterType::kList), json::parse("[1,2]"));
  EXPECT_EQ(*CoerceParameterValue(json::parse(R"({"a":1})"), ParameterType::kString),
            json(R"({"a":1})"));
  EXPECT_FALSE(CoerceParameterValue(json("x"), ParameterType::kNumberDouble).ok());
}

TEST(Values, ParsesOutputsByType) {
  EXPECT_EQ(*ParseOutputParameter("42\n", ParameterType::kNumberInteger), json(42));
  EXPECT_EQ(*ParseOutputParameter("42.0", ParameterType::kNumberInteger), json(42));
  EXPECT_FALSE(ParseOutputParameter("4.5", ParameterType::kNumberInteger).ok());
  EXPECT_DOUBLE_EQ(ParseOutputParameter(" 2.5 ", ParameterType::kNumberDouble)->get<double>(), 2.5);
  EXPECT_EQ(*ParseOutputParameter("True", ParameterType::kBoolean), json(true));
  EXPECT_EQ(*ParseOutputParameter("false\n", ParameterType::kBoolean), json(false));
  EXPECT_FALSE(ParseOutputParameter("maybe", ParameterType::kBoolean).ok());
  EXPECT_EQ(*ParseOutputParameter("[1, \"a\"]", ParameterType::kList), json::parse(R"([1,"a"])"));
  EXPECT_EQ(*ParseOutputParameter(R"({"a": 1})", ParameterType::kStruct),
            json::parse(R"({"a":1})"));
  EXPECT_FALSE(ParseOutputParameter("{", ParameterType::kStruct).ok());
  EXPECT_FALSE(ParseOutputParameter("{}", ParameterType::kList).ok());
  EXPECT_EQ(*ParseOutputParameter("hello\n", ParameterType::kString), json("hello\n"));
}

}  // namespace
}  // namespace kfpbench::ir
