// Pod lifecycles from kubectl's JSON: the hand-written fixtures in testdata/
// (a KFP run on Argo: an unschedulable-then-scheduled pod on a new node that
// pulls every image, pods whose images are all present) and small inline
// cases for the rules the fixtures do not reach.
#include "kube/pod_timeline.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <stdexcept>

#include "kube/json_schema.h"
#include "kube/testdata/fixtures.h"

namespace kfpbench::kube {
namespace {

using ::testing::HasSubstr;

namespace fs = std::filesystem;
using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

const char* kTrainPod = "hello-pipeline-x7k2p-system-container-impl-2917736631";
const char* kTrainDriver = "hello-pipeline-x7k2p-system-container-driver-1183203540";

// kubectl prints unset optional fields as null (lastProbeTime, eventTime); the
// API server reads null as unset, the schemas do not allow it.
json WithoutNulls(const json& j) {
  if (j.is_object()) {
    json out = json::object();
    for (const auto& [k, v] : j.items()) {
      if (!v.is_null()) out[k] = WithoutNulls(v);
    }
    return out;
  }
  if (j.is_array()) {
    json out = json::array();
    for (const auto& v : j) out.push_back(WithoutNulls(v));
    return out;
  }
  return j;
}

// The OpenAPI v3 document's schema with every $ref replaced by its target.
json Inlined(const json& schema, const json& components, int depth = 0) {
  if (depth > 40) return json::object();
  if (schema.is_object()) {
    if (auto ref = schema.find("$ref"); ref != schema.end()) {
      std::string name =
          ref->get<std::string>().substr(std::string("#/components/schemas/").size());
      return Inlined(components.at(name), components, depth + 1);
    }
    json out = json::object();
    for (const auto& [k, v] : schema.items()) out[k] = Inlined(v, components, depth + 1);
    return out;
  }
  if (schema.is_array()) {
    json out = json::array();
    for (const auto& v : schema) out.push_back(Inlined(v, components, depth + 1));
    return out;
  }
  return schema;
}

std::map<std::string, PodTimeline> ReadFixtures() {
  json pods = testdata::Load("kfp-pods.json");
  auto events = EventsByPod(testdata::Load("kfp-events.json"));
  std::map<std::string, PodTimeline> out;
  for (const auto& pod : pods["items"]) {
    std::string name = pod["metadata"]["name"];
    auto t = ReadPodTimeline(pod, events[name]);
    EXPECT_TRUE(t.ok()) << name << ": " << t.error().message;
    if (t.ok()) out[name] = *t;
  }
  return out;
}

const ContainerTimeline& C(const PodTimeline& p, const std::string& name) {
  for (const auto& c : p.containers) {
    if (c.name == name) return c;
  }
  throw std::runtime_error("no container " + name);
}

TEST(PodTimelineFixtures, AreInTheRealFormat) {
  fs::path shared = KFPBENCH_SOURCE_DIR "/../shared/kube";
  if (!fs::exists(shared)) GTEST_SKIP() << shared << " absent";
  std::ifstream pod_schema_file(shared / "jsonschema/v1.33-standalone-strict/pod-v1.json");
  json pod_schema = json::parse(pod_schema_file);
  json pods = testdata::Load("kfp-pods.json");
  ASSERT_EQ(pods["kind"], "List");
  ASSERT_EQ(pods["items"].size(), 4u);
  for (const auto& pod : pods["items"]) {
    auto errors = ValidateJson(pod_schema, WithoutNulls(pod));
    EXPECT_TRUE(errors.empty()) << pod["metadata"]["name"] << ": " << json(errors).dump(1);
  }
  json odd = pods["items"][0];
  odd["status"]["containerStatuses"][0]["startedAt"] = "2025-03-04T09:12:03Z";  // not a field
  EXPECT_FALSE(ValidateJson(pod_schema, WithoutNulls(odd)).empty());
  std::ifstream openapi_file(shared / "openapi-v3/api__v1_openapi.json");
  json components = json::parse(openapi_file)["components"]["schemas"];
  json event_schema = Inlined(components["io.k8s.api.core.v1.Event"], components);
  json events = testdata::Load("kfp-events.json");
  ASSERT_GT(events["items"].size(), 40u);
  for (const auto& e : events["items"]) {
    auto errors = ValidateJson(event_schema, WithoutNulls(e));
    EXPECT_TRUE(errors.empty()) << e["metadata"]["name"] << ": " << json(errors).dump(1);
  }
  // A bad field is caught: the check is not vacuous.
  json bad = events["items"][0];
  bad["count"] = "three";
  EXPECT_FALSE(ValidateJson(event_schema, bad).empty());
}

TEST(PodTimeline, UnschedulableThenScheduledOnANewNodeThatPullsEverything) {
  auto pods = ReadFixtures();
  ASSERT_TRUE(pods.count(kTrainPod));
  const PodTimeline& p = pods[kTrainPod];
  EXPECT_EQ(p.node, "gke-kfp-pool-1-3c8e1f2a-m4k");
  EXPECT_EQ(p.phase, "Succeeded");
  ASSERT_TRUE(p.scheduled && p.initialized && p.ready && p.containers_ready);
  EXPECT_EQ(*p.scheduled - p.created, seconds(41));
  EXPECT_EQ(*p.initialized - p.created, seconds(51));
  EXPECT_EQ(*p.ContainersStarted() - p.created, seconds(64));
  // Finished pods' Ready is False (PodCompleted): inferred from the start.
  EXPECT_TRUE(p.ready_inferred);
  EXPECT_EQ(*p.ready - p.created, seconds(64));
  EXPECT_EQ(p.failed_scheduling, 2);  // series.count of the scheduler's event
  EXPECT_TRUE(p.events_read);
  // Durations from the Pulled messages, not the second-resolution timestamps.
  EXPECT_EQ(C(p, "init").pull, milliseconds(4127));
  EXPECT_TRUE(C(p, "init").init);
  EXPECT_EQ(C(p, "kfp-launcher").pull, milliseconds(2311));
  EXPECT_EQ(C(p, "main").pull, milliseconds(11846));
  // The init container pulled argoexec; the wait container found it there.
  EXPECT_FALSE(C(p, "wait").pull.has_value());
  EXPECT_TRUE(C(p, "wait").image_present);
  ASSERT_NE(p.Main(), nullptr);
  EXPECT_EQ(p.Main()->name, "main");
  EXPECT_EQ(*p.Main()->finished - *p.Main()->started, seconds(30));
  EXPECT_EQ(p.Main()->exit_code, 0);
}

TEST(PodTimeline, EveryImageAlreadyPresent) {
  auto pods = ReadFixtures();
  ASSERT_EQ(pods.size(), 4u);
  const PodTimeline& d = pods[kTrainDriver];
  EXPECT_EQ(*d.scheduled - d.created, seconds(0));
  EXPECT_EQ(*d.initialized - d.created, seconds(2));
  EXPECT_EQ(d.failed_scheduling, 0);
  int present = 0;
  for (const auto& c : d.containers) {
    EXPECT_FALSE(c.pull.has_value()) << c.name;
    present += c.image_present;
  }
  EXPECT_EQ(present, 3);
  EXPECT_EQ(d.containers.size(), 3u);  // init, wait, main
}

TEST(PodTimeline, EventsOfOtherPodsAndOfDeletedPodsAreKeptApart) {
  auto by_pod = EventsByPod(testdata::Load("kfp-events.json"));
  EXPECT_TRUE(by_pod.count("ml-pipeline-7d9c6b5f8-kq2xn"));
  // Run 2's executor pod is gone, its events are still listed.
  EXPECT_TRUE(by_pod.count("hello-pipeline-q9d4m-system-container-impl-118270443"));
  EXPECT_EQ(by_pod[kTrainPod].size(), 18u);
}

json Pod(const std::string& phase, json conditions, json statuses, json container_extra = {}) {
  json main = {{"name", "main"}, {"image", "busybox:1.36"}};
  if (!container_extra.is_null()) main.update(container_extra);
  return {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", "p"}, {"uid", "u-1"}, {"creationTimestamp", "2025-03-04T10:00:00Z"}}},
      {"spec", {{"containers", {main}}, {"nodeName", "n1"}}},
      {"status", {{"phase", phase}, {"conditions", conditions}, {"containerStatuses", statuses}}}};
}

json Event(const std::string& reason, const std::string& message, const std::string& at,
           const std::string& uid = "u-1") {
  return {{"kind", "Event"},
          {"involvedObject",
           {{"kind", "Pod"}, {"name", "p"}, {"uid", uid}, {"fieldPath", "spec.containers{main}"}}},
          {"reason", reason},
          {"message", message},
          {"firstTimestamp", at},
          {"lastTimestamp", at},
          {"count", 1},
          {"eventTime", nullptr}};
}

TEST(PodTimeline, RunningPodWithAProbeUsesItsReadyCondition) {
  json conditions = {
      {{"type", "PodScheduled"},
       {"status", "True"},
       {"lastTransitionTime", "2025-03-04T10:00:01Z"}},
      {{"type", "Ready"}, {"status", "True"}, {"lastTransitionTime", "2025-03-04T10:00:09Z"}},
      {{"type", "ContainersReady"},
       {"status", "True"},
       {"lastTransitionTime", "2025-03-04T10:00:09Z"}}};
  json statuses = {{{"name", "main"},
                    {"restartCount", 1},
                    {"state", {{"running", {{"startedAt", "2025-03-04T10:00:04Z"}}}}}}};
  auto p = ReadPodTimeline(
      Pod("Running", conditions, statuses, {{"readinessProbe", {{"httpGet", {{"port", 8080}}}}}}),
      {});
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_FALSE(p->ready_inferred);
  EXPECT_EQ(*p->ready - p->created, seconds(9));
  EXPECT_EQ(*p->ContainersStarted() - p->created, seconds(4));
  EXPECT_EQ(p->containers[0].restarts, 1);
  EXPECT_FALSE(p->containers[0].finished.has_value());
  EXPECT_FALSE(p->events_read);
}

// No node fits: the pod waits for capacity and says why, rather than
// reading as a pod slow to start.
TEST(PodTimeline, APodNoNodeFitsIsUnschedulable) {
  json conditions = {{{"type", "PodScheduled"},
                      {"status", "False"},
                      {"reason", "Unschedulable"},
                      {"message", "0/4 nodes are available: 4 Insufficient cpu."},
                      {"lastTransitionTime", "2025-03-04T10:00:01Z"}}};
  auto p = ReadPodTimeline(Pod("Pending", conditions, json::array(), json::object()), {});
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->unschedulable, "0/4 nodes are available: 4 Insufficient cpu.");
  EXPECT_FALSE(p->scheduled.has_value());
  // Scheduling gates hold a pod back too, but not for want of a node.
  conditions[0]["reason"] = "SchedulingGated";
  EXPECT_TRUE(ReadPodTimeline(Pod("Pending", conditions, json::array(), json::object()), {})
                  ->unschedulable.empty());
}

TEST(PodTimeline, FinishedPodWithAProbeHasNoReadyTime) {
  json statuses = {{{"name", "main"},
                    {"state",
                     {{"terminated",
                       {{"startedAt", "2025-03-04T10:00:04Z"},
                        {"finishedAt", "2025-03-04T10:00:08Z"},
                        {"exitCode", 3}}}}}}};
  auto p = ReadPodTimeline(
      Pod("Failed", json::array(), statuses, {{"readinessProbe", {{"exec", json::object()}}}}), {});
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->ready.has_value());
  EXPECT_FALSE(p->ready_inferred);
  EXPECT_EQ(p->containers[0].exit_code, 3);
}

TEST(PodTimeline, PullTimeFromTimestampsWhenTheMessageHasNone) {
  std::vector<json> events = {
      Event("Pulling", "Pulling image \"busybox:1.36\"", "2025-03-04T10:00:02Z"),
      Event("Pulled", "Successfully pulled image \"busybox:1.36\"", "2025-03-04T10:00:07Z"),
      // A pod of the same name from an earlier attempt: ignored.
      Event("Pulled", "Successfully pulled image \"busybox:1.36\" in 1m0s", "2025-03-04T09:00:07Z",
            "u-0")};
  auto p = ReadPodTimeline(Pod("Pending", json::array(), json::array()), events);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->containers[0].pull, seconds(5));
  EXPECT_FALSE(p->ContainersStarted().has_value());
}

TEST(PodTimeline, FailedPullsAreMarked) {
  std::vector<json> events = {
      Event("Failed",
            "Failed to pull image \"busybox:1.99\": rpc error: code = NotFound desc = failed to "
            "pull and unpack image",
            "2025-03-04T10:00:03Z"),
      Event("BackOff", "Back-off pulling image \"busybox:1.99\"", "2025-03-04T10:00:04Z")};
  auto p = ReadPodTimeline(Pod("Pending", json::array(), json::array()), events);
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->containers[0].pull_failed);
  EXPECT_FALSE(p->containers[0].pull.has_value());
}

TEST(PodTimeline, BadInputIsAnErrorNamingThePod) {
  json pod = Pod("Running", json::array(), json::array());
  pod["metadata"]["creationTimestamp"] = "yesterday";
  auto p = ReadPodTimeline(pod, {});
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.error().message, HasSubstr("pod p metadata.creationTimestamp"))
      << p.error().message;
  pod["metadata"].erase("creationTimestamp");
  EXPECT_FALSE(ReadPodTimeline(pod, {}).ok());
  EXPECT_FALSE(ReadPodTimeline(json::object(), {}).ok());
  EXPECT_FALSE(ReadPodTimeline(json("not a pod"), {}).ok());
  json conditions = {{{"type", "PodScheduled"}, {"status", "True"}, {"lastTransitionTime", 5}}};
  auto c = ReadPodTimeline(Pod("Running", conditions, json::array()), {});
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.error().message, HasSubstr("PodScheduled")) << c.error().message;
}

TEST(PodTimeline, PullDurationFromMessage) {
  auto d = [](const std::string& m) { return PullDurationFromMessage(m); };
  EXPECT_EQ(d("Successfully pulled image \"a:1\" in 2.153s (2.153s including waiting). Image "
              "size: 1 bytes."),
            milliseconds(2153));
  EXPECT_EQ(d("Successfully pulled image \"a:1\" in 2.153267842s"), Duration(2153267842));
  EXPECT_EQ(d("Successfully pulled image \"a:1\" in 1m2.5s (1m3s including waiting)"),
            milliseconds(62500));
  EXPECT_EQ(d("Successfully pulled image \"a:1\" in 850.3ms (850.3ms including waiting)"),
            std::chrono::microseconds(850300));
  EXPECT_EQ(d("Successfully pulled image \"a:1\" in 12\xc2\xb5s"), std::chrono::microseconds(12));
  EXPECT_EQ(d("Successfully pulled image \"registry.in x/a\" in 3s"), seconds(3));
  EXPECT_FALSE(d("Container image \"a:1\" already present on machine").has_value());
  EXPECT_FALSE(d("Successfully pulled image \"a:1\"").has_value());
  EXPECT_FALSE(d("Successfully pulled image \"a:1\" in soon").has_value());
}

}  // namespace
}  // namespace kfpbench::kube
