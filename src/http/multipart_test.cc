#include "http/multipart.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kfpbench::http {
namespace {

using ::testing::HasSubstr;

TEST(Multipart, BuildThenParseRoundTrips) {
  std::string binary;
  for (int i = 0; i < 256; ++i) binary.push_back(static_cast<char>(i));
  std::vector<FormPart> parts = {
      {"uploadfile", "pipeline.yaml", "application/x-yaml", "a: 1\r\n--not-a-boundary\r\n"},
      {"name", "", "", "my pipeline"},
      {"empty", "", "", ""},
      {"blob", "b.bin", "application/octet-stream", binary},
      {"odd\"name", "x\".yaml", "", "\r\n"}};
  MultipartBody mp = BuildMultipart(parts);
  EXPECT_EQ(mp.content_type.rfind("multipart/form-data; boundary=", 0), 0u);
  auto parsed = ParseMultipart(mp.content_type, mp.body);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  ASSERT_EQ(parsed->size(), parts.size());
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ((*parsed)[i].name, parts[i].name);
    EXPECT_EQ((*parsed)[i].filename, parts[i].filename);
    EXPECT_EQ((*parsed)[i].content_type, parts[i].content_type);
    EXPECT_EQ((*parsed)[i].data, parts[i].data);
  }
  // Quotes cannot appear raw in a quoted header value; browsers send %22.
  EXPECT_EQ((*parsed)[4].name, "odd%22name");
  EXPECT_EQ((*parsed)[4].filename, "x%22.yaml");
  EXPECT_EQ((*parsed)[4].data, "\r\n");
}

TEST(Multipart, BoundariesAreRandom) {
  EXPECT_NE(BuildMultipart({}).content_type, BuildMultipart({}).content_type);
}

TEST(Multipart, ParsesWhatCurlSends) {
  // Quoted boundary, preamble, header names in odd case, extra parameters.
  std::string body =
      "preamble to ignore\r\n"
      "--XyZ\r\n"
      "content-disposition: form-data; name=\"uploadfile\"; filename=\"x.yaml\"\r\n"
      "CONTENT-TYPE: application/octet-stream\r\n"
      "\r\n"
      "pipelineInfo:\n  name: x\n"
      "\r\n--XyZ--\r\n"
      "epilogue";
  auto parts = ParseMultipart("Multipart/Form-Data; charset=utf-8; boundary=\"XyZ\"", body);
  ASSERT_TRUE(parts.ok()) << parts.error().message;
  ASSERT_EQ(parts->size(), 1u);
  EXPECT_EQ((*parts)[0].name, "uploadfile");
  EXPECT_EQ((*parts)[0].filename, "x.yaml");
  EXPECT_EQ((*parts)[0].content_type, "application/octet-stream");
  EXPECT_EQ((*parts)[0].data, "pipelineInfo:\n  name: x\n");
}

TEST(Multipart, AcceptsBareLineFeedsAndExtendedFilename) {
  std::string body =
      "--b\n"
      "Content-Disposition: form-data; name=f; filename*=UTF-8''%E2%82%AC.yaml\n"
      "\n"
      "data\n"
      "--b--\n";
  auto parts = ParseMultipart("multipart/form-data; boundary=b", body);
  ASSERT_TRUE(parts.ok()) << parts.error().message;
  ASSERT_EQ(parts->size(), 1u);
  EXPECT_EQ((*parts)[0].name, "f");
  EXPECT_EQ((*parts)[0].filename, "\xe2\x82\xac.yaml");
  EXPECT_EQ((*parts)[0].data, "data");
}

TEST(Multipart, BoundaryTextInsideDataIsNotADelimiter) {
  // "--b" followed by other characters, or not at a line start, is data.
  std::string body =
      "--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n"
      "x--b\r\n--bc\r\n"
      "\r\n--b--";
  auto parts = ParseMultipart("multipart/form-data; boundary=b", body);
  ASSERT_TRUE(parts.ok()) << parts.error().message;
  ASSERT_EQ(parts->size(), 1u);
  EXPECT_EQ((*parts)[0].data, "x--b\r\n--bc\r\n");
}

TEST(Multipart, ReportsWhatIsWrong) {
  const std::string ct = "multipart/form-data; boundary=b";
  struct Case {
    std::string content_type;
    std::string body;
    const char* why;
  };
  const std::string head = "--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n";
  for (const Case& c : {
           Case{"multipart/form-data", "", "no boundary"},
           Case{"multipart/form-data; boundary=", "", "no boundary"},
           Case{"application/json", "", "not multipart"},
           Case{"multipart/form-data; boundary=\"b", "", "unterminated"},
           Case{"multipart/form-data; boundary=" + std::string(71, 'x'), "", "longer than 70"},
           Case{ct, "no delimiter at all", "no opening boundary"},
           Case{ct, head + "data without end", "truncated"},
           Case{ct, head + "data\r\n--b", "truncated"},
           Case{ct, "--b\r\nContent-Disposition: form-data; name=\"a\"\r\n", "truncated"},
           Case{ct, "--b\r\nno colon here\r\n\r\nx\r\n--b--", "malformed header"},
           Case{ct, "--b\r\n: empty name\r\n\r\nx\r\n--b--", "malformed header"},
           Case{ct, "--b\r\n folded first\r\n\r\nx\r\n--b--", "malformed header"},
           Case{ct, "--b\r\nContent-Type: text/plain\r\n\r\nx\r\n--b--", "no Content-Disposition"},
           Case{ct, "--b\r\nContent-Disposition: attachment; name=a\r\n\r\nx\r\n--b--",
                "not form-data"},
           Case{ct, "--b\r\nContent-Disposition: form-data; name=\"a\r\n\r\nx\r\n--b--",
                "Content-Disposition"},
           Case{ct, "--b junk\r\n", "malformed boundary line"},
       }) {
    auto parts = ParseMultipart(c.content_type, c.body);
    ASSERT_FALSE(parts.ok()) << c.body;
    EXPECT_THAT(parts.error().message, HasSubstr(c.why))
        << "got: " << parts.error().message << " want: " << c.why;
  }
}

TEST(Multipart, EmptyFormIsFine) {
  auto parts = ParseMultipart("multipart/form-data; boundary=b", "--b--\r\n");
  ASSERT_TRUE(parts.ok());
  EXPECT_TRUE(parts->empty());
}

}  // namespace
}  // namespace kfpbench::http
