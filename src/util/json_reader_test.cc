#include "util/json_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>

#include "util/json_checks.h"

namespace kfpbench {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

std::string ErrorOf(JsonReader& r) {
  Status s = r.Finish();
  return s.ok() ? "" : s.error().message;
}

TEST(JsonReader, PlainReadsNumbersAsJsonNumbersOnly) {
  json j = {{"count", 3}, {"rate", 2.5}, {"big", "7"}};
  auto r = JsonReader::Plain(j, "level");
  uint64_t count = 0;
  double rate = 0;
  int64_t big = 0;
  r.Number("count", count);
  r.Number("rate", rate);
  EXPECT_EQ(count, 3u);
  EXPECT_EQ(rate, 2.5);
  r.Number("big", big);
  EXPECT_EQ(ErrorOf(r), "level.big: must be an integer");

  json n = {{"n", -1}};
  auto negative = JsonReader::Plain(n, "");
  negative.Number("n", count);
  EXPECT_EQ(ErrorOf(negative), "n: must be a non-negative integer");
}

TEST(JsonReader, PlainTakesOnlyTheExactNameAndIgnoresOthers) {
  json j = {{"runId", "x"}, {"extra", 1}};
  auto r = JsonReader::Plain(j, "");
  std::string id;
  r.String("run_id", id);
  EXPECT_EQ(id, "");
  EXPECT_EQ(ErrorOf(r), "");
}

TEST(JsonReader, RequiredFieldsAndNestedPathsAreNamed) {
  json j = {{"levels", {{{"runs_stored", 1}}}}};
  auto r = JsonReader::Plain(j, "growth.0");
  r.Array("levels", [](JsonReader& l) {
    int64_t target = 0;
    l.Require("target_runs");
    l.Number("target_runs", target);
  });
  EXPECT_EQ(ErrorOf(r), "growth.0.levels[0]: missing field 'target_runs'");

  json ops = {{"operations", {{"GetRun", {{"errors", "many"}}}}}};
  auto e = JsonReader::Plain(ops, "");
  e.Entries("operations", [](const std::string&, JsonReader& op) {
    uint64_t errors = 0;
    op.Number("errors", errors);
  });
  EXPECT_EQ(ErrorOf(e), "operations.GetRun.errors: must be a non-negative integer");
}

TEST(JsonReader, TimesMayBeEmptyOrAbsentWhereTheFormatSaysSo) {
  json j = {{"never", ""}, {"null", nullptr}, {"at", "2023-11-14T22:13:20Z"}};
  auto r = JsonReader::Plain(j, "");
  WallTime never = WallTime(std::chrono::seconds(1));
  std::optional<WallTime> null_time, at;
  r.TimeOrEmpty("never", never);
  r.OptionalTime("null", null_time);
  r.OptionalTime("at", at);
  EXPECT_EQ(never, WallTime{});
  EXPECT_FALSE(null_time);
  ASSERT_TRUE(at);
  EXPECT_EQ(*at, WallTime(std::chrono::seconds(1700000000)));
  EXPECT_EQ(ErrorOf(r), "");
}

TEST(JsonReader, TheFirstProblemIsKept) {
  json j = {{"a", 1}, {"b", 2}};
  auto r = JsonReader::Plain(j, "x");
  std::string a, b;
  r.String("a", a);
  r.String("b", b);
  EXPECT_EQ(ErrorOf(r), "x.a: must be a string");
}

TEST(JsonReader, ConfigRefusesEveryFieldNobodyReadAndSaysWhatIsKnown) {
  json j = {{"name", "a"}, {"colour", "red"}, {"size", 3}, {"shade", 1}};
  auto r = JsonReader::Config(j, "[0]");
  std::string name;
  int size = 0;
  r.String("name", name);
  r.Field("size", size, checks::WholeNumber{1, 10});
  EXPECT_EQ(ErrorOf(r),
            "[0].colour: unknown field (known: name, size)\n"
            "[0].shade: unknown field (known: name, size)");
}

TEST(JsonReader, ConfigNamesNestedUnknownFieldsByTheirPath) {
  json j = {{"stress", {{"slo", {{"p99", "1s"}}}}}};
  auto r = JsonReader::Config(j, "");
  r.Message("stress", [](JsonReader& stress) {
    stress.Message("slo", [](JsonReader& slo) {
      std::string p95;
      slo.String("p95", p95);
    });
  });
  EXPECT_EQ(ErrorOf(r), "stress.slo.p99: unknown field (known: p95)");
}

TEST(JsonReader, KnownRefusesOtherFieldsBeforeAnyIsRead) {
  json j = {{"mode", 7}, {"colour", "red"}};
  auto r = JsonReader::Config(j, "[1]");
  constexpr std::string_view kKnown[] = {"mode", "runTime"};
  r.Known(kKnown);
  std::string mode;
  r.String("mode", mode);  // its problem comes after the typo's
  EXPECT_EQ(ErrorOf(r), "[1].colour: unknown field (known: mode, runTime)");
}

TEST(JsonReader, ValidatorsSayTheProblemAtTheFieldsPath) {
  auto error_of = [](const json& j, auto read) {
    auto r = JsonReader::Config(j, "[0]");
    read(r);
    return ErrorOf(r);
  };
  EXPECT_EQ(error_of({{"n", 0}},
                     [](JsonReader& r) {
                       int n = 0;
                       r.Field("n", n, checks::WholeNumber{1, 100000});
                     }),
            "[0].n: must be a whole number from 1 to 100000 (got 0)");
  EXPECT_EQ(error_of({{"n", 18446744073709551615u}},
                     [](JsonReader& r) {
                       int64_t n = 0;
                       r.Field("n", n, checks::WholeNumber{1, 100});
                     }),
            "[0].n: must be a whole number from 1 to 100 (got 18446744073709551615)");
  EXPECT_EQ(error_of({{"rate", "fast"}},
                     [](JsonReader& r) {
                       std::optional<double> rate;
                       r.Field("rate", rate, checks::Number{0, 1e7, "must be runs per minute"});
                     }),
            "[0].rate: must be runs per minute (got \"fast\")");
  EXPECT_EQ(
      error_of({{"arrival", "bursty"}},
               [](JsonReader& r) {
                 int arrival = 0;
                 r.Field("arrival", arrival, checks::OneOf<int>{{{"constant", 0}, {"poisson", 1}}});
               }),
      "[0].arrival: must be \"constant\" or \"poisson\" (got \"bursty\")");
  EXPECT_EQ(error_of({{"file", ""}},
                     [](JsonReader& r) {
                       std::string file;
                       r.Field("file", file, checks::NonEmptyString{"must be a file name"});
                     }),
            "[0].file: must be a file name");
  EXPECT_EQ(error_of({{"list", {"a", 2}}},
                     [](JsonReader& r) {
                       std::vector<std::string> list;
                       r.StringList("list", list);
                     }),
            "[0].list[1]: must be a string");
}

TEST(JsonReader, ValidatorsSetTheValueOnlyWhenItIsGood) {
  json j = {{"rate", 120.5}, {"count", 7}, {"arrival", "poisson"}};
  auto r = JsonReader::Config(j, "");
  std::optional<double> rate, absent;
  int count = 1, arrival = 0;
  r.Field("rate", rate, checks::Number{0, 1e7, "must be a rate"});
  r.Field("absent", absent, checks::Number{0, 1e7, "must be a rate"});
  r.Field("count", count, checks::WholeNumber{1, 10});
  r.Field("arrival", arrival, checks::OneOf<int>{{{"constant", 0}, {"poisson", 1}}});
  ASSERT_EQ(ErrorOf(r), "");
  EXPECT_EQ(rate, 120.5);
  EXPECT_FALSE(absent.has_value());
  EXPECT_EQ(count, 7);
  EXPECT_EQ(arrival, 1);
  json zero = {{"low", 0}};
  auto inclusive = JsonReader::Config(zero, "");
  double low = -1;
  inclusive.Field("low", low, checks::Number{0, 1, "must be 0 or more", /*low_open=*/false});
  EXPECT_EQ(ErrorOf(inclusive), "");
  EXPECT_EQ(low, 0);
}

TEST(JsonReader, RestTakesTheFieldsLeftAsData) {
  json j = {{"name", "a"}, {"A", "1"}, {"B", 2}};
  auto r = JsonReader::Config(j, "env");
  std::string name;
  r.String("name", name);
  std::map<std::string, std::string> values;
  r.Rest([&](const std::string& key, const json& v) {
    if (!v.is_string()) return std::string("must be a scalar");
    values[key] = v.get<std::string>();
    return std::string();
  });
  EXPECT_EQ(ErrorOf(r), "env.B: must be a scalar");
  EXPECT_EQ(values, (std::map<std::string, std::string>{{"A", "1"}}));
}

TEST(ParseJson, RefusesTextNestedDeeperThanTheLimit) {
  auto nested = [](size_t depth, char open, char close) {
    return std::string(depth, open) + std::string(depth, close);
  };
  EXPECT_TRUE(ParseJson(nested(100'000, '[', ']')).is_discarded());
  EXPECT_TRUE(ParseJson(nested(kMaxJsonDepth + 1, '[', ']')).is_discarded());
  EXPECT_FALSE(ParseJson(nested(kMaxJsonDepth, '[', ']')).is_discarded());
  std::string objects;
  for (size_t i = 0; i < 100'000; ++i) objects += "{\"a\":";
  objects += '1';
  objects.append(100'000, '}');
  auto refused = ParseJsonText(objects);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error().message, HasSubstr("deeper than 5000"));
  // Brackets inside strings, escaped quotes included, are not nesting.
  std::string in_string = "[\"\\\"";
  in_string.append(100'000, '[');
  in_string += "\"]";
  auto read = ParseJsonText(in_string);
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ((*read)[0].get<std::string>().size(), 100'001u);
  EXPECT_FALSE(ParseJsonText("{\"a\":").ok());
  EXPECT_FALSE(ParseJsonText("1e999").ok());  // out_of_range, not a throw
}

// The bound holds because nothing parses JSON text another way: every
// source file outside the tests goes through ParseJson or ParseJsonText.
TEST(ParseJson, IsTheOneWayJsonTextIsParsed) {
  namespace fs = std::filesystem;
  const fs::path src = fs::path(KFPBENCH_SOURCE_DIR) / "src";
  ASSERT_TRUE(fs::is_directory(src));
  const std::regex direct(R"((json::parse|json::from_\w+|json::sax_parse)\s*\()");
  std::vector<std::string> offenders;
  for (const auto& entry : fs::recursive_directory_iterator(src)) {
    const std::string name = entry.path().filename().string();
    const std::string path = entry.path().string();
    bool source = name.ends_with(".cc") || name.ends_with(".h");
    bool test = name.ends_with("_test.cc") || name.starts_with("test_") ||
                name.find("_test_") != std::string::npos ||
                name.find("_support.h") != std::string::npos ||
                path.find("/testdata/") != std::string::npos;
    if (!entry.is_regular_file() || !source || test || name == "json_reader.cc") continue;
    std::ifstream in(entry.path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      if (std::regex_search(line, direct)) {
        offenders.push_back(fs::relative(entry.path(), src).string() + ":" + std::to_string(n));
      }
    }
  }
  EXPECT_TRUE(offenders.empty()) << "parse JSON with ParseJson (util/json_reader.h): "
                                 << ::testing::PrintToString(offenders);
}

// What nlohmann::json's dump() throws on, DumpJson writes with U+FFFD.
TEST(DumpJson, WritesStringsThatAreNotUtf8WithReplacementCharacters) {
  nlohmann::json j = {{"a", "ok \xff"}, {"b", {1, 2}}};
  EXPECT_THROW((void)j.dump(), nlohmann::json::type_error);
  EXPECT_EQ(DumpJson(j), "{\"a\":\"ok \xEF\xBF\xBD\",\"b\":[1,2]}");
  EXPECT_EQ(DumpJson(nlohmann::json{{"k", 1}}, 2), "{\n  \"k\": 1\n}");
}

}  // namespace
}  // namespace kfpbench
