#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "util/ids.h"
#include "util/result.h"
#include "util/secrets.h"
#include "util/strings.h"
#include "util/time.h"

namespace kfpbench {
namespace {

using ::testing::HasSubstr;

TEST(Durations, FromSecondsSaturatesInsteadOfOverflowing) {
  EXPECT_EQ(FromSeconds(1e300), Duration::max());
  EXPECT_EQ(FromSeconds(-1e300), Duration::min());
  EXPECT_EQ(FromSeconds(std::numeric_limits<double>::infinity()), Duration::max());
  EXPECT_EQ(FromSeconds(std::nan("")), Duration::zero());
  EXPECT_EQ(FromSeconds(1.5), std::chrono::milliseconds(1500));
}

TEST(Rfc3339, FormatsUtcWithTrimmedFraction) {
  WallTime t = WallTime(std::chrono::seconds(1700000000)) + std::chrono::milliseconds(120);
  EXPECT_EQ(FormatRfc3339(t), "2023-11-14T22:13:20.12Z");
  EXPECT_EQ(FormatRfc3339(WallTime(std::chrono::seconds(0))), "1970-01-01T00:00:00Z");
}

TEST(Rfc3339, RoundTripsAndHonoursOffsets) {
  auto a = ParseRfc3339("2023-11-14T22:13:20.12Z");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(FormatRfc3339(*a), "2023-11-14T22:13:20.12Z");
  auto b = ParseRfc3339("2023-11-14T23:13:20.12+01:00");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*a, *b);
}

TEST(Rfc3339, RejectsGarbage) {
  for (const char* s : {"", "2023-11-14", "2023-13-01T00:00:00Z", "2023-11-14T22:13:20",
                        "2023-11-14T22:13:20.Z", "2023-02-30T00:00:00Z", "x023-11-14T22:13:20Z"}) {
    EXPECT_FALSE(ParseRfc3339(s).ok()) << s;
  }
}

// Found by fuzzing: year 9999 overflowed the 64-bit nanosecond clock (UBSan).
TEST(Rfc3339, RefusesYearsTheClockCannotHold) {
  EXPECT_TRUE(ParseRfc3339("2261-12-31T23:59:59Z").ok());
  EXPECT_TRUE(ParseRfc3339("1678-01-01T00:00:00Z").ok());
  for (const char* s : {"9999-12-31T23:59:59Z", "0001-01-01T00:00:00Z", "2262-04-12T00:00:00Z"}) {
    auto t = ParseRfc3339(s);
    ASSERT_FALSE(t.ok()) << s;
    EXPECT_THAT(t.error().message, HasSubstr("out of range")) << t.error().message;
  }
}

TEST(Duration, ParsesUnitsAndCompounds) {
  EXPECT_EQ(*ParseDuration("250ms"), std::chrono::milliseconds(250));
  EXPECT_EQ(*ParseDuration("30s"), std::chrono::seconds(30));
  EXPECT_EQ(*ParseDuration("5m"), std::chrono::minutes(5));
  EXPECT_EQ(*ParseDuration("1h"), std::chrono::hours(1));
  EXPECT_EQ(*ParseDuration("2m30s"), std::chrono::seconds(150));
  EXPECT_EQ(*ParseDuration("1.5s"), std::chrono::milliseconds(1500));
}

TEST(Duration, RejectsBadText) {
  for (const char* s : {"", "5", "s", "5x", "-1s", "1..2s"}) {
    EXPECT_FALSE(ParseDuration(s).ok()) << s;
  }
}

TEST(Duration, Formats) {
  EXPECT_EQ(FormatDuration(std::chrono::milliseconds(340)), "340ms");
  EXPECT_EQ(FormatDuration(std::chrono::milliseconds(1250)), "1.25s");
  EXPECT_EQ(FormatDuration(std::chrono::seconds(125)), "2m5s");
}

TEST(Uuid, IsVersion4AndUnique) {
  std::string a = NewUuid(), b = NewUuid();
  EXPECT_EQ(a.size(), 36u);
  EXPECT_EQ(a[14], '4');
  EXPECT_NE(a, b);
}

TEST(Secrets, RedactsRegisteredSecretsAndBearerTokens) {
  RegisterSecret("s3cr3t-token-value");
  EXPECT_EQ(Redact("token=s3cr3t-token-value!"), "token=[REDACTED]!");
  EXPECT_EQ(Redact("Authorization: Bearer abc.def.ghi"), "Authorization: Bearer [REDACTED]");
  EXPECT_EQ(Redact("nothing here"), "nothing here");
}

TEST(ResultType, CarriesValueOrError) {
  Result<int> ok = 3;
  Result<int> bad = Error{"nope", 400};
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 3);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, 400);
  Status s = Ok();
  EXPECT_TRUE(s.ok());
}

TEST(Utf8, ValidatesAsRfc3629) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain"));
  EXPECT_TRUE(IsValidUtf8("h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80"));  // é € 😀
  EXPECT_FALSE(IsValidUtf8("ech\x83o"));  // a lone continuation byte
  EXPECT_FALSE(
      IsValidUtf8("ok\xff"
                  "name"));                       // never valid
  EXPECT_FALSE(IsValidUtf8("\xc3"));              // truncated
  EXPECT_FALSE(IsValidUtf8("\xe2\x82"));          // truncated
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));      // a surrogate
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));  // above U+10FFFF
}

TEST(Utf8, ToValidUtf8ReplacesEachStrayByteAndKeepsTheRest) {
  const std::string kReplacement = "\xEF\xBF\xBD";  // U+FFFD
  EXPECT_EQ(ToValidUtf8(""), "");
  EXPECT_EQ(ToValidUtf8("h\xc3\xa9llo \xf0\x9f\x98\x80"), "h\xc3\xa9llo \xf0\x9f\x98\x80");
  EXPECT_EQ(ToValidUtf8("a\xff\xc8z"), "a" + kReplacement + kReplacement + "z");
  EXPECT_EQ(ToValidUtf8("\xe2\x82"), kReplacement + kReplacement);  // a cut character
  EXPECT_EQ(ToValidUtf8("\xed\xa0\x80"), kReplacement + kReplacement + kReplacement);
  EXPECT_TRUE(IsValidUtf8(ToValidUtf8("\x80\xc0\xaf\xf4\x90\x80\x80ok")));
}

}  // namespace
}  // namespace kfpbench
