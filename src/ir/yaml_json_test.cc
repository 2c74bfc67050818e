// YAML -> JSON (yaml_json.cc): scalar typing, errors with their line, and
// the limits that keep a hostile upload from exhausting memory or the stack.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/pipeline_spec.h"
#include "ir/test_support.h"

namespace kfpbench::ir {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

TEST(YamlToJson, KeepsScalarTypes) {
  auto docs = YamlToJson(R"(
int: 42
neg: -7
hex: 0x1f
float: 200.0
exp: 1.0e-05
bool: true
null1: ~
null2:
quoted_int: '42'
dquoted: "true"
version: 2.1.0
dotted: 20231101.en
block: |
  123
tagged: !!str 5
list: [1, 'a', 2.5]
big: 123456789012345678901234
)");
  ASSERT_TRUE(docs.ok()) << docs.error().message;
  const json& j = (*docs)[0];
  EXPECT_TRUE(j["int"].is_number_integer());
  EXPECT_EQ(j["int"], 42);
  EXPECT_EQ(j["neg"], -7);
  EXPECT_EQ(j["hex"], 31);
  EXPECT_TRUE(j["float"].is_number_float());
  EXPECT_DOUBLE_EQ(j["exp"].get<double>(), 1e-5);
  EXPECT_EQ(j["bool"], true);
  EXPECT_TRUE(j["null1"].is_null());
  EXPECT_TRUE(j["null2"].is_null());
  EXPECT_EQ(j["quoted_int"], "42");
  EXPECT_EQ(j["dquoted"], "true");
  EXPECT_EQ(j["version"], "2.1.0");
  EXPECT_EQ(j["dotted"], "20231101.en");
  EXPECT_EQ(j["block"], "123\n");
  EXPECT_EQ(j["tagged"], "5");
  EXPECT_EQ(j["list"], json::parse(R"([1, "a", 2.5])"));
  EXPECT_TRUE(j["big"].is_number_float());
}

TEST(YamlToJson, ReportsLineOfSyntaxError) {
  auto docs = YamlToJson("a: 1\nb: [1,\nc: 2\n");
  ASSERT_FALSE(docs.ok());
  EXPECT_THAT(docs.error().message, HasSubstr("invalid YAML at line")) << docs.error().message;
  // An unclosed '[' first reads as a key that is not a scalar: the syntax
  // error is what is said.
  for (const char* unclosed : {"[1, 2", "pools: [{cpu: 4"}) {
    auto refused = YamlToJson(unclosed);
    ASSERT_FALSE(refused.ok()) << unclosed;
    EXPECT_THAT(refused.error().message, HasSubstr("invalid YAML at line")) << unclosed;
  }
  auto spec = ParsePipelineSpec("pipelineInfo:\n  name: x\n   bad: indent\n");
  ASSERT_FALSE(spec.ok());
  EXPECT_THAT(spec.error().message, HasSubstr("line 3")) << spec.error().message;
  EXPECT_EQ(spec.error().code, 400);
}

// Issue #13, item 1: a 307-byte upload of nested aliases aborted the server
// with bad_alloc; ten levels grew it to 24 GB.
TEST(YamlLimits, AliasBombsAndDeepNestingAreRefusedNotExpanded) {
  auto docs = YamlToJson(ir::testing::YamlAliasBomb());
  ASSERT_FALSE(docs.ok());
  EXPECT_THAT(docs.error().message, HasSubstr("alias")) << docs.error().message;
  EXPECT_EQ(docs.error().code, 400);

  std::string deep = std::string(300, '[') + std::string(300, ']');
  auto nested = YamlToJson(deep);
  ASSERT_FALSE(nested.ok());
  EXPECT_THAT(nested.error().message, HasSubstr("deep")) << nested.error().message;

  std::string deeper = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_FALSE(YamlToJson(deeper).ok());  // an error, not a stack overflow

  auto fine = YamlToJson("a: &a [1, 2]\nb: [*a, *a]\n");  // aliases within reason still work
  ASSERT_TRUE(fine.ok()) << fine.error().message;
  EXPECT_EQ((*fine)[0]["b"], nlohmann::json::parse("[[1, 2], [1, 2]]"));
}

// Found by the ir_pipeline fuzz target: yaml-cpp's LoadAll never returns, and
// allocates an empty document per turn, when a document starts with ','.
TEST(YamlLimits, ADocumentThatCannotStartIsAnErrorNotAnEndlessLoop) {
  for (const char* text : {",", ",# Outputs:", "---\n,", "a: 1\n---\n&x , b"}) {
    auto docs = YamlToJson(text);
    ASSERT_FALSE(docs.ok()) << text;
    EXPECT_THAT(docs.error().message, HasSubstr("unexpected ','")) << docs.error().message;
    EXPECT_EQ(docs.error().code, 400);
  }
  auto at = YamlToJson("a: 1\n---\n,");
  ASSERT_FALSE(at.ok());
  EXPECT_THAT(at.error().message, HasSubstr("line 3, column 1")) << at.error().message;

  // Empty documents, each consuming its marker, are not mistaken for a stall.
  auto empties = YamlToJson("---\n---\n---\na: 1\n...\n");
  ASSERT_TRUE(empties.ok()) << empties.error().message;
  EXPECT_EQ(empties->size(), 3u);
  EXPECT_EQ(empties->back()["a"], 1);
}

TEST(YamlToJson, KeysAnchorsAndAliases) {
  auto docs = YamlToJson(R"(
&k 5: first
b: *k
c: &m {x: 1}
d: *m
*k : again
a: 1
a: 2
)");
  ASSERT_TRUE(docs.ok()) << docs.error().message;
  const json& j = (*docs)[0];
  EXPECT_EQ(j["5"], "again");  // an alias of a scalar is a key; the last duplicate wins
  EXPECT_EQ(j["b"], 5);        // the anchored key keeps its type where it is a value
  EXPECT_EQ(j["d"], json::parse(R"({"x": 1})"));
  EXPECT_EQ(j["a"], 2);

  for (const char* bad : {"[1]: x", "{a: 1}: x", "a: &m {x: 1}\n*m : y", "~: x"}) {
    auto refused = YamlToJson(bad);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_THAT(refused.error().message, HasSubstr("keys must be scalars"))
        << refused.error().message;
  }
  // Anchors belong to their document.
  EXPECT_FALSE(YamlToJson("a: &x 1\n---\nb: *x\n").ok());
}

// A configuration is read in the config dialect: scalars as written, keys in
// the order written, the typed keys' values as YamlToJson types them.
TEST(YamlToTextJson, KeepsTextAndOrderAndTypesOnlyWhatIsAskedFor) {
  constexpr std::string_view kTyped[] = {"parameters"};
  auto tree = YamlToTextJson(R"(
zeta: 0.010
alpha: [true, '5', 500m, !!int 7]
empty:
mid: {b: 1, a: ~}
parameters: {lr: 0.010, on: true, name: '5', list: [1, x]}
)",
                             kTyped);
  ASSERT_TRUE(tree.ok()) << tree.error().message;
  const TextTree& t = *tree;
  std::vector<std::string> keys;
  for (const auto& kv : t.items()) keys.push_back(kv.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"zeta", "alpha", "empty", "mid", "parameters"}));
  EXPECT_EQ(t["zeta"], "0.010");
  EXPECT_EQ(t["alpha"], TextTree::parse(R"(["true", "5", "500m", "7"])"));
  EXPECT_TRUE(t["empty"].is_null());
  EXPECT_EQ(t["mid"].begin().key(), "b");
  EXPECT_TRUE(t["mid"]["a"].is_null());
  EXPECT_EQ(t["parameters"]["lr"], 0.01);
  EXPECT_EQ(t["parameters"]["on"], true);
  EXPECT_EQ(t["parameters"]["name"], "5");
  EXPECT_EQ(t["parameters"]["list"], TextTree::parse(R"([1, "x"])"));

  // Without typed keys nothing is typed; anchors and aliases keep their text.
  auto plain = YamlToTextJson("a: &n 1.50\nb: *n\nparameters: {x: 1}\n");
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ((*plain)["b"], "1.50");
  EXPECT_EQ((*plain)["parameters"]["x"], "1");
}

TEST(YamlToTextJson, OneDocumentBoundedLikeEveryYamlRead) {
  auto blank = YamlToTextJson("");
  ASSERT_TRUE(blank.ok());
  EXPECT_TRUE(blank->is_null());
  auto marked = YamlToTextJson("---\na: 1\n...\n---\n");
  ASSERT_TRUE(marked.ok()) << marked.error().message;
  EXPECT_EQ((*marked)["a"], "1");

  auto two = YamlToTextJson("a: 1\n---\nb: 2\n");
  ASSERT_FALSE(two.ok());
  EXPECT_THAT(two.error().message, HasSubstr("2 YAML documents")) << two.error().message;
  // The second document is read, not ignored as YAML::Load would.
  auto broken = YamlToTextJson("a: 1\n---\nb: [\n");
  ASSERT_FALSE(broken.ok());
  EXPECT_THAT(broken.error().message, HasSubstr("invalid YAML at line")) << broken.error().message;

  auto deep = YamlToTextJson("a: " + std::string(100000, '[') + std::string(100000, ']'));
  ASSERT_FALSE(deep.ok());
  EXPECT_THAT(deep.error().message, HasSubstr("deep")) << deep.error().message;
}

}  // namespace
}  // namespace kfpbench::ir
