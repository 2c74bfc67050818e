#include <cstdlib>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report/reporter.h"
#include "results/test_support.h"
#include "util/test_support.h"

namespace kfpbench::report {
namespace {

using results::testing::ReadFile;
using ::testing::HasSubstr;

TEST(JunitReport, OneTestcasePerThresholdPlusScenarioErrors) {
  results::testing::TempDir dir;
  auto r = results::testing::SyntheticResults(1);
  // GetRun's p95 is far above 1ms, the error rate (2.5%) under 5%.
  nlohmann::json thresholds = {{"GetRun", {"p95 < 1ms", "error_rate < 5%"}},
                               {"run_duration", "p99 < 10m"}};
  ASSERT_TRUE(JunitReporter(dir.path() / "junit.xml", thresholds).Report(r).ok());
  std::string xml = ReadFile(dir.path() / "junit.xml");
  EXPECT_TRUE(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites"));
  EXPECT_THAT(xml, HasSubstr("<testsuites name=\"kfpbench\" tests=\"4\" failures=\"2\"")) << xml;
  EXPECT_EQ(testing::CountOf(xml, "<testcase "), 4u);
  EXPECT_EQ(testing::CountOf(xml, "<failure "), 2u);
  EXPECT_THAT(xml, HasSubstr("classname=\"kfpbench.thresholds.GetRun\" name=\"p95 &lt; 1ms\""));
  EXPECT_THAT(xml, HasSubstr("<failure message=\"GetRun p95 &lt; 1ms: observed "));
  EXPECT_THAT(xml, HasSubstr("name=\"scenarios ran without errors\""));
  // hostname is a host; the target's URL is a property.
  EXPECT_THAT(xml, HasSubstr("hostname=\"127.0.0.1\"")) << xml;
  EXPECT_THAT(xml, HasSubstr("<property name=\"target\" value=\"http://127.0.0.1:8888\"/>"));
  // Well-formed, as CI servers' parsers require.
  if (std::system("command -v xmllint >/dev/null 2>&1") == 0) {
    std::string cmd = "xmllint --noout " + (dir.path() / "junit.xml").string();
    EXPECT_EQ(std::system(cmd.c_str()), 0);
  }
}

TEST(JunitReport, UsesTheScenarioThresholdsAndRejectsBadOnes) {
  results::testing::TempDir dir;
  auto r = results::testing::SyntheticResults(2);
  r.errors.clear();
  ASSERT_TRUE(JunitReporter(dir.path() / "a.xml").Report(r).ok());
  std::string xml = ReadFile(dir.path() / "a.xml");
  EXPECT_EQ(testing::CountOf(xml, "<testcase "), 4u);  // 3 in the scenario + scenario errors
  Status s = JunitReporter(dir.path() / "b.xml", {{"GetRun", "p95 <"}}).Report(r);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr("GetRun"));
}

}  // namespace
}  // namespace kfpbench::report
