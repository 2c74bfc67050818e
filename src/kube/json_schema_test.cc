#include "kube/json_schema.h"

#include <gtest/gtest.h>

namespace kfpbench::kube {
namespace {

using nlohmann::json;

const json kSchema = json::parse(R"({
  "type": "object",
  "required": ["name"],
  "additionalProperties": false,
  "properties": {
    "name": {"type": "string", "pattern": "^[a-z]+$"},
    "count": {"type": "integer"},
    "mode": {"type": "string", "enum": ["A", "B"]},
    "tags": {"type": "array", "items": {"type": "string"}},
    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
    "port": {"oneOf": [{"type": "integer"}, {"type": "string"}]},
    "either": {"anyOf": [{"type": "integer"}, {"type": "number"}]},
    "both": {"allOf": [{"type": "number"}, {"type": "integer"}]},
    "maybe": {"type": ["string", "null"]}
  }
})");

TEST(JsonSchema, AcceptsValid) {
  json ok = {{"name", "abc"},          {"count", 3},     {"mode", "B"},   {"tags", {"x", "y"}},
             {"labels", {{"k", "v"}}}, {"port", "http"}, {"either", 1.5}, {"both", 2.0},
             {"maybe", nullptr}};
  EXPECT_TRUE(ValidateJson(kSchema, ok).empty());
}

TEST(JsonSchema, ReportsEachViolationWithPath) {
  json bad = {{"count", "3"},  {"mode", "C"}, {"tags", {"x", 1}}, {"labels", {{"k", 1}}},
              {"extra", true}, {"both", 2.5}, {"maybe", 1},       {"port", true}};
  auto errors = ValidateJson(kSchema, bad);
  auto has = [&](const std::string& s) {
    for (const auto& e : errors) {
      if (e == s) return true;
    }
    ADD_FAILURE() << "missing: " << s << "\nin: " << json(errors).dump(1);
    return false;
  };
  has("$: missing required 'name'");
  has("$.count: expected integer, got string");
  has(R"($.mode: "C" is not one of ["A","B"])");
  has("$.tags[1]: expected string, got number");
  has("$.labels.k: expected string, got number");
  has("$.extra: unknown field");
  has("$.both: expected integer, got number");
  has("$.maybe: expected string or null, got number");
  has("$.port: matches 0 of oneOf, expected 1");
  EXPECT_EQ(errors.size(), 9u);
}

TEST(JsonSchema, PatternOneOfAmbiguityAndRef) {
  EXPECT_EQ(ValidateJson(kSchema, {{"name", "ABC"}}),
            std::vector<std::string>{"$.name: 'ABC' does not match ^[a-z]+$"});
  json two = {{"oneOf", {{{"type", "integer"}}, {{"type", "number"}}}}};
  EXPECT_EQ(ValidateJson(two, 1), std::vector<std::string>{"$: matches 2 of oneOf, expected 1"});
  EXPECT_EQ(ValidateJson({{"$ref", "https://example.com/s.json"}}, 1),
            std::vector<std::string>{
                "$: $ref \"https://example.com/s.json\" is not supported (only local #/... "
                "references)"});
  EXPECT_EQ(ValidateJson({{"$ref", "#/x"}}, 1),
            std::vector<std::string>{"$: $ref \"#/x\" points nowhere in the schema"});
  EXPECT_EQ(ValidateJson(false, 1), std::vector<std::string>{"$: not allowed"});
  EXPECT_TRUE(ValidateJson(true, 1).empty());
  json bad_pattern = {{"pattern", "("}};
  EXPECT_EQ(ValidateJson(bad_pattern, "x").size(), 1u);
}

TEST(JsonSchema, LocalRefsBoundsConditionalsAndNames) {
  json schema = json::parse(R"({
    "$defs": {"rate": {"type": "number", "exclusiveMinimum": 0, "maximum": 100}},
    "type": "object",
    "properties": {
      "rate": {"$ref": "#/$defs/rate"},
      "tags": {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 2}},
      "mix": {"type": "object", "minProperties": 1, "propertyNames": {"enum": ["GetRun"]}},
      "kind": {"const": "stress"}
    },
    "if": {"properties": {"kind": {"const": "stress"}}, "required": ["kind"]},
    "then": {"required": ["rate"]},
    "else": {"required": ["tags"]}
  })");
  EXPECT_TRUE(ValidateJson(schema, json::parse(R"({"kind": "stress", "rate": 100})")).empty());
  EXPECT_TRUE(ValidateJson(schema, json::parse(R"({"tags": ["ab"]})")).empty());
  auto errors = ValidateJson(
      schema, json::parse(R"({"kind": "soak", "rate": 0, "tags": [], "mix": {"GetRuns": 1}})"));
  // In key order, as nlohmann::json keeps objects.
  std::vector<std::string> expected = {
      "$.kind: must be \"stress\"", "$.mix.GetRuns: \"GetRuns\" is not one of [\"GetRun\"]",
      "$.rate: 0 violates exclusiveMinimum 0", "$.tags: fewer than 1 items"};
  EXPECT_EQ(errors, expected);
  EXPECT_EQ(ValidateJson(schema, json::parse(R"({"kind": "stress", "rate": 100.5})")),
            std::vector<std::string>{"$.rate: 100.5 violates maximum 100"});
  EXPECT_EQ(ValidateJson(schema, json::parse(R"({"kind": "stress"})")),
            std::vector<std::string>{"$: missing required 'rate'"});
  EXPECT_EQ(ValidateJson(schema, json::parse(R"({"tags": ["a"], "mix": {}})")),
            (std::vector<std::string>{"$.mix: fewer than 1 fields",
                                      "$.tags[0]: shorter than 2 characters"}));
  json no_stress = json::parse(R"({"not": {"required": ["stress"]}})");
  EXPECT_TRUE(ValidateJson(no_stress, json::object()).empty());
  EXPECT_EQ(ValidateJson(no_stress, json::parse(R"({"stress": 1})")),
            std::vector<std::string>{"$: must not match {\"required\":[\"stress\"]}"});
  // A reference cycle is reported, not followed forever.
  json cycle = json::parse(R"({"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"})");
  EXPECT_EQ(ValidateJson(cycle, 1).size(), 1u);
}

}  // namespace
}  // namespace kfpbench::kube
