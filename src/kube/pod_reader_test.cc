// ReadPods against a fake kubectl replaying the hand-written kubectl outputs
// in testdata/ (not recordings: no cluster is reachable from the tests).
#include "kube/pod_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kube/testdata/fixtures.h"

namespace kfpbench::kube {
namespace {

using ::testing::HasSubstr;

const std::vector<std::string> kPods = {
    "hello-pipeline-x7k2p-system-container-driver-1183203540",
    "hello-pipeline-x7k2p-system-container-impl-2917736631",
    "hello-pipeline-x7k2p-system-container-driver-3046821975",
    "hello-pipeline-x7k2p-system-container-impl-3490011842",
    "hello-pipeline-q9d4m-system-container-impl-118270443",  // deleted
};

PodReaderOptions Options(size_t batch = 50) {
  PodReaderOptions o;
  o.kubectl = testdata::FakeKubectl();
  o.context = "gke_kfp-bench_europe-west4-a_kfp";
  o.namespace_ = "kubeflow";
  o.batch = batch;
  return o;
}

TEST(PodReader, ReadsPodsInBatchesAndEventsOnce) {
  testdata::FakeKubectlEnv env;
  auto r = ReadPods(kPods, Options(2));
  EXPECT_TRUE(r.errors.empty()) << r.errors[0];
  EXPECT_EQ(r.pods.size(), 4u);
  EXPECT_EQ(r.missing, std::set<std::string>{kPods[4]});
  EXPECT_TRUE(r.unread.empty());
  EXPECT_TRUE(r.events_read);
  // Only our pods' events: not the API server's, not the deleted pod's.
  EXPECT_EQ(r.events.size(), 4u);
  EXPECT_EQ(r.events.at(kPods[1]).size(), 18u);
  auto calls = env.Calls();
  ASSERT_EQ(calls.size(), 5u);
  EXPECT_EQ(r.kubectl_calls, 5);
  EXPECT_EQ(calls[0], "--context=gke_kfp-bench_europe-west4-a_kfp get pods " + kPods[0] + " " +
                          kPods[1] + " -n kubeflow --ignore-not-found -o json");
  // The last batch holds one name: kubectl prints the Pod itself, or nothing.
  EXPECT_EQ(calls[2], "--context=gke_kfp-bench_europe-west4-a_kfp get pods " + kPods[4] +
                          " -n kubeflow --ignore-not-found -o json");
  // The name not found might be an Argo node ID: its workflow's pods are asked for.
  EXPECT_EQ(calls[3],
            "--context=gke_kfp-bench_europe-west4-a_kfp get pods -n kubeflow -l "
            "workflows.argoproj.io/workflow in (hello-pipeline-q9d4m-system-container-impl) -o "
            "json");
  EXPECT_EQ(calls[4],
            "--context=gke_kfp-bench_europe-west4-a_kfp get events -n kubeflow --field-selector "
            "involvedObject.kind=Pod -o json");
}

TEST(PodReader, OneNamePrintsThePodItself) {
  testdata::FakeKubectlEnv env;
  auto r = ReadPods({kPods[1], kPods[1], ""}, Options());
  EXPECT_EQ(r.pods.size(), 1u);
  EXPECT_EQ(env.Calls().size(), 2u);
  EXPECT_EQ(r.pods.at(kPods[1])["kind"], "Pod");
}

TEST(PodReader, KubectlFailuresAreCountedNotFatal) {
  {
    testdata::FakeKubectlEnv env("events");
    auto r = ReadPods(kPods, Options());
    EXPECT_EQ(r.pods.size(), 4u);
    EXPECT_FALSE(r.events_read);
    EXPECT_TRUE(r.events.empty());
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_EQ(r.errors[0],
              "kubectl get events failed (exit 1): error: You must be logged in to the server "
              "(Unauthorized)");
  }
  {
    testdata::FakeKubectlEnv env("pods");
    auto r = ReadPods(kPods, Options(3));
    EXPECT_TRUE(r.pods.empty());
    EXPECT_EQ(r.unread.size(), 5u);
    EXPECT_TRUE(r.missing.empty());
    EXPECT_EQ(r.errors.size(), 2u);  // one per batch; no events call without pods
    EXPECT_EQ(env.Calls().size(), 2u);
  }
  {
    PodReaderOptions o = Options();
    o.kubectl = "/nonexistent/kubectl";
    auto r = ReadPods(kPods, o);
    EXPECT_EQ(r.unread.size(), 5u);
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_THAT(r.errors[0], HasSubstr("kubectl get pods")) << r.errors[0];
  }
}

TEST(PodReader, NothingToReadCallsNothing) {
  testdata::FakeKubectlEnv env;
  auto r = ReadPods({}, Options());
  EXPECT_EQ(r.kubectl_calls, 0);
  EXPECT_TRUE(env.Calls().empty());
  // The wrong namespace finds nothing, and asks for no events.
  PodReaderOptions o = Options();
  o.namespace_ = "team-a";
  r = ReadPods(kPods, o);
  EXPECT_EQ(r.missing.size(), 5u);
  EXPECT_EQ(r.kubectl_calls, 2);  // the names, then their would-be workflows in one call
}

TEST(PodReader, ArgoNodeIdsResolveThroughTheirWorkflowsPods) {
  // Some KFP versions report the Argo node ID as a task's pod_name; Argo
  // names the pod <workflow>-<template>-<id digits> and annotates the node ID.
  testdata::FakeKubectlEnv env;
  auto r = ReadPods({"hello-pipeline-x7k2p-1183203540", "hello-pipeline-x7k2p-2917736631",
                     "hello-pipeline-zzzzz-1", "not-a-node-id"},
                    Options());
  EXPECT_TRUE(r.errors.empty());
  ASSERT_EQ(r.pods.size(), 2u);
  EXPECT_EQ(r.pods.at("hello-pipeline-x7k2p-2917736631")["metadata"]["name"], kPods[1]);
  EXPECT_EQ(r.events.at("hello-pipeline-x7k2p-2917736631").size(), 18u);
  EXPECT_EQ(r.missing, (std::set<std::string>{"hello-pipeline-zzzzz-1", "not-a-node-id"}));
  auto calls = env.Calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_THAT(calls[1], HasSubstr("-l workflows.argoproj.io/workflow in "
                                  "(hello-pipeline-x7k2p,hello-pipeline-zzzzz) -o json"))
      << calls[1];
}

}  // namespace
}  // namespace kfpbench::kube
