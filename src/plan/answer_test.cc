#include "plan/answer.h"

#include <unistd.h>

#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "util/files.h"

namespace kfpbench::plan {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

namespace fs = std::filesystem;
using namespace std::chrono_literals;

fs::path Examples() { return fs::path(KFPBENCH_SOURCE_DIR) / "examples" / "capacity"; }

Question TenRunsOnTwoNodes() {
  Question q;
  q.cluster = Examples() / "cluster.yaml";
  q.workload = Examples() / "workload.yaml";
  q.runs = 10;
  q.nodes = 2;
  q.replications.count = 2;
  return q;
}

// A recorded pattern with known truth: ten arrivals 10 minutes apart of the
// six-step pipeline with constant steps (10 s each, trainers 60 s: one run
// alone takes 90 s, three 1-CPU trainers wide). x20, each arrival stands for
// 20 runs 30 s apart: at every instant three runs are alive, asking 7 CPUs
// (3 + 3 + 1 by their ages), so two 4-CPU nodes hold them with no wait (run
// p95 90 s) and one node's queue grows without end.
struct Pattern {
  fs::path dir;
  Pattern() {
    dir = fs::temp_directory_path() / ("kfpbench-pattern-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::string csv = "offset\n";
    for (int i = 0; i < 10; ++i) csv += std::to_string(600 * i) + "s\n";
    EXPECT_TRUE(WriteFileAtomically(dir / "arrivals.csv", csv).ok());
    EXPECT_TRUE(WriteFileAtomically(dir / "workload.yaml",
                                    "pipeline: " + (Examples() / "six_steps.yaml").string() +
                                        "\narrivals: {kind: csv, file: arrivals.csv}\n"
                                        "steps:\n  default: \"constant:10s\"\n"
                                        "  exec-train: \"constant:60s\"\n")
                    .ok());
  }
  ~Pattern() { fs::remove_all(dir); }
  Question Ask() const {
    Question q;
    q.cluster = Examples() / "cluster.yaml";
    q.workload = dir / "workload.yaml";
    q.arrival_scale = 20;
    q.replications.count = 2;
    return q;
  }
};

// Issue 38 section 2: "three times this load" is the recorded pattern
// carrying three times the runs, not every run at once.
TEST(Answer, AnArrivalScaleIsAskedOnTheRecordedPattern) {
  Pattern pattern;
  Question q = pattern.Ask();
  q.within = 95s;  // run p95, the default figure on a pattern
  auto a = AnswerQuestion(q);
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->runs, 200);
  EXPECT_EQ(a->nodes, 2);
  EXPECT_EQ(a->replications.measure.metric, Metric::kRunP95);
  EXPECT_TRUE(a->replications.measure.recorded_arrivals);
  EXPECT_NEAR(ToSeconds(a->makespan), 90, 1);  // the run p95 at the answer
  EXPECT_EQ(a->neighbour.nodes, 1);
  EXPECT_EQ(a->neighbour.verdict, Verdict::kMisses);
  const std::string text = Describe(*a);
  EXPECT_THAT(
      text, HasSubstr("the recorded arrivals x20 (200 runs) on 2 nodes keep run p95 within 1m35s"))
      << text;
  EXPECT_THAT(text, Not(HasSubstr("analytic"))) << text;  // waves are for runs at once
  EXPECT_EQ(ToJson(*a)["arrivals"], "recorded");
  EXPECT_EQ(ToJson(*a)["metric"], "run p95");

  // The same 200 runs all at once is another question, with another answer.
  Question at_once = pattern.Ask();
  at_once.arrival_scale = 0;
  at_once.runs = 200;
  at_once.within = 95s;
  at_once.metric = Metric::kRunP95;
  auto b = AnswerQuestion(at_once);
  EXPECT_TRUE(!b.ok() || b->nodes > 10) << (b.ok() ? Describe(*b) : b.error().message);

  // On K nodes: the figure with its spread.
  Question on_two = pattern.Ask();
  on_two.nodes = 2;
  auto c = AnswerQuestion(on_two);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_NEAR(ToSeconds(c->makespan), 90, 1);
  Question wait = pattern.Ask();
  wait.nodes = 2;
  wait.metric = Metric::kWaitP95;
  auto d = AnswerQuestion(wait);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->makespan, 0s);  // nothing waits on two nodes
}

TEST(Answer, AnArrivalScaleRefusesWhatItCannotAnswer) {
  Pattern pattern;
  Question both = pattern.Ask();
  both.runs = 10;
  both.nodes = 2;
  EXPECT_TRUE(AnswerQuestion(both).error().BadInput());
  Question page = pattern.Ask();
  page.nodes = 2;
  auto p = AnswerQuestion(page, {{}, pattern.dir / "page.html"});
  ASSERT_FALSE(p.ok());
  EXPECT_TRUE(p.error().BadInput());
  EXPECT_THAT(p.error().message, HasSubstr("--html"));
  EXPECT_FALSE(ParseMetric("p95").ok());
  EXPECT_EQ(*ParseMetric("wait-p95"), Metric::kWaitP95);
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
  EXPECT_THAT(m.error().message, HasSubstr("/nonexistent/cluster.yaml")) << m.error().message;
  fs::path nowhere = "/nonexistent/folder/answer.json";
  int told = 0;
  auto w = AnswerQuestion(TenRunsOnTwoNodes(), {nowhere, {}}, [&](const Answer&) { ++told; });
  ASSERT_FALSE(w.ok());
  EXPECT_FALSE(w.error().BadInput()) << w.error().message;
  EXPECT_THAT(w.error().message, HasSubstr(nowhere.string())) << w.error().message;
  EXPECT_EQ(told, 1);  // the answer was shown before the file failed
}

}  // namespace
}  // namespace kfpbench::plan
