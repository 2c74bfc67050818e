// Caching (cachingOptions.enableCache), what a retry keeps, and exit handlers
// after a terminate.
#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/engine.h"
#include "engine/engine_test_util.h"
#include "engine/task_cache.h"
#include "engine/task_record_json.h"
#include "util/test_support.h"

namespace kfpbench::engine {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;
using nlohmann::json;
using namespace testing;  // the part's test helpers

// The engine's side of the cache; the backend's lives in SQLite.
class MapCache : public TaskCache {
 public:
  std::optional<CachedExecution> Lookup(const std::string& scope,
                                        const std::string& fingerprint) override {
    ++lookups;
    auto it = entries.find(scope + " " + fingerprint);
    if (it == entries.end()) return std::nullopt;
    return it->second;
  }
  void Record(const std::string& scope, const std::string& fingerprint,
              const CachedExecution& execution) override {
    entries[scope + " " + fingerprint] = execution;
  }
  std::map<std::string, CachedExecution> entries;
  int lookups = 0;
};

// producer (cached) -> consumer (not cached), producer also writes an artifact.
const std::string kCached = kfpbench::testing::TestData("engine/testdata/cached.yaml");

std::string Cached(bool enable) {
  std::string yaml = kCached;
  yaml.replace(yaml.find("PRODUCER_CACHE"), 14, enable ? "true" : "false");
  return yaml;
}

class CacheTest : public EngineFixture {
 protected:
  CacheTest() {
    executor_.behave = [this](const TaskLaunch& l) {
      Behavior b;
      if (l.executor_label == "exec-producer") b.outputs["out"] = "made-" + l.run_id;
      if (l.executor_label == "exec-consumer" && fail_consumer_) b.fail = true;
      return b;
    };
    EngineOptions options;
    options.nodes = {{"node-a", 4, int64_t{8} << 30}};
    options.random_seed = 7;
    options.cache = &cache_;
    NewEngine(std::move(options));
  }
  ~CacheTest() override { engine_.reset(); }  // before the cache it uses

  const RunSnapshot& Run(const std::string& run_id, const std::string& yaml, json params,
                         std::map<std::string, TaskRecord> keep = {}) {
    RunRequest req;
    req.keep = std::move(keep);
    return SubmitAndRun(Request(run_id, yaml, std::move(params), std::move(req)));
  }

  int Launches(const std::string& label) const {
    return static_cast<int>(executor_.LaunchesOf(label).size());
  }
  const TaskLaunch& LastLaunch(const std::string& label) const {
    auto launches = executor_.LaunchesOf(label);
    EXPECT_FALSE(launches.empty());
    return *launches.back();
  }

  MapCache cache_;
  bool fail_consumer_ = false;
};

TEST_F(CacheTest, SameComponentAndInputsReuseTheEarlierOutputs) {
  const RunSnapshot first = Run("run-1", Cached(true), {{"text", "hi"}});
  ASSERT_EQ(first.state, RuntimeState::kSucceeded) << first.error;
  const TaskRecord* produced = FindTask(first, "producer");
  ASSERT_NE(produced, nullptr);
  EXPECT_EQ(produced->state, RuntimeState::kSucceeded);
  EXPECT_EQ(produced->cache_fingerprint.size(), 64u);
  const std::string artifact_path = LastLaunch("exec-consumer").argv.at(2);

  const RunSnapshot& second = Run("run-2", Cached(true), {{"text", "hi"}});
  ASSERT_EQ(second.state, RuntimeState::kSucceeded) << second.error;
  EXPECT_EQ(Launches("exec-producer"), 1);  // not run again
  const TaskRecord* cached = FindTask(second, "producer");
  ASSERT_NE(cached, nullptr);
  // KFP reports a cache hit as SKIPPED, with the fingerprint.
  EXPECT_EQ(cached->state, RuntimeState::kSkipped);
  EXPECT_EQ(cached->cache_fingerprint, produced->cache_fingerprint);
  EXPECT_TRUE(cached->error.empty());
  EXPECT_EQ(cached->outputs["parameters"]["out"], "made-run-1");
  // Downstream ran with the reused parameter and the earlier artifact.
  EXPECT_EQ(Launches("exec-consumer"), 2);
  const TaskLaunch& consumer = LastLaunch("exec-consumer");
  EXPECT_EQ(consumer.argv.at(1), "made-run-1");
  EXPECT_EQ(consumer.argv.at(2), artifact_path);
  EXPECT_EQ(FindTask(second, "consumer")->state, RuntimeState::kSucceeded);
}

TEST_F(CacheTest, OtherInputsOrAnotherComponentMiss) {
  Run("run-1", Cached(true), {{"text", "hi"}});
  const RunSnapshot& other_input = Run("run-2", Cached(true), {{"text", "ho"}});
  EXPECT_EQ(FindTask(other_input, "producer")->state, RuntimeState::kSucceeded);
  EXPECT_EQ(Launches("exec-producer"), 2);

  // Same inputs, but the component's command differs.
  std::string changed = Cached(true);
  changed.replace(changed.find("command: [produce,"), 18, "command: [produce2,");
  const RunSnapshot& other_command = Run("run-3", changed, {{"text", "hi"}});
  EXPECT_EQ(FindTask(other_command, "producer")->state, RuntimeState::kSucceeded);
  EXPECT_EQ(Launches("exec-producer"), 3);
}

TEST_F(CacheTest, DisabledCachingNeitherLooksUpNorSkips) {
  Run("run-1", Cached(false), {{"text", "hi"}});
  const RunSnapshot& second = Run("run-2", Cached(false), {{"text", "hi"}});
  EXPECT_EQ(FindTask(second, "producer")->state, RuntimeState::kSucceeded);
  EXPECT_TRUE(FindTask(second, "producer")->cache_fingerprint.empty());
  EXPECT_EQ(Launches("exec-producer"), 2);
  EXPECT_EQ(cache_.lookups, 0);
  EXPECT_TRUE(cache_.entries.empty());
}

TEST_F(CacheTest, FailedExecutionsAreNotCached) {
  executor_.behave = Always(Fails());
  Run("run-1", Cached(true), {{"text", "hi"}});
  EXPECT_TRUE(cache_.entries.empty());
  EXPECT_EQ(cache_.lookups, 1);
}

TEST_F(CacheTest, RetryKeepsSucceededTasksAndRerunsTheRest) {
  fail_consumer_ = true;
  const RunSnapshot first = Run("run-1", Cached(false), {{"text", "hi"}});
  ASSERT_EQ(first.state, RuntimeState::kFailed);
  const TaskRecord* producer = FindTask(first, "producer");
  ASSERT_NE(producer, nullptr);
  EXPECT_EQ(producer->key, "producer");

  // What the backend keeps and hands back, through its JSON form.
  auto kept = TaskRecordFromJson(json::parse(TaskRecordToJson(*producer).dump()));
  ASSERT_TRUE(kept.ok()) << kept.error().message;
  fail_consumer_ = false;
  loop_.RunUntil(loop_.Now() + 60s);
  const RunSnapshot& retried =
      Run("run-1", Cached(false), {{"text", "hi"}}, {{producer->key, *kept}});
  ASSERT_EQ(retried.state, RuntimeState::kSucceeded) << retried.error;
  EXPECT_EQ(Launches("exec-producer"), 1);
  EXPECT_EQ(Launches("exec-consumer"), 2);
  const TaskRecord* same = FindTask(retried, "producer");
  ASSERT_NE(same, nullptr);
  EXPECT_EQ(same->task_id, producer->task_id);
  EXPECT_EQ(same->pod_name, producer->pod_name);
  EXPECT_EQ(same->end_time, producer->end_time);
  EXPECT_EQ(States(same->history), States(producer->history));
  EXPECT_EQ(same->state, RuntimeState::kSucceeded);
  // The root lists the kept task as its child under its original id.
  const TaskRecord& root = retried.tasks.front();
  EXPECT_NE(std::find(root.child_task_ids.begin(), root.child_task_ids.end(), producer->task_id),
            root.child_task_ids.end());
  EXPECT_EQ(LastLaunch("exec-consumer").argv.at(1), "made-run-1");
}

TEST(TaskRecordJsonTest, RejectsMalformedRecords) {
  EXPECT_FALSE(TaskRecordFromJson(json::array()).ok());
  EXPECT_FALSE(TaskRecordFromJson(json{{"task_id", "x"}}).ok());
  TaskRecord r;
  r.task_id = "t";
  json j = TaskRecordToJson(r);
  j["state"] = "NOPE";
  auto bad = TaskRecordFromJson(j);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("NOPE"));
}

// exit-handler-1 wraps a long task; `final` is its exit task.
}  // namespace
}  // namespace kfpbench::engine
