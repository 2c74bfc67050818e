#include "report/caveats.h"

#include <sstream>

#include <fmt/format.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report/reporter.h"
#include "results/test_support.h"
#include "util/test_support.h"

namespace kfpbench::report {
namespace {

using results::testing::ReadFile;
using ::testing::HasSubstr;

// Results with every caveat: partial, stub steps, runs from the cache,
// --time-scale, a lagging observer and a benchmark's objects kept.
results::BenchmarkResults EveryCaveat() {
  auto r = results::testing::SyntheticResults(1, 20, 12);
  r.partial = true;
  r.partial_reason = "interrupted (Ctrl-C)";
  r.target.executor = "stub";
  r.target.executor_reason = "pipelines of SDK Python components cannot run as processes";
  for (auto& run : r.runs) {
    results::TaskTiming t;
    t.cached = true;
    run.tasks = {t};
  }
  r.time_scale = 0.05;
  r.observer.qps_budget = 5;
  r.observer.poll_interval = std::chrono::seconds(1);
  r.observer.budget_wait = std::chrono::seconds(40);
  for (int i = 0; i < 10; ++i) r.observer.observe_lag_ms.Record(1400);
  r.benchmark_id = "kfpbench-b1";
  r.created.runs = 12;
  r.kept = true;
  return r;
}

TEST(Caveats, EachIsSaidOnceInItsOwnWords) {
  auto caveats = CaveatsOf(EveryCaveat());
  std::vector<std::string> keys;
  for (const auto& c : caveats) keys.push_back(c.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"partial", "stub_steps", "cache", "time_scale",
                                            "observer_lag", "benchmark_id"}));
  const auto runs = EveryCaveat().runs.size();
  EXPECT_EQ(caveats[2].text.find(fmt::format(
                "cache: {} of {} runs were answered entirely from KFP's cache", runs, runs)),
            0u)
      << caveats[2].text;
  EXPECT_THAT(caveats[3].text, HasSubstr("--time-scale 0.05"));
  EXPECT_THAT(caveats[4].text, HasSubstr("1400 ms after the server's finished_at at p50"))
      << caveats[4].text;
  EXPECT_THAT(caveats[5].text, HasSubstr("kfpbench-b1"));
  EXPECT_TRUE(CaveatsOf(results::testing::SyntheticResults(1)).empty());
}

// Issue 39: the console said it, the other reports did not. Every reporter
// now shows every caveat, near its top.
TEST(Caveats, EveryReporterShowsEveryCaveat) {
  auto r = EveryCaveat();
  results::testing::TempDir dir;
  std::ostringstream console;
  ASSERT_TRUE(ConsoleReporter(console).Report(r).ok());
  ASSERT_TRUE(MarkdownReporter(dir.path() / "summary.md").Report(r).ok());
  ASSERT_TRUE(JunitReporter(dir.path() / "junit.xml").Report(r).ok());
  auto html = HtmlReporter::Render(r, nullptr);
  ASSERT_TRUE(html.ok());
  std::string md = ReadFile(dir.path() / "summary.md");
  std::string xml = ReadFile(dir.path() / "junit.xml");
  for (const auto& c : CaveatsOf(r)) {
    // The console's caveats come before its first table.
    size_t at = console.str().find(c.text);
    EXPECT_LT(at, console.str().find("API calls")) << c.text;
    EXPECT_LT(md.find(c.text.substr(0, 20)), md.find("| operation |")) << c.text;
    EXPECT_THAT(xml, HasSubstr("<property name=\"caveat." + c.key + "\"")) << c.key;
    // The page carries them as data, which its script draws at the top
    // (html_reporter_test looks at the drawn page).
    EXPECT_THAT(*html, HasSubstr("\"key\":\"" + c.key + "\"")) << c.key;
  }
  EXPECT_THAT(xml, HasSubstr("<system-out>caveat: PARTIAL results")) << xml;
}

}  // namespace
}  // namespace kfpbench::report
