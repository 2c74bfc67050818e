#include "server/status_writer.h"

#include <gtest/gtest.h>

namespace kfpbench::server {
namespace {

store::RunStatus StatusOf(RuntimeState state, int history) {
  store::RunStatus s;
  s.state = state;
  for (int i = 0; i < history; ++i) {
    s.state_history.push_back({WallTime(std::chrono::seconds(1700000000 + i)), state, {}});
  }
  return s;
}

class StatusWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = store::Store::Open("");
    ASSERT_TRUE(s.ok());
    store_ = std::move(*s);
    kfp::Run r;
    r.run_id = "run-1";
    r.display_name = "run";
    r.state = RuntimeState::kPending;
    r.created_at = WallTime(std::chrono::seconds(1700000000));
    ASSERT_TRUE(store_->InsertRun(r).ok());
  }
  std::unique_ptr<store::Store> store_;
};

TEST_F(StatusWriterTest, TheNewestStatusOfARunLands) {
  StatusWriter writer(*store_);
  writer.Submit("run-1", StatusOf(RuntimeState::kRunning, 2));
  writer.Submit("run-1", StatusOf(RuntimeState::kRunning, 3));
  writer.Submit("run-1", StatusOf(RuntimeState::kSucceeded, 4));
  writer.Drain();
  auto run = store_->GetRun("run-1");
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->state, RuntimeState::kSucceeded);
  EXPECT_EQ(run->state_history.size(), 4u);
}

TEST_F(StatusWriterTest, KeptTasksLandWithTheStatusAndDeletedRunsAreSkipped) {
  StatusWriter writer(*store_);
  writer.Submit("run-1", StatusOf(RuntimeState::kFailed, 3),
                StatusWriter::KeptTasks{{"train", R"({"task_id": "t"})"}});
  writer.Submit("gone", StatusOf(RuntimeState::kRunning, 1));  // no row: nothing to write
  writer.Drain();
  auto kept = store_->GetRetryTasks("run-1");
  ASSERT_TRUE(kept.ok());
  ASSERT_EQ(kept->size(), 1u);
  EXPECT_EQ((*kept)[0].first, "train");
  EXPECT_EQ(store_->GetRun("run-1")->state, RuntimeState::kFailed);
}

TEST_F(StatusWriterTest, WriteNowWritesAWaitingStatusOnTheCallersThread) {
  StatusWriter writer(*store_);
  writer.Submit("run-1", StatusOf(RuntimeState::kCanceled, 2));
  writer.WriteNow("run-1");  // written here, or already by the writer
  EXPECT_EQ(store_->GetRun("run-1")->state, RuntimeState::kCanceled);
  EXPECT_FALSE(writer.WriteNow("run-1"));  // nothing waits any more
}

TEST_F(StatusWriterTest, WhatWaitsIsWrittenBeforeTheWriterStops) {
  {
    StatusWriter writer(*store_);
    for (int i = 1; i <= 50; ++i) writer.Submit("run-1", StatusOf(RuntimeState::kRunning, i));
    writer.Submit("run-1", StatusOf(RuntimeState::kSucceeded, 51));
  }
  EXPECT_EQ(store_->GetRun("run-1")->state, RuntimeState::kSucceeded);
}

}  // namespace
}  // namespace kfpbench::server
