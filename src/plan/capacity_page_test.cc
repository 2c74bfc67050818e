#include "plan/capacity_page.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/e2e_support.h"
#include "plan/plan.h"
#include "sim/test_support.h"
#include "util/ids.h"

namespace kfpbench::plan {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace std::chrono_literals;

class CapacityPageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = sim::testing::FixedCluster(4, 4);
    workload_ = sim::testing::SixStepWorkload(1, 60s, 5min);
    auto sweeps = SweepAround(cluster_, workload_, 40, 4);
    ASSERT_TRUE(sweeps.ok()) << sweeps.error().message;
    sweeps_ = *sweeps;
    sim::WorkloadSpec w = workload_;
    w.runs = 40;
    auto r = sim::Simulate(FixedNodes(cluster_, 4), w);
    ASSERT_TRUE(r.ok()) << r.error().message;
    over_time_ = *r;
  }
  sim::ClusterSpec cluster_;
  sim::WorkloadSpec workload_;
  Sweeps sweeps_;
  sim::SimResult over_time_;
};

TEST_F(CapacityPageTest, SweepsScaleTheWayTheyShould) {
  ASSERT_GE(sweeps_.by_runs.size(), 5u);
  ASSERT_GE(sweeps_.by_nodes.size(), 5u);
  for (size_t i = 1; i < sweeps_.by_runs.size(); ++i) {
    EXPECT_GT(sweeps_.by_runs[i].runs, sweeps_.by_runs[i - 1].runs);
    EXPECT_GE(sweeps_.by_runs[i].makespan_s, sweeps_.by_runs[i - 1].makespan_s);
    EXPECT_EQ(sweeps_.by_runs[i].nodes, 4);
  }
  for (size_t i = 1; i < sweeps_.by_nodes.size(); ++i) {
    EXPECT_GT(sweeps_.by_nodes[i].nodes, sweeps_.by_nodes[i - 1].nodes);
    EXPECT_LE(sweeps_.by_nodes[i].makespan_s, sweeps_.by_nodes[i - 1].makespan_s);
    EXPECT_EQ(sweeps_.by_nodes[i].runs, 40);
  }
  // Never faster than one run's critical path.
  EXPECT_GE(sweeps_.by_nodes.back().makespan_s, 60 + 300 + 60 + 60 - 0.001);
  EXPECT_GT(sweeps_.by_nodes.back().waves_s, 0);
  EXPECT_FALSE(SweepAround(cluster_, workload_, 0, 4).ok());
}

TEST_F(CapacityPageTest, PageIsSelfContainedAndEscapesItsText) {
  CapacityPage page{"plan <40 runs>", "answer: \"4 nodes\" </script><b>", &sweeps_, &over_time_};
  std::string html = RenderCapacityPage(page);
  EXPECT_THAT(html, HasSubstr("<title>plan &lt;40 runs&gt;</title>"));
  EXPECT_THAT(html, HasSubstr("&lt;/script&gt;&lt;b&gt;"));
  EXPECT_THAT(html, Not(HasSubstr("</script><b>")));
  EXPECT_THAT(html, Not(HasSubstr("http://")));
  EXPECT_THAT(html, Not(HasSubstr("https://")));
  nlohmann::json data = PageData(page);
  EXPECT_EQ(data["by_runs"]["runs"].size(), sweeps_.by_runs.size());
  EXPECT_EQ(data["by_nodes"]["makespan"].size(), sweeps_.by_nodes.size());
  EXPECT_FALSE(data["series"]["nodes"].empty());
  EXPECT_FALSE(PageData({"t", "s", nullptr, nullptr}).contains("series"));
  EXPECT_FALSE(data.contains("answer"));
  // With an answer the page carries what it marks: T, K and N, the band.
  auto answer = NodesFor(cluster_, workload_, 40, 1h, {3, 0.9});
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  page.answer = &*answer;
  nlohmann::json marked = PageData(page);
  EXPECT_EQ(marked["answer"]["nodes"], answer->nodes);
  EXPECT_EQ(marked["answer"]["runs"], 40);
  EXPECT_EQ(marked["answer"]["deadline_seconds"], 3600);
  EXPECT_EQ(marked["answer"]["deadline_text"], "1h0m0s");
  EXPECT_EQ(marked["answer"]["quantile_name"], "P90");
  EXPECT_EQ(marked["by_nodes"]["max"].size(), sweeps_.by_nodes.size());
  EXPECT_EQ(marked["answer"]["verdict"], "meets");
  EXPECT_EQ(marked["answer"]["interval"][0], 1.0);  // constant steps: exact
  EXPECT_EQ(marked["by_nodes"]["binds"].size(), sweeps_.by_nodes.size());
  // Without a time allowed, no point is judged.
  EXPECT_EQ(marked["by_nodes"]["within"][0], -1);
  // With it, more nodes never finish in time less often.
  auto judged = SweepAround(cluster_, workload_, 40, 4, {3, 0.9}, 1h);
  ASSERT_TRUE(judged.ok()) << judged.error().message;
  for (size_t i = 1; i < judged->by_nodes.size(); ++i) {
    EXPECT_GE(judged->by_nodes[i].within, judged->by_nodes[i - 1].within);
  }
  EXPECT_EQ(judged->by_nodes.front().binds, "nodes' CPU");
}

TEST(CapacityPageFitTest, CarriesTheFittedLevelsWithTheirErrors) {
  const nlohmann::json fit = {{"levels",
                               {{{"name", "1 run"},
                                 {"role", "fitted"},
                                 {"measured_makespan_seconds", 496},
                                 {"predicted_makespan_seconds", 495},
                                 {"near_fits_makespan_seconds", {495, 496}}},
                                {{"name", "10 runs"},
                                 {"role", "held out"},
                                 {"measured_makespan_seconds", 652},
                                 {"predicted_makespan_seconds", 710},
                                 {"error", 0.09},
                                 {"near_fits_makespan_seconds", {570, 800}}}}},
                              {"identifiability", {{"decided", false}}}};
  CapacityPage page{"calibrate", "text", nullptr, nullptr, nullptr, &fit};
  nlohmann::json data = PageData(page);
  EXPECT_EQ(data["fit"]["levels"].size(), 2u);
  EXPECT_EQ(data["fit"]["levels"][1]["error"], 0.09);
  EXPECT_THAT(RenderCapacityPage(page), HasSubstr("fitChart(data.fit)"));
  EXPECT_FALSE(PageData({"t", "s", nullptr, nullptr}).contains("fit"));
}

// Opens the page in headless Chromium: every chart draws, no script error.
TEST_F(CapacityPageTest, EveryChartDrawsInABrowser) {
  if (!std::filesystem::exists(testing::kChromium)) GTEST_SKIP() << "no " << testing::kChromium;
  auto dir = std::filesystem::temp_directory_path() / ("kfpbench-capacity-" + NewUuid());
  std::filesystem::create_directories(dir / "profile");
  auto path = dir / "capacity.html";
  auto answer = NodesFor(cluster_, workload_, 40, 1h, {3, 0.9});
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  // Judged against T: each sweep also draws the share within it.
  auto judged = SweepAround(cluster_, workload_, 40, answer->nodes, {3, 0.9}, 1h);
  ASSERT_TRUE(judged.ok()) << judged.error().message;
  ASSERT_TRUE(
      WriteCapacityPage({"capacity", "summary", &*judged, &over_time_, &*answer}, path).ok());
  std::string dom = testing::ChromiumDom(path, dir / "profile", "1200,2400");
  std::filesystem::remove_all(dir);
  ASSERT_THAT(dom, HasSubstr("id=\"status\" data-ready=\"true\"")) << dom.substr(0, 3000);
  size_t errors = dom.find("<ul id=\"errors\"");
  ASSERT_NE(errors, std::string::npos);
  EXPECT_THAT(dom.substr(errors, dom.find("</ul>", errors) - errors), Not(HasSubstr("<li")))
      << dom.substr(errors, 2000);
  size_t charts = dom.find("<div id=\"charts\">");
  ASSERT_NE(charts, std::string::npos);
  std::string body = dom.substr(charts);
  // Two sweeps, the share within T and what binds along each, and three
  // over-time charts.
  EXPECT_EQ(testing::CountOf(body, "data-drawn=\"true\""), 9u);
  EXPECT_THAT(body, HasSubstr("Replications finishing within T = 1h0m0s versus nodes"));
  EXPECT_THAT(body, HasSubstr("data-labels=\""));
  EXPECT_EQ(testing::CountOf(body, "data-drawn=\"false\""), 0u);
  EXPECT_THAT(body, HasSubstr("class=\"uplot"));
}

// With a store past its capacity, each sweep carries its demand alone, and
// the by-nodes sweep shows the makespan stop falling at that floor: the
// page draws it, with the knee marked, in a real browser.
TEST(CapacityPageShared, SweepsCarryTheStoreFloorAndThePageDrawsIt) {
  sim::ClusterSpec cluster = sim::testing::FixedCluster(4, 4);
  cluster.artifact_store.bandwidth = 100.0 * (1 << 20);
  sim::WorkloadSpec workload = sim::testing::SixStepWorkload(1, 60s, 5min);
  workload.steps.by_label["exec-train"].artifact_bytes = int64_t{1} << 30;
  auto sweeps = SweepAround(cluster, workload, 40, 4, {1, 0.9});
  ASSERT_TRUE(sweeps.ok()) << sweeps.error().message;
  for (const auto& p : sweeps->by_nodes) {
    EXPECT_NEAR(p.store_s, 40 * 3 * 1024 / 100.0, 1e-6);
    EXPECT_GE(p.makespan_s, p.store_s);  // the floor holds at every size
    EXPECT_EQ(p.api_s, 0);
  }
  auto data = PageData({"capacity", "summary", &*sweeps, nullptr, nullptr});
  EXPECT_EQ(data["by_nodes"]["store"].size(), sweeps->by_nodes.size());

  if (!std::filesystem::exists(testing::kChromium)) GTEST_SKIP() << "no " << testing::kChromium;
  auto dir = std::filesystem::temp_directory_path() / ("kfpbench-capacity-" + NewUuid());
  std::filesystem::create_directories(dir / "profile");
  auto path = dir / "capacity.html";
  ASSERT_TRUE(WriteCapacityPage({"capacity", "summary", &*sweeps, nullptr, nullptr}, path).ok());
  std::string dom = testing::ChromiumDom(path, dir / "profile", "1200,2400");
  std::filesystem::remove_all(dir);
  ASSERT_THAT(dom, HasSubstr("id=\"status\" data-ready=\"true\"")) << dom.substr(0, 3000);
  // Two sweeps and what binds along each: the store, once its demand is most
  // of the makespan.
  EXPECT_EQ(testing::CountOf(dom, "data-drawn=\"true\""), 4u);
  EXPECT_THAT(dom, HasSubstr("artifact store alone"));
  EXPECT_THAT(dom, HasSubstr("the artifact store"));
}

}  // namespace
}  // namespace kfpbench::plan
