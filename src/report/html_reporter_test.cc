#include <cstdio>
#include <cstdlib>
#include <regex>

#include <fmt/format.h>

#include <gtest/gtest.h>

#include "report/html_assets.h"
#include "report/reporter.h"
#include "report/test_support.h"

namespace kfpbench::report {
namespace {

using testing::ReadFile;

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

TEST(HtmlReport, IsOneSelfContainedPage) {
  auto r = testing::SyntheticResults(1);
  r.scenario_source["note"] = "</script><script>alert(1)</script><!--";
  auto page = HtmlReporter::Render(r, nullptr);
  ASSERT_TRUE(page.ok()) << page.error().message;
  EXPECT_TRUE(page->starts_with("<!DOCTYPE html>"));
  EXPECT_NE(page->find("Content-Security-Policy\" content=\"default-src 'none'"),
            std::string::npos);
  // uPlot and the page's own code are inlined, with uPlot's MIT notice.
  EXPECT_NE(page->find("Copyright (c)"), std::string::npos);
  EXPECT_NE(page->find("var uPlot="), std::string::npos);
  EXPECT_GT(page->size(), assets::UplotJs().size() + assets::ReportJs().size());
  // Nothing is fetched: no external scripts, styles, images or imports, and
  // no address except the target's own URL (which is data, not a request).
  std::regex external(R"((src|href)\s*=|url\(|@import)", std::regex::icase);
  EXPECT_FALSE(std::regex_search(*page, external));
  std::string without_target = *page;
  for (size_t p; (p = without_target.find(r.target.url)) != std::string::npos;) {
    without_target.erase(p, r.target.url.size());
  }
  EXPECT_EQ(without_target.find("http://"), std::string::npos);
  EXPECT_EQ(without_target.find("https://"), std::string::npos);
  // Embedded data cannot close its <script> element: page.js, results,
  // verdicts, uPlot and report.js are all there is.
  EXPECT_EQ(Count(*page, "</script>"), 5u);
  EXPECT_NE(page->find("\\u003c/script\\u003e\\u003cscript\\u003ealert(1)"), std::string::npos);
  EXPECT_NE(page->find("id=\"kfpbench-verdicts\">[{\"expression\":\"p95 \\u003c 50ms\""),
            std::string::npos);
}

TEST(HtmlReport, BadThresholdsAreAnError) {
  auto page = HtmlReporter::Render(testing::SyntheticResults(1), {{"GetRun", "p95 < soon"}});
  ASSERT_FALSE(page.ok());
  EXPECT_NE(page.error().message.find("p95 < soon"), std::string::npos);
}

// Runs `command` and returns what it printed on stdout.
std::string Output(const std::string& command) {
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  if (!p) return out;
  char buf[65536];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  pclose(p);
  return out;
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
  const char* chromium = "/usr/bin/chromium";
  if (!std::filesystem::exists(chromium)) GTEST_SKIP() << "no " << chromium;
  testing::TempDir dir;
  auto page = dir.path() / "report.html";
  ASSERT_TRUE(HtmlReporter(page).Report(testing::SyntheticResults(7, 30, 40)).ok());
  auto profile = dir.path() / "profile";
  std::filesystem::create_directories(profile);
  std::string flags =
      "--headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking "
      "--disable-component-update --disable-sync --disable-dev-shm-usage "
      "--user-data-dir=" +
      profile.string() + " --window-size=1400,2400 --virtual-time-budget=5000 ";
  std::string url = "file://" + page.string();
  std::string dom =
      Output(fmt::format("timeout 60 {} {} --dump-dom {} 2>/dev/null", chromium, flags, url));
  ASSERT_NE(dom.find("id=\"kfpbench-status\" data-ready=\"true\""), std::string::npos)
      << "the page did not finish; DOM:\n"
      << dom.substr(0, 3000);
  EXPECT_EQ(Errors(dom).find("<li"), std::string::npos) << Errors(dom);
  EXPECT_EQ(Count(Main(dom), "data-drawn=\"false\""), 0u);
  EXPECT_EQ(Count(Main(dom), "data-drawn=\"empty\""), 0u);
  // 3 latency-over-time charts, distribution, throughput, CDF, timeline.
  EXPECT_EQ(Count(Main(dom), "data-drawn=\"true\""), 7u);
  EXPECT_NE(dom.find("class=\"uplot"), std::string::npos);
  EXPECT_NE(dom.find("3 thresholds"), std::string::npos);

  std::filesystem::path build(KFPBENCH_BINARY_DIR);
  std::filesystem::copy_file(page, build / "report-sample.html",
                             std::filesystem::copy_options::overwrite_existing);
  std::filesystem::path shot = build / "report-screenshot.png";
  std::filesystem::remove(shot);
  Output(fmt::format("timeout 60 {} {} --screenshot={} {} >/dev/null 2>&1", chromium, flags,
                     shot.string(), url));
  EXPECT_TRUE(std::filesystem::exists(shot));
  EXPECT_GT(std::filesystem::exists(shot) ? std::filesystem::file_size(shot) : 0, 50000u);
}

TEST(HtmlReportBrowser, AnEmptyBenchmarkStillRenders) {
  const char* chromium = "/usr/bin/chromium";
  if (!std::filesystem::exists(chromium)) GTEST_SKIP() << "no " << chromium;
  testing::TempDir dir;
  auto page = dir.path() / "report.html";
  harness::BenchmarkResults empty;
  empty.started = WallTime(std::chrono::seconds(1700000000));
  empty.finished = empty.started;
  ASSERT_TRUE(HtmlReporter(page).Report(empty).ok());
  auto profile = dir.path() / "profile";
  std::filesystem::create_directories(profile);
  std::string dom = Output(fmt::format(
      "timeout 60 {} --headless --no-sandbox --disable-gpu --no-first-run "
      "--disable-background-networking --disable-component-update --disable-sync "
      "--disable-dev-shm-usage --user-data-dir={} --virtual-time-budget=3000 --dump-dom file://{} "
      "2>/dev/null",
      chromium, profile.string(), page.string()));
  ASSERT_NE(dom.find("data-ready=\"true\""), std::string::npos) << dom.substr(0, 2000);
  EXPECT_EQ(Errors(dom).find("<li"), std::string::npos) << Errors(dom);
  EXPECT_EQ(Count(Main(dom), "data-drawn=\"false\""), 0u);
}

}  // namespace
}  // namespace kfpbench::report
