#include "harness/orchestrate_params.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/orchestrate.h"

namespace kfpbench::harness {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

ir::PipelineSpec Spec() {
  auto spec = ir::ParsePipelineSpec(R"(
components:
  comp-a: {executorLabel: exec-a}
deploymentSpec:
  executors:
    exec-a: {container: {image: x, command: [kfpbench, step]}}
pipelineInfo: {name: typed}
root:
  inputDefinitions:
    parameters:
      name: {parameterType: STRING}
      epochs: {parameterType: NUMBER_INTEGER, defaultValue: 1, isOptional: true}
      lr: {parameterType: NUMBER_DOUBLE, defaultValue: 0.1, isOptional: true}
      shuffle: {parameterType: BOOLEAN, defaultValue: false, isOptional: true}
      layers: {parameterType: LIST, defaultValue: [], isOptional: true}
      opts: {parameterType: STRUCT, defaultValue: {}, isOptional: true}
  dag:
    tasks:
      a: {componentRef: {name: comp-a}, taskInfo: {name: a}}
schemaVersion: 2.1.0
)");
  EXPECT_TRUE(spec.ok()) << (spec.ok() ? "" : spec.error().message);
  return *spec;
}

TEST(OrchestrateParamsTest, TypesEachValueByTheInputDefinition) {
  auto p = TypedParameters(Spec(), {{"name", "x"},
                                    {"epochs", " 3 "},
                                    {"lr", "1e-3"},
                                    {"shuffle", "TRUE"},
                                    {"layers", "[1, 2]"},
                                    {"opts", R"({"k": "v"})"}});
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ((*p)["name"], "x");
  EXPECT_TRUE((*p)["epochs"].is_number_integer());
  EXPECT_EQ((*p)["epochs"], 3);
  EXPECT_DOUBLE_EQ((*p)["lr"].get<double>(), 0.001);
  EXPECT_EQ((*p)["shuffle"], true);
  EXPECT_EQ((*p)["layers"], nlohmann::json::array({1, 2}));
  EXPECT_EQ((*p)["opts"]["k"], "v");
}

TEST(OrchestrateParamsTest, EmptyValueLeavesTheDefaultButARequiredInputMustBeGiven) {
  auto p = TypedParameters(Spec(), {{"name", "x"}, {"epochs", ""}});
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_FALSE(p->contains("epochs"));
  auto missing = TypedParameters(Spec(), {{"epochs", "2"}});
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr("required parameter 'name'"));
}

TEST(OrchestrateParamsTest, BadValuesAndUnknownNamesAreErrors) {
  struct Case {
    std::string name, value, message;
  };
  for (const auto& c : std::vector<Case>{
           {"epochs", "three", "parameter 'epochs': expected an integer"},
           {"epochs", "2.5", "expected an integer"},
           {"lr", "fast", "expected a number"},
           {"shuffle", "yes", "expected true or false"},
           {"layers", "{}", "expected a JSON array"},
           {"opts", "[", "expected a JSON object"},
           {"batch", "3", "no input parameter 'batch' (it declares: epochs, layers, lr, name"},
       }) {
    auto p = TypedParameters(Spec(), {{"name", "x"}, {c.name, c.value}});
    ASSERT_FALSE(p.ok()) << c.name << "=" << c.value;
    EXPECT_THAT(p.error().message, HasSubstr(c.message)) << p.error().message;
  }
}

TEST(OrchestrateParamsTest, SplitAssignmentsNeedsNameAndEquals) {
  auto ok = SplitAssignments({"a=1", "b==2", "c="});
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ((*ok)[1].second, "=2");
  EXPECT_EQ((*ok)[2].second, "");
  EXPECT_FALSE(SplitAssignments({"a"}).ok());
  EXPECT_FALSE(SplitAssignments({"=1"}).ok());
}

TEST(OrchestrateParamsTest, RowsAreTypedWithLineAndColumnInErrors) {
  auto table = ParseCsv("name,epochs\nx,1\ny,two\n");
  ASSERT_TRUE(table.ok());
  auto rows = TypeRows(*table, Spec(), "runs.csv");
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.error().message,
            "runs.csv: line 3, column 'epochs': expected an integer (NUMBER_INTEGER), got 'two'");

  auto unknown = ParseCsv("name,batch\nx,1\n");
  auto bad = TypeRows(*unknown, Spec(), "runs.csv");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(
      bad.error().message,
      HasSubstr("runs.csv: line 1, column 2: its name is not an input parameter of the pipeline"))
      << bad.error().message;
  // Issue #35: a CSV named by mistake (/etc/shadow) had its first line
  // printed; an unknown column is named by its number alone.
  auto secret = ParseCsv("root:$6$secret:19000:0:99999:7:::\n");
  ASSERT_TRUE(secret.ok());
  auto refused = TypeRows(*secret, Spec(), "shadow");
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error().message, Not(HasSubstr("secret"))) << refused.error().message;

  auto good = ParseCsv("name,epochs,shuffle\nx,1,true\ny,,false\n");
  auto typed = TypeRows(*good, Spec(), "runs.csv");
  ASSERT_TRUE(typed.ok()) << typed.error().message;
  ASSERT_EQ(typed->size(), 2u);
  EXPECT_EQ((*typed)[0].parameters,
            (nlohmann::json{{"name", "x"}, {"epochs", 1}, {"shuffle", true}}));
  EXPECT_EQ((*typed)[1].parameters, (nlohmann::json{{"name", "y"}, {"shuffle", false}}));
  EXPECT_EQ((*typed)[1].line, 3u);
}

TEST(OrchestrateParamsTest, AnOffsetColumnSchedulesRowsUnlessThePipelineDeclaresIt) {
  auto table = ParseCsv("offset,name\n0s,a\n1m30s,b\n2.5,c\n");
  ASSERT_TRUE(table.ok());
  auto rows = TypeRows(*table, Spec(), "runs.csv");
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[1].offset, std::chrono::seconds(90));
  EXPECT_EQ((*rows)[2].offset, std::chrono::milliseconds(2500));
  EXPECT_EQ((*rows)[2].parameters, (nlohmann::json{{"name", "c"}}));
  auto bad = ParseCsv("offset,name\nsoon,a\n");
  auto typed = TypeRows(*bad, Spec(), "runs.csv");
  ASSERT_FALSE(typed.ok());
  EXPECT_THAT(typed.error().message,
              HasSubstr("runs.csv: line 2, column 'offset': expected a start offset"))
      << typed.error().message;
  auto negative = ParseCsv("offset,name\n-1,a\n");
  EXPECT_FALSE(TypeRows(*negative, Spec(), "runs.csv").ok());
}

TEST(OrchestrateParamsTest, RatesAreRunsPerMinute) {
  EXPECT_DOUBLE_EQ(*ParseRate("30"), 30);
  EXPECT_DOUBLE_EQ(*ParseRate("30/m"), 30);
  EXPECT_DOUBLE_EQ(*ParseRate("0.5/s"), 30);
  EXPECT_DOUBLE_EQ(*ParseRate("120/h"), 2);
  EXPECT_FALSE(ParseRate("0").ok());
  EXPECT_FALSE(ParseRate("fast").ok());
  EXPECT_FALSE(ParseRate("-1/s").ok());
}

}  // namespace
}  // namespace kfpbench::harness
