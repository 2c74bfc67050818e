#include "kube/log_metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kube/job_results.h"

namespace kfpbench::kube {
namespace {

using ::testing::HasSubstr;

MetricSpec Spec(const std::string& name, const std::string& regex, const std::string& jsonl = "") {
  MetricSpec s;
  s.name = name;
  s.regex = regex;
  s.jsonl = jsonl;
  return s;
}

TEST(LogMetrics, StripNamedGroupsCountsOnlyCapturingGroups) {
  auto r = StripNamedGroups(R"((?:a)(b)[(](?=x)\((?<value>[0-9.]+)(?P<other>c))");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->first, R"((?:a)(b)[(](?=x)\(([0-9.]+)(c))");
  EXPECT_EQ(r->second.at("value"), 2u);
  EXPECT_EQ(r->second.at("other"), 3u);
  EXPECT_FALSE(StripNamedGroups("(?<v").ok());
  EXPECT_FALSE(StripNamedGroups("(?<a>x)(?<a>y)").ok());
}

TEST(LogMetrics, RegexReadsTfCnnBenchmarkOutput) {
  // The line format of tf_cnn_benchmarks, which Kubebench's tf-cnn example runs.
  const std::string log =
      "Step\tImg/sec\ttotal_loss\n"
      "1\timages/sec: 10.5 +/- 0.0 (jitter = 0.0)\t7.7\n"
      "10\timages/sec: 12.5 +/- 0.3 (jitter = 0.9)\t7.6\n"
      "total images/sec: 12.41\n";
  auto m = LogMetric::Compile(Spec("images_per_sec", R"(^total images/sec: (?<value>[0-9.]+))"));
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->Extract(log), std::vector<double>{12.41});
  auto steps = LogMetric::Compile(Spec("step", R"(^\d+\timages/sec: (?P<step>[0-9.]+))"));
  ASSERT_TRUE(steps.ok()) << steps.error().message;
  EXPECT_EQ(steps->Extract(log), (std::vector<double>{10.5, 12.5}));
}

TEST(LogMetrics, JsonlSkipsOtherLinesAndReducesAcrossReplicas) {
  auto spec = Spec("samples_per_sec", "", "samples_per_sec");
  spec.per_replica = "mean";
  spec.across = "sum";
  auto m = LogMetric::Compile(spec);
  ASSERT_TRUE(m.ok());
  std::vector<ReplicaLog> logs = {
      {"Master", 0,
       "starting\n{\"samples_per_sec\": 100}\n{\"samples_per_sec\": 300}\n{bad json\n"},
      {"Worker", 0, "{\"samples_per_sec\": \"50\"}\n{\"other\": 1}\n"},
      {"Worker", 1, "nothing here\n"}};
  EXPECT_EQ(Evaluate(*m, logs), 250.0);
  spec.roles = {"Worker"};
  spec.across = "max";
  EXPECT_EQ(Evaluate(*LogMetric::Compile(spec), logs), 50.0);
  EXPECT_EQ(Evaluate(*m, {{"Worker", 0, "none"}}), std::nullopt);
}

TEST(LogMetrics, BadRegexIsAnErrorNamingTheMetric) {
  auto no_group = LogMetric::Compile(Spec("m", "(?<a>1)(?<b>2)"));
  ASSERT_FALSE(no_group.ok());
  EXPECT_THAT(no_group.error().message, HasSubstr("metrics.m.regex: needs a named group"));
  auto bad = LogMetric::Compile(Spec("m", "(?<value>[0-9"));
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("metrics.m.regex"));
}

TEST(JobResults, CsvHasOneRowPerRunAndQuotes) {
  JobSweepResult r{"tf-cnn", "TFJob", "local", {}};
  r.runs.push_back({"tf-cnn-0",
                    0,
                    {{"batch_size", "16"}, {"model", "a,b"}},
                    true,
                    "",
                    1.5,
                    {{"images_per_sec", 12.5}}});
  r.runs.push_back({"tf-cnn-1",
                    1,
                    {{"batch_size", "32"}},
                    false,
                    "worker-0 failed",
                    0.25,
                    {{"images_per_sec", std::nullopt}}});
  EXPECT_EQ(ToCsv(r),
            "config,run,job_name,status,duration_s,batch_size,model,images_per_sec\n"
            "tf-cnn,0,tf-cnn-0,Succeeded,1.5,16,\"a,b\",12.5\n"
            "tf-cnn,1,tf-cnn-1,Failed,0.25,32,,\n");
  auto j = ToJson(r);
  EXPECT_EQ(j["runs"][1]["error"], "worker-0 failed");
  EXPECT_TRUE(j["runs"][1]["metrics"]["images_per_sec"].is_null());
  EXPECT_EQ(j["runs"][0]["parameters"]["batch_size"], "16");
  EXPECT_EQ(
      UserParams({{"job_name", "x"}, {"config_dir", "/"}, {"namespace", "d"}, {"a", "1"}}).size(),
      1u);
}

}  // namespace
}  // namespace kfpbench::kube
