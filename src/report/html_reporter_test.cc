#include <cstdio>
#include <cstdlib>
#include <regex>

#include <fmt/format.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report/html_assets.h"
#include "report/reporter.h"
#include "report/test_support.h"
#include "results/test_support.h"

namespace kfpbench::report {
namespace {

using results::testing::ReadFile;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(HtmlReport, IsOneSelfContainedPage) {
  auto r = results::testing::SyntheticResults(1);
  r.scenario_source["note"] = "</script><script>alert(1)</script><!--";
  auto page = HtmlReporter::Render(r, nullptr);
  ASSERT_TRUE(page.ok()) << page.error().message;
  EXPECT_TRUE(page->starts_with("<!DOCTYPE html>"));
  EXPECT_THAT(*page, HasSubstr("Content-Security-Policy\" content=\"default-src 'none'"));
  // uPlot and the page's own code are inlined, with uPlot's MIT notice.
  EXPECT_THAT(*page, HasSubstr("Copyright (c)"));
  EXPECT_THAT(*page, HasSubstr("var uPlot="));
  EXPECT_GT(page->size(), assets::UplotJs().size() + assets::ReportJs().size());
  // Nothing is fetched: no external scripts, styles, images or imports, and
  // no address except the target's own URL (which is data, not a request).
  std::regex external(R"((src|href)\s*=|url\(|@import)", std::regex::icase);
  EXPECT_FALSE(std::regex_search(*page, external));
  std::string without_target = *page;
  for (size_t p; (p = without_target.find(r.target.url)) != std::string::npos;) {
    without_target.erase(p, r.target.url.size());
  }
  EXPECT_THAT(without_target, Not(HasSubstr("http://")));
  EXPECT_THAT(without_target, Not(HasSubstr("https://")));
  // Embedded data cannot close its <script> element: page.js, results,
  // verdicts, caveats, uPlot and report.js are all there is.
  EXPECT_EQ(testing::CountOf(*page, "</script>"), 6u);
  EXPECT_THAT(*page, HasSubstr("\\u003c/script\\u003e\\u003cscript\\u003ealert(1)"));
  EXPECT_THAT(*page, HasSubstr("id=\"kfpbench-verdicts\">[{\"expression\":\"p95 \\u003c 50ms\""));
}

TEST(HtmlReport, BadThresholdsAreAnError) {
  auto page =
      HtmlReporter::Render(results::testing::SyntheticResults(1), {{"GetRun", "p95 < soon"}});
  ASSERT_FALSE(page.ok());
  EXPECT_THAT(page.error().message, HasSubstr("p95 < soon"));
}

// The rendered page body; the inlined script's own text mentions the markers.
std::string Main(const std::string& dom) {
  size_t start = dom.find("<main id=\"app\">");
  return start == std::string::npos ? "" : dom.substr(start, dom.find("</main>", start) - start);
}

std::string Errors(const std::string& dom) {
  size_t start = dom.find("<ul id=\"kfpbench-errors\"");
  return start == std::string::npos ? "" : dom.substr(start, dom.find("</ul>", start) - start);
}

// Opens the page in headless Chromium: every chart must draw and no script
// error may occur. The screenshot is kept in the build folder for a person
// to look at (report-screenshot.png).
TEST(HtmlReportBrowser, EveryChartDrawsWithoutScriptErrors) {
  if (!std::filesystem::exists(testing::kChromium)) GTEST_SKIP() << "no " << testing::kChromium;
  results::testing::TempDir dir;
  auto page = dir.path() / "report.html";
  ASSERT_TRUE(HtmlReporter(page).Report(results::testing::SyntheticResults(7, 30, 40)).ok());
  std::string dom = testing::ChromiumDom(page, dir.path() / "profile");
  ASSERT_THAT(dom, HasSubstr("id=\"kfpbench-status\" data-ready=\"true\""))
      << "the page did not finish; DOM:\n"
      << dom.substr(0, 3000);
  EXPECT_THAT(Errors(dom), Not(HasSubstr("<li"))) << Errors(dom);
  EXPECT_EQ(testing::CountOf(Main(dom), "data-drawn=\"false\""), 0u);
  EXPECT_EQ(testing::CountOf(Main(dom), "data-drawn=\"empty\""), 0u);
  // 3 latency-over-time charts, distribution, throughput, CDF, timeline.
  EXPECT_EQ(testing::CountOf(Main(dom), "data-drawn=\"true\""), 7u);
  EXPECT_THAT(dom, HasSubstr("class=\"uplot"));
  EXPECT_THAT(dom, HasSubstr("3 thresholds"));

  std::filesystem::path build(KFPBENCH_BINARY_DIR);
  std::filesystem::copy_file(page, build / "report-sample.html",
                             std::filesystem::copy_options::overwrite_existing);
  std::filesystem::path shot = build / "report-screenshot.png";
  std::filesystem::remove(shot);
  testing::CommandOutput(fmt::format(
      "timeout 60 {} --headless --no-sandbox --disable-gpu --no-first-run "
      "--disable-dev-shm-usage --user-data-dir={} --window-size=1400,2400 "
      "--virtual-time-budget=5000 --screenshot={} file://{} >/dev/null 2>&1",
      testing::kChromium, (dir.path() / "profile").string(), shot.string(), page.string()));
  EXPECT_TRUE(std::filesystem::exists(shot));
  EXPECT_GT(std::filesystem::exists(shot) ? std::filesystem::file_size(shot) : 0, 50000u);
}

TEST(HtmlReportBrowser, StressSearchAndSchedulesAreDrawnWithWhyTheSearchStopped) {
  if (!std::filesystem::exists(testing::kChromium)) GTEST_SKIP() << "no " << testing::kChromium;
  results::testing::TempDir dir;
  auto page = dir.path() / "report.html";
  auto r = results::testing::SyntheticResults(3, 0, 10);
  r.stress_steps = {{0, 15, 3, 0, 1200, 0, true}, {0, 120, 16, 1, 7000, 0.0625, false}};
  r.stress_stops = {{0, results::StressStopReason::kSloBroken, "the SLO broke at 120/min"}};
  r.schedules = {{1, 2, 8, 7}};
  ASSERT_TRUE(HtmlReporter(page).Report(r).ok());
  std::string dom = testing::ChromiumDom(page, dir.path() / "profile");
  ASSERT_THAT(dom, HasSubstr("data-ready=\"true\"")) << dom.substr(0, 2000);
  EXPECT_THAT(Errors(dom), Not(HasSubstr("<li"))) << Errors(dom);
  EXPECT_THAT(dom, HasSubstr("data-chart=\"stress-0\" data-drawn=\"true\""));
  EXPECT_THAT(dom, HasSubstr("Scenario 0: peak 15 runs/min; stopped: the SLO broke at 120/min."));
  EXPECT_THAT(dom, HasSubstr("Scheduled runs"));
  EXPECT_THAT(dom, HasSubstr("trigger lag"));
}

TEST(HtmlReportBrowser, GrowthCurvesAreDrawnOnLogLogAxesWithTheirFits) {
  if (!std::filesystem::exists(testing::kChromium)) GTEST_SKIP() << "no " << testing::kChromium;
  results::testing::TempDir dir;
  auto page = dir.path() / "report.html";
  auto r = results::testing::SyntheticResults(3, 0, 10);
  results::GrowthCurve curve;
  curve.extrapolate_to = 1000000;
  for (int64_t runs : {20, 60, 150}) {
    results::GrowthLevel level;
    level.target_runs = runs;
    level.runs_stored = runs;
    level.runs_created = runs;
    level.fill_seconds = 1;
    for (int i = 0; i < 10; ++i) {
      level.latency_us["ListRuns"].Record(100 * runs);
      level.latency_us["GetRun"].Record(500);
    }
    for (int i = 0; i < 5; ++i) level.latency_us["ListRuns:deep"].Record(300 * runs);
    curve.levels.push_back(level);
  }
  r.growth = {curve};
  // 45 ListRuns calls measured (30 plain, 15 deep), 5 more by the fill.
  r.operations["ListRuns"] = {};
  for (int i = 0; i < 50; ++i) r.operations["ListRuns"].latency_us.Record(2000);
  ASSERT_TRUE(HtmlReporter(page).Report(r).ok());
  std::string dom = testing::ChromiumDom(page, dir.path() / "profile");
  ASSERT_THAT(dom, HasSubstr("data-ready=\"true\"")) << dom.substr(0, 2000);
  EXPECT_THAT(Errors(dom), Not(HasSubstr("<li"))) << Errors(dom);
  // One small chart per operation family, and growth before the API calls.
  EXPECT_THAT(dom, HasSubstr("data-chart=\"growth-0-ListRuns\" data-drawn=\"true\""));
  EXPECT_THAT(dom, HasSubstr("data-chart=\"growth-0-GetRun\" data-drawn=\"true\""));
  EXPECT_LT(dom.find("data-chart=\"growth-0-ListRuns\""), dom.find(">API calls, every phase<"));
  // The measured mix level by level in Growth, and the API table splits each
  // operation's calls into the fill's and the measured mix's.
  std::string main = Main(dom);
  auto mix = main.find(">Measured mix, level by level: p50 / p99 (calls)<");
  ASSERT_NE(mix, std::string::npos) << main;
  EXPECT_NE(main.find(">150 runs stored<", mix), std::string::npos) << main;
  EXPECT_NE(main.find(">15.0 ms / 15.0 ms (10)<", mix), std::string::npos) << main;
  auto api = main.find(">API calls, every phase<");
  ASSERT_NE(api, std::string::npos) << main;
  EXPECT_LT(mix, api);
  EXPECT_NE(main.find(">fill and settling<", api), std::string::npos) << main;
  EXPECT_NE(main.find(">measured mix<", api), std::string::npos) << main;
  EXPECT_NE(main.find("ListRuns</span></td><td class=\"num\">50</td><td class=\"num\">5</td><td "
                      "class=\"num\">45</td>",
                      api),
            std::string::npos)
      << main.substr(api);
  EXPECT_THAT(dom, HasSubstr(" linear"));
  EXPECT_THAT(dom, HasSubstr("constant"));
  // The fill's runs are not followed one by one: no empty run boxes.
  r.runs.clear();
  ASSERT_TRUE(HtmlReporter(page).Report(r).ok());
  dom = testing::ChromiumDom(page, dir.path() / "profile");
  ASSERT_THAT(dom, HasSubstr("data-ready=\"true\"")) << dom.substr(0, 2000);
  EXPECT_THAT(Main(dom), Not(HasSubstr("No run finished"))) << Main(dom);
  EXPECT_THAT(Main(dom), Not(HasSubstr("No run was created")));
  // Nor "0 runs" in the heading: the fill's runs are counted.
  EXPECT_THAT(Main(dom), HasSubstr(" · 230 runs created by the growth fill<"))
      << Main(dom).substr(0, 1000);
}

TEST(HtmlReportBrowser, AnEmptyBenchmarkStillRenders) {
  if (!std::filesystem::exists(testing::kChromium)) GTEST_SKIP() << "no " << testing::kChromium;
  results::testing::TempDir dir;
  auto page = dir.path() / "report.html";
  results::BenchmarkResults empty;
  empty.started = WallTime(std::chrono::seconds(1700000000));
  empty.finished = empty.started;
  ASSERT_TRUE(HtmlReporter(page).Report(empty).ok());
  std::string dom = testing::ChromiumDom(page, dir.path() / "profile");
  ASSERT_THAT(dom, HasSubstr("data-ready=\"true\"")) << dom.substr(0, 2000);
  EXPECT_THAT(Errors(dom), Not(HasSubstr("<li"))) << Errors(dom);
  EXPECT_EQ(testing::CountOf(Main(dom), "data-drawn=\"false\""), 0u);
}

}  // namespace
}  // namespace kfpbench::report
