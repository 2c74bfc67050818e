#include "plan/answer.h"

#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "util/files.h"

namespace kfpbench::plan {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

Question TenRunsOnTwoNodes() {
  fs::path examples = fs::path(KFPBENCH_SOURCE_DIR) / "examples" / "capacity";
  Question q{examples / "cluster.yaml", examples / "workload.yaml", 10, 2, 0s, {}};
  q.replications.count = 2;
  return q;
}

TEST(Answer, TwoGivenAskTheThirdAndTheAnswerIsWrittenWhereAsked) {
  fs::path dir = fs::temp_directory_path() / ("kfpbench-answer-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  int told = 0;
  auto a = AnswerQuestion(TenRunsOnTwoNodes(), {dir / "answer.json", {}},
                          [&](const Answer&) { ++told; });
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(told, 1);
  EXPECT_EQ(a->runs, 10);
  EXPECT_EQ(a->nodes, 2);
  EXPECT_GT(a->makespan, 0s);
  auto text = ReadFile(dir / "answer.json");
  ASSERT_TRUE(text.ok()) << text.error().message;
  EXPECT_EQ(nlohmann::json::parse(*text), ToJson(*a));
  EXPECT_FALSE(fs::exists(dir / "page.html"));
  fs::remove_all(dir);
}

TEST(Answer, TheQuestionsFaultsAreBadInputAndAFileNotWrittenIsNot) {
  Question three = TenRunsOnTwoNodes();
  three.within = 1h;
  auto a = AnswerQuestion(three);
  ASSERT_FALSE(a.ok());
  EXPECT_TRUE(a.error().BadInput()) << a.error().message;
  Question one = TenRunsOnTwoNodes();
  one.nodes = 0;
  EXPECT_TRUE(AnswerQuestion(one).error().BadInput());
  Question missing = TenRunsOnTwoNodes();
  missing.cluster = "/nonexistent/cluster.yaml";
  auto m = AnswerQuestion(missing);
  ASSERT_FALSE(m.ok());
  EXPECT_TRUE(m.error().BadInput());
  EXPECT_NE(m.error().message.find("/nonexistent/cluster.yaml"), std::string::npos)
      << m.error().message;
  fs::path nowhere = "/nonexistent/folder/answer.json";
  int told = 0;
  auto w = AnswerQuestion(TenRunsOnTwoNodes(), {nowhere, {}}, [&](const Answer&) { ++told; });
  ASSERT_FALSE(w.ok());
  EXPECT_FALSE(w.error().BadInput()) << w.error().message;
  EXPECT_NE(w.error().message.find(nowhere.string()), std::string::npos) << w.error().message;
  EXPECT_EQ(told, 1);  // the answer was shown before the file failed
}

}  // namespace
}  // namespace kfpbench::plan
