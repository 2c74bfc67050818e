// The `kfpbench job` report: a grid sweep's metrics against each swept
// parameter, drawn in headless Chromium.
#include "report/job_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <regex>

#include "kube/job_results.h"
#include "report/test_support.h"
#include "results/test_support.h"

namespace kfpbench::report {
namespace {

using testing::Between;
using ::testing::HasSubstr;
using ::testing::Not;

using nlohmann::json;

// A grid: batch_size (numeric, 16..256) x model (categorical); one run failed.
json GridSweep() {
  kube::JobSweepResult sweep{"tf-cnn", "TFJob", "kubernetes", {}};
  sweep.swept = {"batch_size", "model"};
  int index = 0;
  for (std::string model : {"resnet50", "vgg16"}) {
    for (int batch : {16, 64, 256}) {
      kube::JobRunResult run;
      run.index = index++;
      run.job_name = fmt::format("tf-cnn-{}", run.index);
      run.params = {{"batch_size", std::to_string(batch)}, {"model", model}, {"steps", "100"}};
      run.succeeded = !(model == "vgg16" && batch == 256);
      run.duration_seconds = 60 + run.index;
      double speed = (model == "resnet50" ? 100.0 : 60.0) * std::log2(batch);
      run.metrics["images_per_sec"] = run.succeeded ? std::optional<double>(speed) : std::nullopt;
      run.metrics["step_time_s"] =
          run.succeeded ? std::optional<double>(batch / speed) : std::nullopt;
      if (!run.succeeded) run.error = "TFJob tf-cnn-5 failed: </pre><script>alert(1)</script>";
      sweep.runs.push_back(run);
    }
  }
  return kube::ToJson(sweep);
}

TEST(JobReport, IsOneSelfContainedPage) {
  auto page = RenderJobReport(GridSweep());
  ASSERT_TRUE(page.ok()) << page.error().message;
  EXPECT_TRUE(page->starts_with("<!DOCTYPE html>"));
  EXPECT_THAT(*page, HasSubstr("default-src 'none'"));
  EXPECT_THAT(*page, HasSubstr("var uPlot="));
  std::regex external(R"((src|href)\s*=|url\(|@import)", std::regex::icase);
  EXPECT_FALSE(std::regex_search(*page, external));
  // The failure text cannot end the data's <script> element: page.js, the
  // data, uPlot and job_report.js are all there is.
  EXPECT_EQ(testing::CountOf(*page, "</script>"), 4u);
  EXPECT_THAT(*page, HasSubstr("\\u003c/pre\\u003e\\u003cscript\\u003e"));
}

TEST(JobReport, BadResultsAreAnError) {
  EXPECT_FALSE(RenderJobReport(json::array()).ok());
  EXPECT_FALSE(RenderJobReport(json{{"runs", 3}}).ok());
  auto r = RenderJobReport(json{{"runs", {{{"parameters", json::object()}, {"metrics", 1}}}}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "job results: runs[0].metrics: expected an object");
}

TEST(JobReportBrowser, EveryMetricAgainstEverySweptParameterDraws) {
  if (!std::filesystem::exists("/usr/bin/chromium")) GTEST_SKIP() << "no chromium";
  results::testing::TempDir dir;
  auto page = dir.path() / "report.html";
  ASSERT_TRUE(WriteJobReport(page, GridSweep()).ok());
  std::string dom = testing::ChromiumDom(page, dir.path() / "profile");
  ASSERT_THAT(dom, HasSubstr("data-ready=\"true\"")) << dom.substr(0, 2000);
  std::string errors = Between(dom, "<ul id=\"kfpbench-errors\"", "</ul>");
  EXPECT_THAT(errors, Not(HasSubstr("<li"))) << errors;
  std::string main = Between(dom, "<main id=\"app\">", "</main>");
  // 2 metrics x 2 swept parameters; steps (not swept) gets no chart.
  EXPECT_EQ(testing::CountOf(main, "data-chart=\"metric-vs-param\""), 4u);
  EXPECT_EQ(testing::CountOf(main, "data-drawn=\"true\""), 4u) << main.substr(0, 4000);
  EXPECT_THAT(main, Not(HasSubstr("data-param=\"steps\"")));
  EXPECT_EQ(testing::CountOf(main, "class=\"uplot"), 4u);
  // Against batch_size: one line per model; against model: one per batch size.
  std::string by_batch =
      Between(main, "data-metric=\"images_per_sec\" data-param=\"batch_size\"", "data-chart=");
  EXPECT_THAT(by_batch, HasSubstr(">model=resnet50<")) << by_batch.substr(0, 3000);
  EXPECT_THAT(by_batch, HasSubstr(">model=vgg16<"));
  std::string by_model =
      Between(main, "data-metric=\"images_per_sec\" data-param=\"model\"", "data-chart=");
  EXPECT_THAT(by_model, HasSubstr(">batch_size=16<")) << by_model.substr(0, 3000);
  EXPECT_THAT(by_model, HasSubstr(">batch_size=256<"));
  // The axis kind is drawn on the canvas; the chart box says it too.
  EXPECT_THAT(by_model, HasSubstr("data-axis=\"categorical\""));
  EXPECT_THAT(by_batch, HasSubstr("data-axis=\"log2\""));
  EXPECT_THAT(main, HasSubstr("<td>Failed</td>"));

  std::filesystem::path build(KFPBENCH_BINARY_DIR);
  std::filesystem::copy_file(page, build / "job-report-sample.html",
                             std::filesystem::copy_options::overwrite_existing);
}

TEST(JobReportBrowser, ANarrowNumericRangeGetsALinearAxis) {
  if (!std::filesystem::exists("/usr/bin/chromium")) GTEST_SKIP() << "no chromium";
  kube::JobSweepResult sweep{"lr", "PyTorchJob", "local", {}};
  sweep.swept = {"lr"};
  for (std::string lr : {"0.05", "0.01", "0.02"}) {
    kube::JobRunResult run;
    run.job_name = "lr-" + std::to_string(sweep.runs.size());
    run.index = static_cast<int>(sweep.runs.size());
    run.params = {{"lr", lr}};
    run.succeeded = true;
    run.metrics["last_loss"] = 1.0 / std::stod(lr);
    sweep.runs.push_back(run);
  }
  results::testing::TempDir dir;
  auto page = dir.path() / "report.html";
  ASSERT_TRUE(WriteJobReport(page, kube::ToJson(sweep)).ok());
  std::string dom = testing::ChromiumDom(page, dir.path() / "profile");
  ASSERT_THAT(dom, HasSubstr("data-ready=\"true\"")) << dom.substr(0, 2000);
  EXPECT_THAT(Between(dom, "<ul id=\"kfpbench-errors\"", "</ul>"), Not(HasSubstr("<li")));
  std::string main = Between(dom, "<main id=\"app\">", "</main>");
  EXPECT_EQ(testing::CountOf(main, "data-drawn=\"true\""), 1u);
  EXPECT_THAT(main, HasSubstr("data-axis=\"numeric\""));
}

TEST(JobReportBrowser, NoSweepStillRenders) {
  if (!std::filesystem::exists("/usr/bin/chromium")) GTEST_SKIP() << "no chromium";
  kube::JobSweepResult one{"ddp", "PyTorchJob", "local", {}};
  kube::JobRunResult run;
  run.job_name = "ddp-0";
  run.params = {{"batch_size", "16"}};
  run.succeeded = true;
  run.metrics["samples_per_sec"] = 120.5;
  one.runs.push_back(run);
  results::testing::TempDir dir;
  auto page = dir.path() / "report.html";
  ASSERT_TRUE(WriteJobReport(page, kube::ToJson(one)).ok());
  std::string dom = testing::ChromiumDom(page, dir.path() / "profile");
  ASSERT_THAT(dom, HasSubstr("data-ready=\"true\"")) << dom.substr(0, 2000);
  EXPECT_THAT(Between(dom, "<ul id=\"kfpbench-errors\"", "</ul>"), Not(HasSubstr("<li")));
  EXPECT_THAT(dom, HasSubstr("The config sweeps no parameter."));
  EXPECT_THAT(dom, HasSubstr("120.5"));
}

}  // namespace
}  // namespace kfpbench::report
