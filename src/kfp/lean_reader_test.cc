#include "kfp/lean_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kfp/model.h"

namespace kfpbench::kfp {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

// A ListRuns answer as the model writes it (the embedded backend's and KFP's
// shape), with the nested objects and arrays the lean reader must skip.
std::string RunsAnswer(int count) {
  json runs = json::array();
  for (int i = 0; i < count; ++i) {
    Run r;
    r.run_id = "run-" + std::to_string(i);
    r.display_name = "a \"quoted\" {name} [" + std::to_string(i) + "]";
    r.state = RuntimeState::kRunning;
    r.runtime_config.parameters = {{"run_id", "not-this-one"}, {"n", i}};
    PipelineTaskDetail t;
    t.task_id = "task-" + std::to_string(i);
    t.run_id = r.run_id;
    t.state_history = {{WallTime{}, RuntimeState::kPending, std::nullopt}};
    r.task_details.push_back(t);
    runs.push_back(ToJson(r));
  }
  return json{{"runs", runs}, {"total_size", count}, {"next_page_token", "tok=="}}.dump();
}

TEST(LeanReader, ReadsIdsAndPagingOnly) {
  std::string body = RunsAnswer(3);
  const std::string original = body;
  auto page = ReadIdPage(body, "runs", "run_id");
  ASSERT_TRUE(page.ok()) << page.error().message;
  EXPECT_EQ(page->ids, (std::vector<std::string>{"run-0", "run-1", "run-2"}));
  EXPECT_EQ(page->total_size, 3);
  EXPECT_EQ(page->next_page_token, "tok==");
  EXPECT_EQ(body, original);  // padding goes to the capacity, not the text
}

TEST(LeanReader, EmptyPagesAsKfpWritesThem) {
  std::string empty = "{}";  // KFP omits empty fields
  auto page = ReadIdPage(empty, "experiments", "experiment_id");
  ASSERT_TRUE(page.ok()) << page.error().message;
  EXPECT_TRUE(page->ids.empty());
  EXPECT_EQ(page->total_size, 0);
  std::string escaped = R"({"pipelines":[{"pipeline_id":"a\"b\u00e9"}],"total_size":1})";
  page = ReadIdPage(escaped, "pipelines", "pipeline_id");
  ASSERT_TRUE(page.ok()) << page.error().message;
  EXPECT_EQ(page->ids, std::vector<std::string>{"a\"b\xc3\xa9"});
}

TEST(LeanReader, BadAnswersAreErrorsNotGuesses) {
  for (std::string body :
       {std::string(""), std::string("not json"), std::string("[]"),
        std::string(R"({"runs": {"run_id": "x"}})"), std::string(R"({"runs": ["x"]})"),
        std::string(R"({"runs": [{"run_id": 7}]})"), std::string(R"({"total_size": "many"})"),
        std::string(R"({"runs": [{"run_id": "x"})")}) {
    EXPECT_FALSE(ReadIdPage(body, "runs", "run_id").ok()) << body;
  }
}

TEST(LeanReader, RunState) {
  kfp::Run r;
  r.run_id = "r";
  r.state = RuntimeState::kSucceeded;
  std::string body = ToJson(r).dump();
  auto state = ReadRunState(body);
  ASSERT_TRUE(state.ok()) << state.error().message;
  EXPECT_EQ(*state, RuntimeState::kSucceeded);
  std::string none = R"({"run_id": "r"})";
  EXPECT_EQ(*ReadRunState(none), RuntimeState::kUnspecified);
  std::string bogus = R"({"state": "EXPLODED"})";
  auto bad = ReadRunState(bogus);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("EXPLODED"));
  std::string wrong_type = R"({"state": 3})";
  EXPECT_FALSE(ReadRunState(wrong_type).ok());
}

}  // namespace
}  // namespace kfpbench::kfp
