// total_size from the trigger-kept run_counts must equal COUNT(*) whatever
// happens to the runs.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "store/store.h"

namespace kfpbench::store {
namespace {

using nlohmann::json;

kfp::Run MakeRun(const std::string& id, const std::string& experiment, RuntimeState state) {
  kfp::Run r;
  r.run_id = id;
  r.experiment_id = experiment;
  r.display_name = id;
  r.state = state;
  r.created_at = WallClock::now();
  return r;
}

int Total(Store& s, const std::string& experiment, const json& predicates) {
  std::string filter = predicates.empty() ? "" : json{{"predicates", predicates}}.dump();
  auto list = s.ListRuns({"1", "", "", filter}, experiment, "");
  EXPECT_TRUE(list.ok()) << (list.ok() ? "" : list.error().message);
  return list.ok() ? list->total_size : -1;
}

json Eq(const char* key, const char* value) {
  return {{"key", key}, {"operation", "EQUALS"}, {"string_value", value}};
}

TEST(RunCountsTest, TotalsFollowInsertsUpdatesArchivesAndDeletes) {
  auto opened = Store::Open("");
  ASSERT_TRUE(opened.ok());
  Store& s = **opened;
  for (int i = 0; i < 5; ++i) {
    // (append, not operator+: g++ 12 warns falsely about "a" + to_string)
    std::string id = "a";
    id += std::to_string(i);
    ASSERT_TRUE(s.InsertRun(MakeRun(id, "e1", RuntimeState::kPending)).ok());
  }
  ASSERT_TRUE(s.InsertRun(MakeRun("b0", "e2", RuntimeState::kPending)).ok());
  EXPECT_EQ(Total(s, "", json::array()), 6);
  EXPECT_EQ(Total(s, "e1", json::array()), 5);
  EXPECT_EQ(Total(s, "", json::array({Eq("state", "PENDING")})), 6);

  RunStatus done;
  done.state = RuntimeState::kSucceeded;
  ASSERT_TRUE(s.UpdateRunStatus("a0", done).ok());
  ASSERT_TRUE(s.UpdateRunStatus("a0", done).ok());  // same state again: no double count
  ASSERT_TRUE(s.UpdateRunStatus("a1", done).ok());
  EXPECT_EQ(Total(s, "e1", json::array({Eq("state", "SUCCEEDED")})), 2);
  EXPECT_EQ(Total(s, "", json::array({Eq("state", "PENDING")})), 4);
  ASSERT_TRUE(s.SetRunStorageState("a0", "ARCHIVED").ok());
  EXPECT_EQ(Total(s, "", json::array({Eq("state", "SUCCEEDED"), Eq("storage_state", "ARCHIVED")})),
            1);
  ASSERT_TRUE(s.DeleteRun("a1").ok());
  EXPECT_EQ(Total(s, "", json::array({Eq("state", "SUCCEEDED")})), 1);
  EXPECT_EQ(Total(s, "", json::array()), 5);
  // Contradictory and other filters still count right (the latter by COUNT(*)).
  EXPECT_EQ(Total(s, "", json::array({Eq("state", "SUCCEEDED"), Eq("state", "PENDING")})), 0);
  EXPECT_EQ(Total(s, "", json::array({Eq("display_name", "a2")})), 1);
  EXPECT_EQ(
      Total(s, "",
            json::array({json{
                {"key", "state"}, {"operation", "NOT_EQUALS"}, {"string_value", "PENDING"}}})),
      1);
}

}  // namespace
}  // namespace kfpbench::store
