#include <unistd.h>

#include <filesystem>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "store/store.h"

#include "store/test_support.h"

namespace kfpbench::store {
namespace {

using TaskCacheStoreTest = testing::InMemoryStoreTest;

TEST_F(TaskCacheStoreTest, CachedExecutionsAreFoundByScopeAndFingerprint) {
  CachedExecutionRow row{"pipeline/p", "abc",        "run-1",
                         "task-1",     R"({"x":1})", WallTime(std::chrono::seconds(1700000000))};
  ASSERT_TRUE(store_->PutCachedExecution(row).ok());
  auto hit = store_->GetCachedExecution("pipeline/p", "abc");
  ASSERT_TRUE(hit.ok()) << hit.error().message;
  ASSERT_TRUE(hit->has_value());
  EXPECT_EQ((*hit)->run_id, "run-1");
  EXPECT_EQ((*hit)->task_id, "task-1");
  EXPECT_EQ((*hit)->outputs, R"({"x":1})");
  EXPECT_EQ((*hit)->created_at, row.created_at);

  // Another pipeline's scope, or another fingerprint, is a miss.
  EXPECT_FALSE(store_->GetCachedExecution("pipeline/q", "abc")->has_value());
  EXPECT_FALSE(store_->GetCachedExecution("pipeline/p", "abd")->has_value());

  // The newest execution wins.
  row.run_id = "run-2";
  ASSERT_TRUE(store_->PutCachedExecution(row).ok());
  EXPECT_EQ((*store_->GetCachedExecution("pipeline/p", "abc"))->run_id, "run-2");
}

TEST_F(TaskCacheStoreTest, CacheSurvivesReopeningTheDatabase) {
  const auto path =
      std::filesystem::temp_directory_path() / fmt::format("kfpbench-cache-{}.db", ::getpid());
  {
    auto s = Store::Open(path.string());
    ASSERT_TRUE(s.ok()) << s.error().message;
    ASSERT_TRUE((*s)->PutCachedExecution({"pipeline/p", "f", "r", "t", "{}", {}}).ok());
  }
  {
    auto s = Store::Open(path.string());
    ASSERT_TRUE(s.ok()) << s.error().message;
    EXPECT_TRUE((*s)->GetCachedExecution("pipeline/p", "f")->has_value());
  }
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path.string() + suffix);
}

TEST_F(TaskCacheStoreTest, RetryTasksAreReplacedPerRunAndGoWithTheRun) {
  kfp::Run run;
  // Built with fmt: GCC 12 flags assigning a short literal here (-Wrestrict).
  run.run_id = fmt::format("run-{}", 1);
  run.display_name = fmt::format("retried-{}", 1);
  ASSERT_TRUE(store_->InsertRun(run).ok());
  ASSERT_TRUE(store_->PutRetryTasks("run-1", {{"a", "{}"}, {"b", "{}"}}).ok());
  ASSERT_TRUE(store_->PutRetryTasks("run-1", {{"c", "{\"n\":1}"}}).ok());
  auto tasks = store_->GetRetryTasks("run-1");
  ASSERT_TRUE(tasks.ok()) << tasks.error().message;
  ASSERT_EQ(tasks->size(), 1u);
  EXPECT_EQ((*tasks)[0].first, "c");
  EXPECT_EQ((*tasks)[0].second, "{\"n\":1}");
  EXPECT_TRUE(store_->GetRetryTasks("other")->empty());

  ASSERT_TRUE(store_->DeleteRun("run-1").ok());
  EXPECT_TRUE(store_->GetRetryTasks("run-1")->empty());
}

}  // namespace
}  // namespace kfpbench::store
