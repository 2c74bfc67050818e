// run --kube-context: from the runs' task details to the pod lifecycle
// section, with a fake kubectl replaying the hand-written kubectl outputs in
// src/kube/testdata (real format, not recordings).
#include "harness/pod_collector.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/run_follower.h"
#include "kfp/model.h"
#include "kube/testdata/fixtures.h"

namespace kfpbench::harness {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

const std::string kTrainPod = "hello-pipeline-x7k2p-system-container-impl-2917736631";
const std::string kTrainDriver = "hello-pipeline-x7k2p-system-container-driver-1183203540";
const std::string kEvalPod = "hello-pipeline-x7k2p-system-container-impl-3490011842";
const std::string kEvalDriver = "hello-pipeline-x7k2p-system-container-driver-3046821975";
const std::string kGonePod = "hello-pipeline-q9d4m-system-container-impl-118270443";
const std::string kGoneDriver = "hello-pipeline-q9d4m-system-container-driver-520114960";

json Task(const std::string& name, const std::string& pod, json children) {
  return {{"run_id", "r"},
          {"task_id", name + "-id"},
          {"display_name", name},
          {"create_time", "2025-03-04T09:12:01Z"},
          {"start_time", "2025-03-04T09:12:06Z"},
          {"end_time", "2025-03-04T09:13:41Z"},
          {"state", "SUCCEEDED"},
          {"pod_name", pod},
          {"child_tasks", children}};
}

// A GetRun response: the step's own pod in pod_name, its driver pod among its
// child_tasks (KFP versions differ in which they fill; both are read).
results::RunRecord Record(
    const std::string& id, const std::string& state,
    std::vector<std::pair<std::string, std::pair<std::string, std::string>>> steps) {
  json tasks = json::array();
  json root_children = json::array();
  for (const auto& [name, pods] : steps) {
    tasks.push_back(Task(name, pods.first, json::array({{{"pod_name", pods.second}}})));
    root_children.push_back({{"task_id", name + "-id"}});
  }
  tasks.push_back(Task("hello-pipeline", "", root_children));
  json run = {{"run_id", id},
              {"display_name", "hello " + id},
              {"state", state},
              {"created_at", "2025-03-04T09:12:00Z"},
              {"finished_at", state == "RUNNING" ? "1970-01-01T00:00:00Z" : "2025-03-04T09:14:02Z"},
              {"run_details", {{"task_details", tasks}}}};
  auto parsed = kfp::RunFromJson(run, false);
  EXPECT_TRUE(parsed.ok()) << parsed.error().message;
  results::RunRecord record;
  record.run_id = id;
  AbsorbRun(*parsed, record);
  return record;
}

std::vector<results::RunRecord> Runs() {
  return {Record("6f1c2e7a", "SUCCEEDED",
                 {{"train", {kTrainPod, kTrainDriver}}, {"evaluate", {kEvalPod, kEvalDriver}}}),
          // Its workflow was deleted: the pods are gone.
          Record("b2d9e4f0", "SUCCEEDED", {{"train", {kGonePod, kGoneDriver}}}),
          // Still running when the benchmark ended: not read.
          Record("c3e0f5a1", "RUNNING", {{"train", {"still-running-pod", ""}}})};
}

kube::PodReaderOptions Options() {
  kube::PodReaderOptions o;
  o.kubectl = kube::testdata::FakeKubectl();
  o.context = "kfp";
  o.namespace_ = "kubeflow";
  return o;
}

TEST(PodCollector, PodsOfFinishedRunsFromTaskDetails) {
  auto refs = PodsOfRuns(Runs());
  ASSERT_EQ(refs.size(), 6u);
  EXPECT_EQ(refs[0].pod, kTrainPod);
  EXPECT_EQ(refs[0].step, "train");
  EXPECT_EQ(refs[0].run_id, "6f1c2e7a");
  EXPECT_EQ(refs[1].pod, kEvalPod);
  EXPECT_EQ(refs[2].pod, kTrainDriver);
  EXPECT_EQ(refs[2].step, "train (driver)");
  EXPECT_EQ(refs[5].pod, kGoneDriver);
  EXPECT_EQ(refs[5].run_id, "b2d9e4f0");
}

TEST(PodCollector, LatenciesPerStepAndMissingPods) {
  kube::testdata::FakeKubectlEnv env;
  results::PodLifecycle s = CollectPodLifecycle(Runs(), Options());
  EXPECT_TRUE(s.collected);
  EXPECT_EQ(s.context, "kfp");
  EXPECT_EQ(s.pods_requested, 6);
  EXPECT_EQ(s.pods.size(), 4u);
  EXPECT_EQ(s.kubectl_calls, 3);  // pods by name, the gone ones' would-be workflows, events
  EXPECT_TRUE(s.errors.empty());
  EXPECT_EQ(s.pods_without_events, 0);
  ASSERT_EQ(s.missing.size(), 2u);
  EXPECT_EQ(s.missing[0].pod, kGonePod);
  EXPECT_EQ(s.missing[0].why, "not found");
  EXPECT_EQ(s.missing[0].step, "train");

  ASSERT_EQ(s.steps.size(), 4u);
  const results::StepPodLatency& train = s.steps.at("train");
  EXPECT_EQ(train.pods, 1);
  EXPECT_EQ(train.failed_scheduling, 2);
  EXPECT_EQ(train.image_pulls, 3);
  EXPECT_EQ(train.images_present, 1);
  EXPECT_EQ(train.ready_inferred, 1);
  EXPECT_EQ(train.ms.at("scheduled").max(), 41000);
  EXPECT_EQ(train.ms.at("initialized").max(), 51000);
  EXPECT_EQ(train.ms.at("containers_started").max(), 64000);
  EXPECT_EQ(train.ms.at("ready").max(), 64000);
  EXPECT_EQ(train.ms.at("running").max(), 30000);
  EXPECT_EQ(train.ms.at("image_pull").count(), 3u);
  EXPECT_EQ(train.ms.at("image_pull").max(), 11846);
  EXPECT_EQ(train.ms.at("image_pull").min(), 2311);
  const results::StepPodLatency& eval = s.steps.at("evaluate");
  EXPECT_EQ(eval.image_pulls, 0);
  EXPECT_EQ(eval.images_present, 4);
  EXPECT_EQ(eval.ms.at("scheduled").max(), 0);
  EXPECT_EQ(eval.ms.count("image_pull"), 0u);
  EXPECT_EQ(s.steps.at("train (driver)").images_present, 3);
}

TEST(PodCollector, KubectlErrorsAreReportedNotFatal) {
  kube::testdata::FakeKubectlEnv env("events");
  results::PodLifecycle s = CollectPodLifecycle(Runs(), Options());
  EXPECT_EQ(s.pods.size(), 4u);
  EXPECT_EQ(s.pods_without_events, 4);
  ASSERT_EQ(s.errors.size(), 1u);
  EXPECT_THAT(s.errors[0], HasSubstr("Unauthorized"));
  // Without events there are no pull times, but the conditions still count.
  EXPECT_EQ(s.steps.at("train").image_pulls, 0);
  EXPECT_EQ(s.steps.at("train").ms.at("scheduled").max(), 41000);

  kube::testdata::FakeKubectlEnv failing("pods");
  s = CollectPodLifecycle(Runs(), Options());
  EXPECT_TRUE(s.pods.empty());
  ASSERT_EQ(s.missing.size(), 6u);
  EXPECT_EQ(s.missing[0].why, "kubectl failed");
  json j = results::PodLifecycleToJson(s);
  EXPECT_EQ(j["pods_unread"], 6);
  EXPECT_EQ(j["pods_missing"], 0);
}

TEST(PodCollector, JsonRoundTripAndShardsMerge) {
  kube::testdata::FakeKubectlEnv env;
  results::PodLifecycle s = CollectPodLifecycle(Runs(), Options());
  json j = results::PodLifecycleToJson(s);
  EXPECT_EQ(j["pods_read"], 4);
  EXPECT_EQ(j["pods_missing"], 2);
  EXPECT_EQ(j["steps"]["train"]["latency_ms"]["scheduled"]["p50"], 41000);
  EXPECT_EQ(j["pods"][0]["latency_ms"]["scheduled"], 41000);
  EXPECT_EQ(j["pods"][0]["containers"].size(), 4u);
  auto back = results::PodLifecycleFromJson(j);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(results::PodLifecycleToJson(*back), j);

  results::PodLifecycle merged;
  merged.Merge(*back);
  merged.Merge(s);
  EXPECT_EQ(merged.pods.size(), 8u);
  EXPECT_EQ(merged.steps.at("train").ms.at("image_pull").count(), 6u);
  EXPECT_EQ(merged.steps.at("train").failed_scheduling, 4);
  EXPECT_EQ(merged.pods_requested, 12);
  results::PodLifecycle not_collected;
  merged.Merge(not_collected);
  EXPECT_EQ(merged.pods.size(), 8u);
}

TEST(PodCollector, BadJsonNamesTheField) {
  kube::testdata::FakeKubectlEnv env;
  json j = results::PodLifecycleToJson(CollectPodLifecycle(Runs(), Options()));
  json bad = j;
  bad["steps"]["train"]["latency_ms"]["ready"]["histogram"] = "many";
  auto r = results::PodLifecycleFromJson(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("pod_lifecycle.steps.train.latency_ms.ready.histogram"))
      << r.error().message;
  bad = j;
  bad["pods"][1]["created_at"] = "later";
  r = results::PodLifecycleFromJson(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("pod_lifecycle.pods[1].created_at"))
      << r.error().message;
  bad = j;
  bad["pods"][0]["containers"][2]["pull_ms"] = "fast";
  EXPECT_FALSE(results::PodLifecycleFromJson(bad).ok());
  EXPECT_FALSE(results::PodLifecycleFromJson(json::array()).ok());
}

}  // namespace
}  // namespace kfpbench::harness
