#include "harness/orchestrate_csv.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kfpbench::harness {
namespace {

using ::testing::HasSubstr;

TEST(OrchestrateCsvTest, ReadsHeaderRowsQuotesCrlfAndSkipsEmptyLines) {
  auto t = ParseCsv(
      "\xEF\xBB\xBFname,note,n\r\n"
      "a,\"x, y\",1\r\n"
      "\r\n"
      "b,\"say \"\"hi\"\"\",2\n"
      "\n"
      "c,\"two\nlines\",3\n"
      "d,,4");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->header, (std::vector<std::string>{"name", "note", "n"}));
  ASSERT_EQ(t->rows.size(), 4u);
  EXPECT_EQ(t->rows[0].cells, (std::vector<std::string>{"a", "x, y", "1"}));
  EXPECT_EQ(t->rows[0].line, 2u);
  EXPECT_EQ(t->rows[1].cells[1], "say \"hi\"");
  EXPECT_EQ(t->rows[1].line, 4u);
  EXPECT_EQ(t->rows[2].cells[1], "two\nlines");
  EXPECT_EQ(t->rows[2].line, 6u);
  EXPECT_EQ(t->rows[3].cells, (std::vector<std::string>{"d", "", "4"}));
  EXPECT_EQ(t->rows[3].line, 8u);
}

TEST(OrchestrateCsvTest, HeaderSpacesAreTrimmedAndAHeaderAloneHasNoRows) {
  auto t = ParseCsv(" lr , epochs\n");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->header, (std::vector<std::string>{"lr", "epochs"}));
  EXPECT_TRUE(t->rows.empty());
  auto late = ParseCsv("\n  \na,b\n1,2\n");
  ASSERT_TRUE(late.ok()) << late.error().message;
  EXPECT_EQ(late->header_line, 3u);
  EXPECT_EQ(late->rows[0].line, 4u);
}

TEST(OrchestrateCsvTest, MalformedCsvNamesTheLine) {
  struct Case {
    std::string text;
    std::string message;
  };
  for (const auto& c : std::vector<Case>{
           {"a,b\n1,2\n3\n", "line 3: 1 field, the header has 2"},
           {"a,b\n1,2,3\n", "line 2: 3 fields, the header has 2"},
           {"a,b\n1,\"2\n\n", "line 2: unterminated quoted field"},
           {"a,b\n1,\"2\"x\n", "line 2: unexpected 'x' after a closing quote"},
           {"a,b\n1,2\"3\n", "line 2: quote inside an unquoted field"},
           {"a,,b\n", "line 1: header column 2 has no name"},
           {"a,a\n", "line 1: header column 2 repeats an earlier column's name"},
           {"", "no header row"},
           {"\n\n", "no header row"},
           {"a,b\n1,2\r3\n", "line 2: carriage return inside a field"},
       }) {
    auto t = ParseCsv(c.text);
    ASSERT_FALSE(t.ok()) << c.text;
    EXPECT_THAT(t.error().message, HasSubstr(c.message)) << c.text << " -> " << t.error().message;
  }
}

TEST(OrchestrateCsvTest, LoadCsvNamesTheFile) {
  auto t = LoadCsv("/nonexistent/runs.csv");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.error().message, HasSubstr("/nonexistent/runs.csv"));
}

}  // namespace
}  // namespace kfpbench::harness
