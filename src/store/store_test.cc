#include "store/store.h"

#include <filesystem>
#include <set>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "util/ids.h"

#include "store/test_support.h"

namespace kfpbench::store {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

kfp::Run MakeRun(int i, RuntimeState state) {
  kfp::Run r;
  r.run_id = fmt::format("run-{:03}", i);
  r.display_name = fmt::format("bench-{}", i);
  r.state = state;
  r.created_at = WallTime(std::chrono::seconds(1700000000 + i));
  r.runtime_config.parameters = {{"i", i}};
  return r;
}

using StoreTest = testing::InMemoryStoreTest;

TEST_F(StoreTest, PagesThroughRunsWithoutGapsOrRepeats) {
  for (int i = 0; i < 45; ++i)
    ASSERT_TRUE(store_->InsertRun(MakeRun(i, RuntimeState::kPending)).ok());
  std::set<std::string> seen;
  ListRequest req{"20", "", "created_at desc", ""};
  int pages = 0;
  int64_t last_created = INT64_MAX;
  for (;;) {
    auto page = store_->ListRuns(req, "", "");
    ASSERT_TRUE(page.ok()) << page.error().message;
    EXPECT_EQ(page->total_size, 45);
    for (const auto& r : page->items) {
      EXPECT_TRUE(seen.insert(r.run_id).second) << r.run_id;
      int64_t created = r.created_at.time_since_epoch().count();
      EXPECT_LT(created, last_created);
      last_created = created;
    }
    ++pages;
    if (page->next_page_token.empty()) break;
    req = ListRequest{"20", page->next_page_token, "", ""};
  }
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(seen.size(), 45u);
}

TEST_F(StoreTest, FiltersRunsByStateAndSubstring) {
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(
        store_->InsertRun(MakeRun(i, i % 2 ? RuntimeState::kSucceeded : RuntimeState::kFailed))
            .ok());
  }
  json f = {
      {"predicates", {{{"key", "state"}, {"operation", "EQUALS"}, {"string_value", "SUCCEEDED"}}}}};
  auto page = store_->ListRuns({"", "", "", f.dump()}, "", "");
  ASSERT_TRUE(page.ok()) << page.error().message;
  EXPECT_EQ(page->total_size, 5);
  json in = {{"predicates",
              {{{"key", "name"},
                {"operation", "IN"},
                {"string_values", {{"values", {"bench-1", "bench-2"}}}}}}}};
  EXPECT_EQ(store_->ListRuns({"", "", "", in.dump()}, "", "")->total_size, 2);
  json sub = {
      {"predicates", {{{"key", "name"}, {"operation", "IS_SUBSTRING"}, {"string_value", "h-1"}}}}};
  EXPECT_EQ(store_->ListRuns({"", "", "", sub.dump()}, "", "")->total_size, 1);
  json time = {{"predicates",
                {{{"key", "created_at"},
                  {"operation", "GREATER_THAN_EQUALS"},
                  {"timestamp_value", "2023-11-14T22:13:25Z"}}}}};
  EXPECT_EQ(store_->ListRuns({"", "", "", time.dump()}, "", "")->total_size, 5);
}

// KFP's SDK sends what protojson reads: the operation as its enum number and
// the value under its JSON name. Found by fuzzing: a number there threw.
TEST_F(StoreTest, FiltersReadAsProtojsonReadsThem) {
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(
        store_->InsertRun(MakeRun(i, i % 2 ? RuntimeState::kSucceeded : RuntimeState::kFailed))
            .ok());
  }
  json sdk = {{"predicates", {{{"key", "state"}, {"operation", 1}, {"stringValue", "FAILED"}}}}};
  auto page = store_->ListRuns({"", "", "", sdk.dump()}, "", "");
  ASSERT_TRUE(page.ok()) << page.error().message;
  EXPECT_EQ(page->total_size, 2);
  json in = {{"predicates",
              {{{"key", "name"}, {"operation", 8}, {"stringValues", {{"values", {"bench-1"}}}}}}}};
  EXPECT_EQ(store_->ListRuns({"", "", "", in.dump()}, "", "")->total_size, 1);
  for (const char* bad : {R"({"predicates":[{"key":"state","operation":4,"string_value":"x"}]})",
                          R"({"predicates":[{"key":"state","operation":[1],"string_value":"x"}]})",
                          R"({"predicates":[{"key":7,"operation":1,"string_value":"x"}]})",
                          R"({"predicates":[{"key":"state","op":1,"string_value":"x"}]})"}) {
    auto r = store_->ListRuns({"", "", "", bad}, "", "");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code, 400) << bad;
  }
}

TEST_F(StoreTest, SqlLookingFilterValuesAreJustValues) {
  ASSERT_TRUE(store_->InsertRun(MakeRun(1, RuntimeState::kPending)).ok());
  json f = {{"predicates",
             {{{"key", "name"}, {"operation", "EQUALS"}, {"string_value", "x' OR '1'='1"}}}}};
  auto page = store_->ListRuns({"", "", "", f.dump()}, "", "");
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->total_size, 0);
}

TEST_F(StoreTest, BadListRequestsAre400WithAReason) {
  struct Case {
    ListRequest req;
    const char* fragment;
  };
  for (
      const auto& c : std::vector<Case>{
          {{"-1", "", "", ""}, "The page size should be greater than 0. Got -1"},
          {{"abc", "", "", ""}, "page_size"},
          {{"", "!!!", "", ""}, "Invalid page token"},
          {{"", "", "colour", ""}, "Invalid sorting field: \"colour\" on listable type Run"},
          {{"", "", "name sideways", ""}, "Received invalid sort by format \"name sideways\""},
          {{"", "", "", "{"}, "failed to parse valid filter from \"{\""},
          {{"", "", "",
            R"({"predicates":[{"key":"id; DROP TABLE runs","operation":"EQUALS","string_value":"x"}]})"},
           "no support for filtering on unrecognized field \"id; DROP TABLE runs\""},
          {{"", "", "",
            R"({"predicates":[{"key":"state","operation":"LIKE","string_value":"x"}]})"},
           "LIKE"},
          // KFP's run model has no pipeline_version_id (model/run.go).
          {{"", "", "pipeline_version_id", ""}, "Invalid sorting field"},
          {{"", "", "", "%zz"}, "invalid URL escape \"%zz\""},
      }) {
    auto r = store_->ListRuns(c.req, "", "");
    ASSERT_FALSE(r.ok()) << c.fragment;
    EXPECT_EQ(r.error().code, 400);
    EXPECT_THAT(r.error().message, HasSubstr(c.fragment)) << r.error().message;
  }
}

TEST_F(StoreTest, PageSizeIsCappedAt200) {
  for (int i = 0; i < 205; ++i)
    ASSERT_TRUE(store_->InsertRun(MakeRun(i, RuntimeState::kPending)).ok());
  auto page = store_->ListRuns({"1000", "", "", ""}, "", "");
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->items.size(), 200u);
  EXPECT_EQ(store_->ListRuns({}, "", "")->items.size(), 20u);
}

TEST_F(StoreTest, RunStatusUpdatesRoundTrip) {
  ASSERT_TRUE(store_->InsertRun(MakeRun(1, RuntimeState::kPending)).ok());
  RunStatus status;
  status.state = RuntimeState::kSucceeded;
  status.finished_at = WallTime(std::chrono::seconds(1700000100));
  status.state_history = {{WallTime(std::chrono::seconds(1700000001)), RuntimeState::kRunning, {}}};
  kfp::PipelineTaskDetail task;
  task.task_id = "t1";
  task.state = RuntimeState::kSucceeded;
  status.task_details = {task};
  ASSERT_TRUE(store_->UpdateRunStatus("run-001", status).ok());
  auto run = store_->GetRun("run-001");
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->state, RuntimeState::kSucceeded);
  EXPECT_EQ(run->finished_at, status.finished_at);
  ASSERT_EQ(run->task_details.size(), 1u);
  EXPECT_EQ(run->task_details[0].task_id, "t1");
  EXPECT_EQ(run->runtime_config.parameters, json({{"i", 1}}));
  EXPECT_EQ(store_->UpdateRunStatus("nope", status).error().code, 404);
  EXPECT_EQ(store_->GetRun("nope").error().code, 404);
}

TEST_F(StoreTest, PipelinesVersionsAndConflicts) {
  kfp::Pipeline p{"p1", "hello", "hello", "", "", WallClock::now(), std::nullopt};
  ASSERT_TRUE(store_->InsertPipeline(p).ok());
  p.pipeline_id = "p2";
  EXPECT_EQ(store_->InsertPipeline(p).error().code, 409);
  kfp::PipelineVersion v;
  v.pipeline_id = "p1";
  v.pipeline_version_id = "v1";
  v.name = v.display_name = "hello";
  v.created_at = WallClock::now();
  v.pipeline_spec = {{"pipelineInfo", {{"name", "hello"}}}};
  ASSERT_TRUE(store_->InsertPipelineVersion(v).ok());
  auto latest = store_->LatestPipelineVersion("p1");
  ASSERT_TRUE(latest.ok());
  EXPECT_EQ(latest->pipeline_spec["pipelineInfo"]["name"], "hello");
  EXPECT_EQ(store_->DeletePipeline("p1", false).error().code, 400);
  ASSERT_TRUE(store_->DeletePipeline("p1", true).ok());
  EXPECT_EQ(store_->GetPipelineVersion("p1", "v1").error().code, 404);
  EXPECT_EQ(store_->DeletePipeline("p1", true).error().code, 404);
}

// A database written before pipelines and versions had tags opens with the
// column added, every old row untagged.
TEST(StoreOnDisk, OldDatabasesGainTags) {
  auto dir = std::filesystem::temp_directory_path() / ("kfpbench-store-" + NewUuid());
  std::filesystem::create_directories(dir);
  std::string path = (dir / "state.db").string();
  {
    auto db = Database::Open(path);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)
                    ->Exec("CREATE TABLE pipelines (id TEXT PRIMARY KEY, name TEXT NOT NULL, "
                           "display_name TEXT NOT NULL, description TEXT NOT NULL DEFAULT '', "
                           "namespace TEXT NOT NULL DEFAULT '', created_at_ns INTEGER NOT NULL, "
                           "UNIQUE (namespace, name));"
                           "CREATE TABLE pipeline_versions (id TEXT PRIMARY KEY, pipeline_id TEXT "
                           "NOT NULL REFERENCES pipelines(id), name TEXT NOT NULL, display_name "
                           "TEXT NOT NULL, description TEXT NOT NULL DEFAULT '', created_at_ns "
                           "INTEGER NOT NULL, package_url TEXT NOT NULL DEFAULT '', "
                           "code_source_url TEXT NOT NULL DEFAULT '', pipeline_spec TEXT NOT NULL, "
                           "UNIQUE (pipeline_id, name));"
                           "INSERT INTO pipelines VALUES ('old', 'old', 'old', '', '', 1);")
                    .ok());
  }
  auto s = Store::Open(path);
  ASSERT_TRUE(s.ok()) << s.error().message;
  auto old = (*s)->GetPipeline("old");
  ASSERT_TRUE(old.ok()) << old.error().message;
  EXPECT_TRUE(old->tags.has_value() && old->tags->empty());
  kfp::Pipeline p{"new", "new", "new", "", "", WallClock::now(), kfp::Tags{{"team", "a"}}};
  ASSERT_TRUE((*s)->InsertPipeline(p).ok());
  EXPECT_EQ((*s)->GetPipeline("new")->tags, p.tags);
  std::filesystem::remove_all(dir);
}

TEST(StoreOnDisk, SurvivesReopen) {
  auto dir = std::filesystem::temp_directory_path() / ("kfpbench-store-" + NewUuid());
  std::filesystem::create_directories(dir);
  std::string path = (dir / "state.db").string();
  {
    auto s = Store::Open(path);
    ASSERT_TRUE(s.ok()) << s.error().message;
    ASSERT_TRUE((*s)->InsertRun(MakeRun(7, RuntimeState::kRunning)).ok());
  }
  auto s = Store::Open(path);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)->GetRun("run-007")->state, RuntimeState::kRunning);
  std::filesystem::remove_all(dir);
  EXPECT_FALSE(Store::Open("/nonexistent-dir/x/state.db").ok());
}

}  // namespace
}  // namespace kfpbench::store

namespace kfpbench::store {
namespace {

// Issue #13, item 2: a write that throws halfway (a JSON dump of a string that
// is not UTF-8) used to leave its transaction open, so every later write
// failed and acknowledged ones were gone after a restart.
TEST(StoreTransactions, AWriteThatThrowsRollsBackAndLaterWritesAreDurable) {
  auto path = std::filesystem::temp_directory_path() / ("kfpbench-tx-" + NewUuid() + ".db");
  {
    auto store = Store::Open(path.string());
    ASSERT_TRUE(store.ok()) << store.error().message;
    kfp::Pipeline p;
    p.pipeline_id = "p1";
    p.name = "bad";
    p.display_name = "bad";
    kfp::PipelineVersion v;
    v.pipeline_id = "p1";
    v.pipeline_version_id = "v1";
    v.name = "bad";
    v.pipeline_spec = {{"pipelineInfo", {{"name", "ech\x83o"}}}};  // dump() throws
    auto s = (*store)->InsertPipelineAndVersion(p, v);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code, 500);
    EXPECT_FALSE((*store)->GetPipeline("p1").ok());  // nothing half-written

    kfp::Experiment e;
    e.experiment_id = "e1";
    e.display_name = "after";
    ASSERT_TRUE((*store)->InsertExperiment(e).ok());
    v.pipeline_spec = {{"pipelineInfo", {{"name", "echo"}}}};
    ASSERT_TRUE((*store)->InsertPipelineAndVersion(p, v).ok());
  }
  auto reopened = Store::Open(path.string());
  ASSERT_TRUE(reopened.ok()) << reopened.error().message;
  EXPECT_TRUE((*reopened)->GetExperiment("e1").ok());
  EXPECT_TRUE((*reopened)->GetPipeline("p1").ok());
  reopened->reset();
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path.string() + suffix);
}

}  // namespace
}  // namespace kfpbench::store
