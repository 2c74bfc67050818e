#include "exec/stub_executor.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/engine_test_util.h"
#include "exec/test_support.h"

namespace kfpbench::exec {
namespace {

using ::testing::HasSubstr;
using Kind = DurationDist::Kind;
using namespace std::chrono_literals;

TEST(DurationDistTest, ParsesEveryKind) {
  auto c = ParseDurationDist("constant:2s");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->kind, Kind::kConstant);
  EXPECT_EQ(c->a, 2s);

  auto bare = ParseDurationDist("250ms");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->kind, Kind::kConstant);
  EXPECT_EQ(bare->a, 250ms);

  auto u = ParseDurationDist("uniform:1s:3s");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->kind, Kind::kUniform);
  EXPECT_EQ(u->a, 1s);
  EXPECT_EQ(u->b, 3s);

  auto l = ParseDurationDist("lognormal:60s:0.3");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->kind, Kind::kLognormal);
  EXPECT_EQ(l->a, 60s);
  EXPECT_DOUBLE_EQ(l->sigma, 0.3);

  auto e = ParseDurationDist("exponential:10s");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->kind, Kind::kExponential);
  EXPECT_EQ(e->a, 10s);
}

TEST(DurationDistTest, ToStringParsesBack) {
  for (const char* spec : {"constant:2s", "uniform:1s:3s", "lognormal:60s:0.3", "exponential:10s",
                           "uniform:0s:0s", "lognormal:1.5s:0"}) {
    auto dist = ParseDurationDist(spec);
    ASSERT_TRUE(dist.ok()) << spec;
    auto again = ParseDurationDist(dist->ToString());
    ASSERT_TRUE(again.ok()) << dist->ToString();
    EXPECT_EQ(again->kind, dist->kind);
    EXPECT_EQ(again->a, dist->a);
    EXPECT_EQ(again->b, dist->b);
    EXPECT_DOUBLE_EQ(again->sigma, dist->sigma);
  }
}

TEST(DurationDistTest, RejectsBadSpecs) {
  for (const char* bad : {"",
                          "constant",
                          "constant:",
                          "constant:abc",
                          "constant:1s:2s",
                          "uniform:1s",
                          "uniform:3s:1s",
                          "uniform:1s:x",
                          "uniform:1s:2s:3s",
                          "lognormal:60s",
                          "lognormal:60s:abc",
                          "lognormal:60s:-1",
                          "lognormal:0s:0.3",
                          "lognormal:x:0.3",
                          "exponential:0s",
                          "exponential:",
                          "exponential:1s:2s",
                          "gamma:1s",
                          "2 s",
                          "-1s"}) {
    auto dist = ParseDurationDist(bad);
    ASSERT_FALSE(dist.ok()) << bad;
    EXPECT_THAT(dist.error().message, HasSubstr(fmt::format("'{}'", bad)));
  }
  EXPECT_THAT(ParseDurationDist("gamma:1s").error().message, HasSubstr("unknown distribution"));
}

TEST(DurationDistTest, ParsesLabeledSpecs) {
  auto labeled = ParseLabeledDurationDist("exec-train=lognormal:60s:0.3");
  ASSERT_TRUE(labeled.ok());
  EXPECT_EQ(labeled->first, "exec-train");
  EXPECT_EQ(labeled->second.kind, Kind::kLognormal);

  auto unlabeled = ParseLabeledDurationDist("constant:1s");
  ASSERT_TRUE(unlabeled.ok());
  EXPECT_EQ(unlabeled->first, "");

  EXPECT_FALSE(ParseLabeledDurationDist("=constant:1s").ok());
  EXPECT_FALSE(ParseLabeledDurationDist("exec-a=").ok());
  EXPECT_FALSE(ParseLabeledDurationDist("exec-a=bogus:1s").ok());
}

TEST(DurationDistTest, SamplesStayInRangeAndLookRight) {
  std::mt19937_64 rng(7);
  auto uniform = *ParseDurationDist("uniform:1s:3s");
  for (int i = 0; i < 1000; ++i) {
    Duration d = uniform.Sample(rng);
    EXPECT_GE(d, 1s);
    EXPECT_LE(d, 3s);
  }

  auto lognormal = *ParseDurationDist("lognormal:60s:0.3");
  std::vector<double> samples;
  for (int i = 0; i < 2001; ++i) samples.push_back(ToSeconds(lognormal.Sample(rng)));
  std::nth_element(samples.begin(), samples.begin() + 1000, samples.end());
  EXPECT_NEAR(samples[1000], 60, 3);
  EXPECT_GT(*std::min_element(samples.begin(), samples.end()), 0);

  auto exponential = *ParseDurationDist("exponential:10s");
  double sum = 0;
  for (int i = 0; i < 4000; ++i) {
    Duration d = exponential.Sample(rng);
    EXPECT_GE(d, Duration(0));
    sum += ToSeconds(d);
  }
  EXPECT_NEAR(sum / 4000, 10, 1);

  EXPECT_EQ(ParseDurationDist("constant:2s")->Sample(rng), 2s);
}

TEST(DurationDistTest, SameSeedSameSamples) {
  auto dist = *ParseDurationDist("lognormal:1s:0.5");
  std::mt19937_64 a(42), b(42);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(dist.Sample(a), dist.Sample(b));
}

TEST(StubExecutorOptionsTest, ParsesDefaultAndPerLabelSpecs) {
  auto options = ParseStubExecutorOptions(
      {"constant:1s", "exec-a=uniform:1s:2s", "exec-b=exponential:3s", "exec-a=constant:5s"}, 9);
  ASSERT_TRUE(options.ok()) << options.error().message;
  EXPECT_EQ(options->seed, 9u);
  EXPECT_EQ(options->default_duration.a, 1s);
  ASSERT_EQ(options->by_executor_label.size(), 2u);
  EXPECT_EQ(options->by_executor_label.at("exec-a").a, 5s);  // later spec wins
  EXPECT_EQ(options->by_executor_label.at("exec-b").kind, Kind::kExponential);

  auto defaults = ParseStubExecutorOptions({});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->default_duration.kind, Kind::kConstant);
  EXPECT_EQ(defaults->default_duration.a, 100ms);

  auto bad = ParseStubExecutorOptions({"exec-a=constant:1s", "exec-b=nope:1s"});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("nope"));
}

class StubExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override { loop_.Start(); }
  void TearDown() override { loop_.Stop(); }

  static engine::TaskLaunch Task(const std::string& id, const std::string& label = "exec-x") {
    engine::TaskLaunch launch;
    launch.run_id = "run";
    launch.task_id = id;
    launch.executor_label = label;
    launch.argv = {"/definitely/not/run"};
    launch.work_dir = "/nonexistent";
    return launch;
  }

  static StubExecutorOptions Options(std::vector<std::string> specs) {
    auto options = ParseStubExecutorOptions(specs);
    EXPECT_TRUE(options.ok());
    return options.ok() ? *options : StubExecutorOptions{};
  }

  engine::RealTimeLoop loop_;
};

TEST_F(StubExecutorTest, ProducesTypeCorrectOutputsWithoutTouchingDisk) {
  StubExecutor executor(loop_, Options({"constant:10ms"}));
  auto launch = Task("t1");
  launch.output_parameter_types = {
      {"s", "STRING"}, {"i", "NUMBER_INTEGER"}, {"d", "NUMBER_DOUBLE"}, {"b", "BOOLEAN"},
      {"l", "LIST"},   {"m", "STRUCT"},         {"u", "SOMETHING_ELSE"}};
  launch.output_parameter_files = {{"s", "/nonexistent/s"}, {"f", "/nonexistent/f"}};
  testing::DoneWaiter waiter;
  executor.Launch(std::move(launch), waiter.Callback());
  auto result = waiter.Wait();
  ASSERT_TRUE(result);
  EXPECT_TRUE(result->succeeded);
  EXPECT_EQ(result->error, "");
  EXPECT_EQ(result->log_path, "");
  EXPECT_THAT(
      result->output_parameters,
      ::testing::UnorderedElementsAre(::testing::Pair("s", "stub"), ::testing::Pair("i", "1"),
                                      ::testing::Pair("d", "1.0"), ::testing::Pair("b", "true"),
                                      ::testing::Pair("l", "[]"), ::testing::Pair("m", "{}"),
                                      ::testing::Pair("u", "stub"), ::testing::Pair("f", "stub")));
  EXPECT_FALSE(std::filesystem::exists("/nonexistent"));
  EXPECT_EQ(executor.running(), 0u);
}

TEST_F(StubExecutorTest, LastsTheSampledDurationAndCallsDoneOnTheLoop) {
  StubExecutor executor(loop_, Options({"constant:200ms"}));
  testing::DoneWaiter loop_thread;
  loop_.Post([cb = loop_thread.Callback()] { cb({}); });
  ASSERT_TRUE(loop_thread.Wait());

  testing::DoneWaiter waiter;
  const auto start = std::chrono::steady_clock::now();
  loop_.Post([&] { executor.Launch(Task("t1"), waiter.Callback()); });
  ASSERT_TRUE(waiter.Wait());
  EXPECT_GE(std::chrono::steady_clock::now() - start, 200ms);
  EXPECT_EQ(waiter.thread(), loop_thread.thread());
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(waiter.calls(), 1);
}

TEST_F(StubExecutorTest, UsesPerLabelDistributions) {
  StubExecutor executor(loop_, Options({"constant:10ms", "exec-slow=constant:10s"}));
  testing::DoneWaiter fast, slow;
  executor.Launch(Task("fast", "exec-fast"), fast.Callback());
  executor.Launch(Task("slow", "exec-slow"), slow.Callback());
  ASSERT_TRUE(fast.Wait());
  EXPECT_EQ(slow.calls(), 0);
  EXPECT_EQ(executor.running(), 1u);
  executor.Cancel("slow");
  auto result = slow.Wait(2s);
  ASSERT_TRUE(result);
  EXPECT_FALSE(result->succeeded);
}

TEST(StubFailuresTest, ParsesProbabilitiesAndRefusesWhatIsNotOne) {
  StubExecutorOptions options;
  ASSERT_TRUE(AddStubFailures({"exec-fail=1", "exec-flaky=5%", "0.01"}, options).ok());
  EXPECT_DOUBLE_EQ(options.failure_by_executor_label.at("exec-fail"), 1);
  EXPECT_DOUBLE_EQ(options.failure_by_executor_label.at("exec-flaky"), 0.05);
  EXPECT_DOUBLE_EQ(options.default_failure_probability, 0.01);
  for (const char* bad : {"exec-x=2", "exec-x=", "-0.5", "exec-x=often", "150%", "nan"}) {
    StubExecutorOptions o;
    Status s = AddStubFailures({bad}, o);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_THAT(s.error().message, HasSubstr("expected [LABEL=]P")) << bad;
  }
}

TEST_F(StubExecutorTest, StepsFailWithTheirProbabilityAndNoOutputs) {
  StubExecutorOptions options = Options({"constant:1ms"});
  ASSERT_TRUE(AddStubFailures({"exec-fail=1", "exec-half=50%"}, options).ok());
  StubExecutor executor(loop_, options);
  auto failing = Task("f", "exec-fail");
  failing.output_parameter_types = {{"Output", "STRING"}};
  testing::DoneWaiter failed, fine;
  executor.Launch(std::move(failing), failed.Callback());
  executor.Launch(Task("ok", "exec-ok"), fine.Callback());
  auto f = failed.Wait();
  ASSERT_TRUE(f);
  EXPECT_FALSE(f->succeeded);
  EXPECT_EQ(f->exit_code, 1);
  EXPECT_THAT(f->error, HasSubstr("failure probability 1"));
  EXPECT_TRUE(f->output_parameters.empty());
  auto ok = fine.Wait();
  ASSERT_TRUE(ok);
  EXPECT_TRUE(ok->succeeded);

  // Half of many fail: far from 0 and from all of them.
  constexpr int kTasks = 400;
  std::vector<testing::DoneWaiter> waiters(kTasks);
  for (int i = 0; i < kTasks; ++i) {
    executor.Launch(Task(fmt::format("h{}", i), "exec-half"), waiters[i].Callback());
  }
  int failures = 0;
  for (auto& w : waiters) {
    auto r = w.Wait();
    ASSERT_TRUE(r);
    failures += r->succeeded ? 0 : 1;
  }
  EXPECT_GT(failures, kTasks / 4);
  EXPECT_LT(failures, kTasks * 3 / 4);
}

TEST_F(StubExecutorTest, CancelFinishesEarlyOnce) {
  StubExecutor executor(loop_, Options({"constant:300ms"}));
  testing::DoneWaiter waiter;
  const auto start = std::chrono::steady_clock::now();
  executor.Launch(Task("t1"), waiter.Callback());
  executor.Cancel("t1");
  auto result = waiter.Wait();
  ASSERT_TRUE(result);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 300ms);
  EXPECT_FALSE(result->succeeded);
  EXPECT_EQ(result->error, "canceled");
  EXPECT_TRUE(result->output_parameters.empty());
  executor.Cancel("t1");               // already done: no-op
  executor.Cancel("unknown");          // never launched: no-op
  std::this_thread::sleep_for(400ms);  // past the original timer
  EXPECT_EQ(waiter.calls(), 1);
  EXPECT_EQ(executor.running(), 0u);
}

TEST_F(StubExecutorTest, DestroyingDropsPendingTasks) {
  testing::DoneWaiter waiter;
  {
    StubExecutor executor(loop_, Options({"constant:50ms"}));
    executor.Launch(Task("t1"), waiter.Callback());
  }
  std::this_thread::sleep_for(150ms);
  EXPECT_EQ(waiter.calls(), 0);
}

TEST_F(StubExecutorTest, RunsManyTasksAtOnce) {
  StubExecutor executor(loop_, Options({"uniform:10ms:50ms"}));
  std::vector<testing::DoneWaiter> waiters(200);
  for (size_t i = 0; i < waiters.size(); ++i) {
    executor.Launch(Task(fmt::format("t{}", i)), waiters[i].Callback());
  }
  for (auto& w : waiters) {
    auto result = w.Wait();
    ASSERT_TRUE(result);
    EXPECT_TRUE(result->succeeded);
  }
  EXPECT_EQ(executor.running(), 0u);
}

TEST(StubArtifactBytesTest, ParsesDefaultAndPerLabelSizes) {
  StubExecutorOptions options;
  ASSERT_TRUE(AddStubArtifactBytes({"10Mi", "exec-train=2Gi", "exec-train=1Gi"}, options).ok());
  EXPECT_EQ(options.default_artifact_bytes, int64_t{10} << 20);
  EXPECT_EQ(options.artifact_bytes_by_label.at("exec-train"), int64_t{1} << 30);
  for (const char* bad : {"exec-x=", "exec-x=big", "=", "-5Mi"}) {
    Status s = AddStubArtifactBytes({bad}, options);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_THAT(s.error().message, ::testing::HasSubstr("[LABEL=]SIZE")) << bad;
  }
}

// A stub step with an artifact size lasts its duration, then its upload
// through the store's shared link: two 1Mi uploads at 1Mi/s after 1 s steps
// share the link and both tasks end at 3 s; a step without a size ends at 1 s.
class StubUploadTest : public ::testing::Test {
 protected:
  StubUploadTest() : store_(loop_, {dir_.path(), 1 << 20}) {
    options_.default_duration = DurationDist::Constant(std::chrono::seconds(1));
    options_.artifact_bytes_by_label["exec-up"] = 1 << 20;
  }

  // Launches `id` and returns where its end time and result will go.
  std::shared_ptr<std::optional<std::pair<double, engine::TaskResult>>> Launch(
      StubExecutor& executor, const std::string& id, const std::string& label) {
    auto out = std::make_shared<std::optional<std::pair<double, engine::TaskResult>>>();
    engine::TaskLaunch launch;
    launch.run_id = "run";
    launch.task_id = id;
    launch.executor_label = label;
    executor.Launch(std::move(launch), [this, out](engine::TaskResult r) {
      *out = std::pair{ToSeconds(loop_.Now() - engine::testing::VirtualLoop::Epoch()), r};
    });
    return out;
  }

  testing::TempDir dir_;
  engine::testing::VirtualLoop loop_;
  ArtifactStore store_;
  StubExecutorOptions options_;
};

TEST_F(StubUploadTest, TasksEndWhenTheirSharedUploadsDo) {
  StubExecutor executor(loop_, options_, &store_);
  auto a = Launch(executor, "a", "exec-up");
  auto b = Launch(executor, "b", "exec-up");
  auto c = Launch(executor, "c", "exec-plain");
  loop_.Run();
  ASSERT_TRUE(a->has_value() && b->has_value() && c->has_value());
  EXPECT_NEAR((*a)->first, 3.0, 0.006);
  EXPECT_NEAR((*b)->first, 3.0, 0.006);
  EXPECT_NEAR((*c)->first, 1.0, 1e-9);
  EXPECT_TRUE((*a)->second.succeeded);
  EXPECT_EQ(std::filesystem::file_size(dir_.path() / "run" / "a"), uintmax_t{1} << 20);
  EXPECT_EQ(executor.running(), 0u);
}

TEST_F(StubUploadTest, CancelDuringTheUploadEndsTheTaskOnceAndFreesTheLink) {
  StubExecutor executor(loop_, options_, &store_);
  auto a = Launch(executor, "a", "exec-up");
  auto b = Launch(executor, "b", "exec-up");
  loop_.RunUntil(engine::testing::VirtualLoop::Epoch() + std::chrono::milliseconds(1500));
  executor.Cancel("b");  // each has 0.25Mi of 1Mi
  loop_.Run();
  ASSERT_TRUE(b->has_value());
  EXPECT_FALSE((*b)->second.succeeded);
  EXPECT_EQ((*b)->second.error, "canceled");
  EXPECT_NEAR((*b)->first, 1.5, 1e-9);
  ASSERT_TRUE(a->has_value());
  EXPECT_NEAR((*a)->first, 2.25, 0.006);  // 0.75Mi left at full speed
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "run" / "b"));
}

TEST_F(StubUploadTest, AFailedUploadFailsTheTaskWithTheReason) {
  std::filesystem::create_directories(dir_.path() / "run" / "a");  // in the file's way
  StubExecutor executor(loop_, options_, &store_);
  auto a = Launch(executor, "a", "exec-up");
  loop_.Run();
  ASSERT_TRUE(a->has_value());
  EXPECT_FALSE((*a)->second.succeeded);
  EXPECT_THAT((*a)->second.error, ::testing::HasSubstr("uploading the step's outputs"));
  EXPECT_TRUE((*a)->second.output_parameters.empty());
}

}  // namespace
}  // namespace kfpbench::exec
