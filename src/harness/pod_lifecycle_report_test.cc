// The pod lifecycle section (run --kube-context) through results.json, merge
// and the HTML report, built from the hand-written kubectl outputs in
// src/kube/testdata (real format, not recordings) via a fake kubectl.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "harness/e2e_support.h"
#include "harness/pod_collector.h"
#include "kube/testdata/fixtures.h"
#include "report/merge.h"
#include "report/reporter.h"
#include "results/results_json.h"
#include "results/test_support.h"

namespace kfpbench::report {
namespace {

using testing::Between;
using ::testing::HasSubstr;
using ::testing::Not;

using nlohmann::json;

// Synthetic results whose first run names the fixtures' pods.
results::BenchmarkResults WithPods() {
  auto r = results::testing::SyntheticResults(3, 20, 6);
  auto& tasks = r.runs[0].tasks;
  tasks[1].name = "train";
  tasks[1].pods = {"hello-pipeline-x7k2p-system-container-impl-2917736631",
                   "hello-pipeline-x7k2p-system-container-driver-1183203540"};
  tasks[2].name = "evaluate";
  tasks[2].pods = {"hello-pipeline-x7k2p-system-container-impl-3490011842",
                   "hello-pipeline-x7k2p-system-container-driver-3046821975"};
  r.runs[1].tasks[1].pods = {"hello-pipeline-q9d4m-system-container-impl-118270443"};
  kube::PodReaderOptions o;
  o.kubectl = kube::testdata::FakeKubectl();
  o.context = "kfp";
  o.namespace_ = "kubeflow";
  kube::testdata::FakeKubectlEnv env;
  harness::PodLifecycleStep(o)(r);
  return r;
}

TEST(PodLifecycleReport, RoundTripsThroughResultsJsonAndMerges) {
  auto r = WithPods();
  ASSERT_EQ(r.pod_lifecycle.pods.size(), 4u);
  json j = results::ResultsToJson(r);
  ASSERT_TRUE(j["pod_lifecycle"].is_object());
  EXPECT_EQ(j["pod_lifecycle"]["pods_missing"], 1);
  auto back = results::ResultsFromJson(j);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(results::ResultsToJson(*back)["pod_lifecycle"], j["pod_lifecycle"]);
  // Without --kube-context the key is null and reads back as not collected.
  auto plain = results::testing::SyntheticResults(3, 20, 6);
  json pj = results::ResultsToJson(plain);
  EXPECT_TRUE(pj["pod_lifecycle"].is_null());
  auto plain_back = results::ResultsFromJson(pj);
  ASSERT_TRUE(plain_back.ok());
  EXPECT_FALSE(plain_back->pod_lifecycle.collected);

  auto merged = MergeResults({*back, r, plain});
  ASSERT_TRUE(merged.ok()) << merged.error().message;
  const auto& train = merged->pod_lifecycle.steps.at("train");
  EXPECT_EQ(train.pods, 2);
  EXPECT_EQ(train.ms.at("image_pull").count(), 6u);
  EXPECT_EQ(merged->pod_lifecycle.missing.size(), 2u);

  json bad = j;
  bad["pod_lifecycle"]["steps"] = "none";
  auto err = results::ResultsFromJson(bad);
  ASSERT_FALSE(err.ok());
  EXPECT_THAT(err.error().message, HasSubstr("pod_lifecycle.steps"));
}

TEST(PodLifecycleReport, SectionDrawsInChromium) {
  if (!std::filesystem::exists(testing::kChromium)) GTEST_SKIP() << "no " << testing::kChromium;
  results::testing::TempDir dir;
  auto page = dir.path() / "report.html";
  ASSERT_TRUE(HtmlReporter(page).Report(WithPods()).ok());
  std::string dom = testing::ChromiumDom(page, dir.path() / "profile", "1400,3000");
  ASSERT_THAT(dom, HasSubstr("data-ready=\"true\"")) << dom.substr(0, 2000);
  std::string errors = Between(dom, "<ul id=\"kfpbench-errors\"", "</ul>");
  EXPECT_THAT(errors, Not(HasSubstr("<li"))) << errors;
  std::string main = Between(dom, "<main id=\"app\">", "</main>");
  EXPECT_THAT(main, HasSubstr("data-chart=\"pod-timeline\" data-drawn=\"true\""));
  EXPECT_THAT(main, Not(HasSubstr("data-drawn=\"false\"")));
  // The section sits before the environment, with the step table and the gone pod.
  size_t section = main.find("<h2>Pod lifecycle</h2>");
  ASSERT_NE(section, std::string::npos);
  EXPECT_LT(section, main.find("<h2>Environment</h2>"));
  EXPECT_THAT(main, HasSubstr("<td>created → scheduled</td>"));
  EXPECT_THAT(main, HasSubstr("<td class=\"num\">41.0 s</td>"));
  EXPECT_THAT(main, HasSubstr("<td>train (driver)</td>"));
  EXPECT_THAT(main, HasSubstr("hello-pipeline-q9d4m-system-container-impl-118270443"));
  EXPECT_THAT(main, HasSubstr("5 pods named by finished runs: 4 read, 1 gone"))
      << Between(main, "<h2>Pod lifecycle", "</table>");
  // For a person to look at.
  std::filesystem::copy_file(
      page, std::filesystem::path(KFPBENCH_BINARY_DIR) / "pod-lifecycle-sample.html",
      std::filesystem::copy_options::overwrite_existing);
}

}  // namespace
}  // namespace kfpbench::report
