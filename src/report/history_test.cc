#include "report/history.h"

#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report/test_support.h"
#include "results/test_support.h"

namespace kfpbench::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// `n` synthetic results a day apart; latency grows by `growth` per run.
std::vector<NamedResults> Series(int n, double growth, uint32_t seed = 1) {
  std::vector<NamedResults> out;
  for (int i = 0; i < n; ++i) {
    auto r = results::testing::SyntheticResults(seed + i, 10, 6, 1.0 + growth * i);
    r.started += std::chrono::hours(24 * i);
    r.finished += std::chrono::hours(24 * i);
    out.push_back({fmt::format("nightly/{:02}", i), std::move(r)});
  }
  return out;
}

const Trend& TrendOf(const History& h, const std::string& stat) {
  for (const auto& t : h.trends) {
    if (t.stat == stat) return t;
  }
  throw std::logic_error("no trend " + stat);
}

TEST(History, FlagsASlowDriftUpWithItsSlope) {
  auto runs = Series(10, 0.04);
  std::reverse(runs.begin(), runs.end());  // given out of order: sorted by date
  HistoryOptions o;
  o.metric = "GetRun";
  auto h = BuildHistory(runs, o);
  ASSERT_TRUE(h.ok()) << h.error().message;
  ASSERT_EQ(h->points.size(), 10u);
  EXPECT_EQ(h->points.front().source, "nightly/00");
  EXPECT_EQ(h->points.back().source, "nightly/09");
  EXPECT_GT(h->points.back().p95, h->points.front().p95 * 1.2);
  const Trend& p95 = TrendOf(*h, "p95");
  EXPECT_EQ(p95.verdict, "drifting up");
  EXPECT_GT(p95.slope, 0);
  EXPECT_LT(p95.p_value, 0.01);
  // +4% per run on the base latency: about +30% over 10 runs relative to the mean.
  EXPECT_GT(p95.drift, 0.2);
  EXPECT_LT(p95.drift, 0.5);
  EXPECT_EQ(TrendOf(*h, "error_rate").verdict, "stable");

  std::string text = HistoryText(*h);
  EXPECT_THAT(text, HasSubstr("drifting up")) << text;
  EXPECT_THAT(text, HasSubstr("nightly/09"));

  // A long version does not push its row out of line: every row's "count"
  // column ends where the header's does.
  h->points[3].target_version = "2.5.0-rc.1+build.20261124.abcdef";
  text = HistoryText(*h);
  std::istringstream lines(text);
  std::string line, header;
  std::getline(lines, line);  // title
  std::getline(lines, line);  // blank
  std::getline(lines, header);
  size_t count_end = header.find("count") + 5;
  for (int i = 0; i < 10 && std::getline(lines, line); ++i) {
    ASSERT_GT(line.size(), count_end);
    EXPECT_EQ(line[count_end], ' ') << line;
    EXPECT_NE(line[count_end - 1], ' ') << line;
  }
}

TEST(History, SameDistributionIsStableAndFewRunsAreNotJudged) {
  HistoryOptions o;
  o.metric = "GetRun";
  auto h = BuildHistory(Series(10, 0.0, 50), o);
  ASSERT_TRUE(h.ok());
  for (const auto& t : h->trends) EXPECT_EQ(t.verdict, "stable") << t.stat << " p " << t.p_value;
  auto few = BuildHistory(Series(3, 0.5), o);
  ASSERT_TRUE(few.ok());
  EXPECT_EQ(TrendOf(*few, "p95").verdict, "too few runs");
  // A drop is "drifting down".
  auto faster = Series(8, 0.0);
  for (size_t i = 0; i < faster.size(); ++i) {
    faster[i].results = results::testing::SyntheticResults(70 + i, 10, 6, 2.0 - 0.12 * i);
    faster[i].results.started += std::chrono::hours(24 * i);
  }
  auto down = BuildHistory(faster, o);
  ASSERT_TRUE(down.ok());
  EXPECT_EQ(TrendOf(*down, "p50").verdict, "drifting down");
}

TEST(History, OrdersByTargetVersionAsPeopleReadVersions) {
  EXPECT_TRUE(VersionLess("2.9.1", "2.10.0"));
  EXPECT_TRUE(VersionLess("v2.2.0", "v2.2.1"));
  EXPECT_FALSE(VersionLess("2.10.0", "2.9.1"));
  EXPECT_TRUE(VersionLess("2.0.0", "2.0.0.1"));
  auto runs = Series(4, 0.0);
  const char* versions[] = {"2.10.0", "", "2.9.1", "2.2.0"};
  for (int i = 0; i < 4; ++i) {
    runs[i].results.target.embedded = false;
    runs[i].results.target.healthz = {{"tag_name", versions[i]}};
  }
  HistoryOptions o;
  o.metric = "run_duration";
  o.order = HistoryOrder::kVersion;
  auto h = BuildHistory(runs, o);
  ASSERT_TRUE(h.ok());
  std::vector<std::string> order;
  for (const auto& p : h->points) order.push_back(p.target_version);
  EXPECT_EQ(order, (std::vector<std::string>{"2.2.0", "2.9.1", "2.10.0", ""}));
  EXPECT_GT(h->points[0].count, 0u);  // run durations
  // The embedded backend names the kfpbench version that served it.
  auto embedded = results::testing::SyntheticResults(1);
  embedded.target.healthz = nlohmann::json::object();
  EXPECT_EQ(TargetVersion(embedded), "embedded 0.1.0-test");
}

TEST(History, BadInputIsAClearError) {
  HistoryOptions o;
  o.metric = "GetRunn";
  auto h = BuildHistory(Series(2, 0), o);
  ASSERT_FALSE(h.ok());
  EXPECT_THAT(h.error().message, HasSubstr("--metric GetRunn")) << h.error().message;
  EXPECT_THAT(h.error().message, HasSubstr("GetRun"));
  EXPECT_FALSE(BuildHistory({}, {}).ok());
}

TEST(History, CsvHasOneRowPerResult) {
  HistoryOptions o;
  o.metric = "CreateRun";
  auto runs = Series(3, 0.1);
  runs[1].source = "dir, with \"comma\"";
  auto h = BuildHistory(runs, o);
  ASSERT_TRUE(h.ok());
  std::string csv = HistoryCsv(*h);
  EXPECT_EQ(csv.rfind("index,source,started_at,target_version,metric,count,p50_ms", 0), 0u);
  size_t lines = 0;
  for (size_t p = csv.find("\r\n"); p != std::string::npos; p = csv.find("\r\n", p + 1)) ++lines;
  EXPECT_EQ(lines, 4u);
  EXPECT_THAT(csv, HasSubstr("\"dir, with \"\"comma\"\"\"")) << csv;
}

TEST(HistoryBrowser, TheChartDrawsWithoutScriptErrors) {
  if (!std::filesystem::exists(testing::kChromium)) GTEST_SKIP() << "no " << testing::kChromium;
  HistoryOptions o;
  o.metric = "GetRun";
  auto h = BuildHistory(Series(8, 0.05), o);
  ASSERT_TRUE(h.ok());
  results::testing::TempDir dir;
  auto page = dir.path() / "history.html";
  std::ofstream(page) << HistoryHtml(*h);
  std::string html = results::testing::ReadFile(page);
  EXPECT_THAT(html, Not(HasSubstr("http://")));
  EXPECT_THAT(html, Not(HasSubstr("https://")));
  std::string dom = testing::ChromiumDom(page, dir.path() / "profile", "1200,1600");
  ASSERT_THAT(dom, HasSubstr("id=\"kfpbench-status\" data-ready=\"true\"")) << dom.substr(0, 2000);
  EXPECT_THAT(dom, Not(HasSubstr("class=\"js-error\""))) << dom.substr(0, 4000);
  EXPECT_THAT(dom, HasSubstr("data-drawn=\"true\"")) << dom.substr(0, 4000);
  EXPECT_THAT(dom, HasSubstr("class=\"uplot"));
  EXPECT_THAT(dom, HasSubstr("drifting up"));
}

}  // namespace
}  // namespace kfpbench::report
