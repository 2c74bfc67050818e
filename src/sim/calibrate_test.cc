#include "sim/calibrate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "results/results_json.h"
#include "sim/config.h"
#include "sim/simulator.h"
#include "sim/test_support.h"

namespace kfpbench::sim {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

// A run created at `t0`, its steps back to back with `gap` between them.
nlohmann::json Record(int t0, std::vector<std::pair<std::string, double>> steps, double gap,
                      const char* state = "SUCCEEDED") {
  auto at = [](double s) {
    return FormatRfc3339(WallTime(std::chrono::seconds(1'700'000'000)) + FromSeconds(s));
  };
  nlohmann::json tasks = nlohmann::json::array();
  tasks.push_back(
      {{"name", "root"}, {"dag", true}, {"started_at", at(t0)}, {"finished_at", at(t0)}});
  double t = t0;
  for (const auto& [name, d] : steps) {
    t += gap;
    tasks.push_back({{"name", name}, {"started_at", at(t)}, {"finished_at", at(t + d)}});
    t += d;
  }
  return {{"state", state}, {"created_at", at(t0)}, {"tasks", tasks}};
}

// results.json's runs, read as calibrate reads them.
Result<Calibration> CalibrateJson(const nlohmann::json& results, const ir::PipelineSpec* pipeline) {
  auto runs = results::RunRecordsFromJson(results);
  if (!runs.ok()) return runs.error();
  return Calibrate(*runs, pipeline);
}

TEST(Calibrate, FitsDurationsAndOverheadPerExecutorLabel) {
  nlohmann::json results;
  results["runs"]["records"] = nlohmann::json::array();
  for (int i = 0; i < 5; ++i) {
    results["runs"]["records"].push_back(
        Record(i * 100, {{"prepare", 10}, {"train-a", 60 * (1 + 0.1 * i)}, {"publish", 10}}, 0.5));
  }
  results["runs"]["records"].push_back(Record(900, {{"prepare", 99}}, 9, "FAILED"));  // skipped
  auto spec = testing::SixSteps();
  auto c = CalibrateJson(results, spec.get());
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->runs, 5);
  EXPECT_NEAR(ToSeconds(c->overhead_p50), 0.5, 1e-3);
  const StepModel& step = c->models.For("exec-step");
  EXPECT_EQ(step.duration.kind, exec::DurationDist::Kind::kConstant);
  EXPECT_NEAR(ToSeconds(step.duration.a), 10, 1e-3);
  const StepModel& train = c->models.For("exec-train");
  EXPECT_EQ(train.duration.kind, exec::DurationDist::Kind::kLognormal);
  EXPECT_NEAR(ToSeconds(train.duration.a), 72, 2);
  EXPECT_GT(train.duration.sigma, 0.05);
  EXPECT_EQ(c->samples["exec-step"], 10);
  // The file round-trips through what simulate reads.
  auto back = ParseCalibration(ToJson(*c).dump());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->steps.For("exec-train").duration.ToString(), train.duration.ToString());
  EXPECT_NEAR(ToSeconds(back->steps.For("exec-step").overhead), 0.5, 1e-3);
}

TEST(Calibrate, RejectsWhatItCannotUse) {
  EXPECT_FALSE(CalibrateJson(nlohmann::json::object(), nullptr).ok());
  nlohmann::json results;
  results["runs"]["records"] = nlohmann::json::array({Record(0, {{"a", 1}}, 0, "FAILED")});
  EXPECT_THAT(CalibrateJson(results, nullptr).error().message, HasSubstr("no succeeded run"));
  results["runs"]["records"] = nlohmann::json::array({Record(0, {{"a", 1}}, 0)});
  results["runs"]["records"][0]["tasks"][1]["started_at"] = "yesterday";
  EXPECT_THAT(CalibrateJson(results, nullptr).error().message,
              HasSubstr("runs.records[0].tasks[1].started_at"));
  EXPECT_FALSE(CalibrateFile("/nonexistent/results", nullptr).ok());
}

TEST(Calibrate, FitDuration) {
  EXPECT_EQ(FitDuration({}).a, Duration::zero());
  auto d = FitDuration({1, 1, 1});
  EXPECT_EQ(d.kind, exec::DurationDist::Kind::kConstant);
  EXPECT_NEAR(ToSeconds(d.a), 1, 1e-9);
  d = FitDuration({1, 4});
  EXPECT_EQ(d.kind, exec::DurationDist::Kind::kLognormal);
  EXPECT_NEAR(ToSeconds(d.a), 2, 1e-6);  // geometric mean
}

// Shared services fitted from load levels. The "measurements" are the
// simulator's own, with a known bandwidth, so the fit has a right answer:
// six-step runs (10 s steps, 20 s trainers), each trainer uploading 1Gi to a
// store of 512Mi/s (three uploads a run, 6 s of the link), on 100 nodes.
constexpr double kTrueBandwidth = 512.0 * (1 << 20);

ClusterSpec HundredNodes() { return testing::FixedCluster(100, 4); }

WorkloadSpec Uploading(int64_t runs, double seconds_between) {
  WorkloadSpec w = testing::SixStepWorkload(runs, 10s, 20s);
  w.arrival_kind = WorkloadSpec::ArrivalKind::kRate;
  w.rate_per_second = 1 / seconds_between;
  w.steps.by_label["exec-train"].artifact_bytes = int64_t{1} << 30;
  return w;
}

// Runs the workload with the true store and keeps every run's record, as a
// results.json would hold it.
MeasuredLevel SimulatedLevel(const std::string& name, const WorkloadSpec& w) {
  ClusterSpec c = HundredNodes();
  c.artifact_store.bandwidth = kTrueBandwidth;
  MeasuredLevel level;
  level.source = name;
  SimOptions options;
  options.on_run_end = [&](const engine::RunSnapshot& s, WallTime arrived) {
    results::RunRecord r;
    r.run_id = s.run_id;
    r.state = s.state;
    r.created = arrived;
    r.finished = s.finished_at;
    for (const auto& t : s.task_states) {
      r.tasks.push_back({.name = *t.name,
                         .state = t.state,
                         .created = t.create_time,
                         .started = t.start_time,
                         .finished = t.end_time,
                         .dag = t.executor_label->empty()});
    }
    level.runs.push_back(std::move(r));
  };
  auto result = Simulate(c, w, options);
  EXPECT_TRUE(result.ok()) << result.error().message;
  return level;
}

SharedServiceInputs Inputs() {
  SharedServiceInputs in;
  in.cluster = HundredNodes();
  in.artifact_bytes["exec-train"] = int64_t{1} << 30;
  return in;
}

TEST(CalibrateLevels, FitsTheStoreFromTwoLoadsAndPredictsAThird) {
  // Light: a run every 2 minutes, never two at once. Heavy: one every 5 s,
  // offering 6 s of transfer every 5 s (120%): the store is the bottleneck.
  std::vector<MeasuredLevel> levels = {SimulatedLevel("light", Uploading(5, 120)),
                                       SimulatedLevel("heavy", Uploading(30, 5))};
  auto c = CalibrateLevels(levels, testing::SixSteps(), Inputs());
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_TRUE(c->shared.fitted) << c->shared.why_not;
  EXPECT_NEAR(c->shared.artifact_store.bandwidth / kTrueBandwidth, 1.0, 0.02);
  // The trainer's own time is its measured time less its upload alone.
  EXPECT_NEAR(ToSeconds(c->models.For("exec-train").duration.a), 20, 0.2);
  EXPECT_EQ(c->models.For("exec-train").artifact_bytes, int64_t{1} << 30);
  ASSERT_EQ(c->shared.levels.size(), 2u);
  for (const auto& f : c->shared.levels) {
    EXPECT_NEAR(f.predicted_makespan / f.measured_makespan, 1.0, 0.02) << f.source;
    EXPECT_NEAR(f.predicted_p95 / f.measured_p95, 1.0, 0.02) << f.source;
  }
  // Without the store, the heavy level is badly underestimated.
  ASSERT_EQ(c->shared.without.size(), 2u);
  EXPECT_LT(c->shared.without[1].predicted_makespan / c->shared.without[1].measured_makespan, 0.9);
  EXPECT_LT(c->shared.without[1].predicted_p95 / c->shared.without[1].measured_p95, 0.6);
  EXPECT_GT(c->shared.levels[1].runs_in_flight, 3 * c->shared.levels[0].runs_in_flight);

  // The file simulate reads carries the store, and predicts a third load
  // (one run every 8 s: 75% offered) as the truth has it.
  auto file = ParseCalibration(ToJson(*c).dump());
  ASSERT_TRUE(file.ok()) << file.error().message;
  EXPECT_NEAR(file->artifact_store.bandwidth / kTrueBandwidth, 1.0, 0.02);
  WorkloadSpec third = Uploading(40, 8);
  MeasuredLevel truth = SimulatedLevel("third", third);
  WorkloadSpec predicted = third;
  predicted.steps = file->steps;
  predicted.calibrated_artifact_store = file->artifact_store;
  auto p = Simulate(HundredNodes(), predicted);
  ASSERT_TRUE(p.ok());
  WallTime last{};
  for (const auto& r : truth.runs) last = std::max(last, r.finished);
  double measured = ToSeconds(last - truth.runs.front().created);
  EXPECT_NEAR(ToSeconds(p->makespan) / measured, 1.0, 0.02);
}

TEST(CalibrateLevels, OneLevelFitsStepsAndSaysWhyNotTheStore) {
  auto c =
      CalibrateLevels({SimulatedLevel("light", Uploading(5, 120))}, testing::SixSteps(), Inputs());
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_FALSE(c->shared.fitted);
  EXPECT_THAT(c->shared.why_not, ::testing::HasSubstr("one load level"));
  // The trainer's measured time, upload included: 20 s + 6 s.
  EXPECT_NEAR(ToSeconds(c->models.For("exec-train").duration.a), 26, 0.2);
  EXPECT_THAT(ToJson(*c)["fit"]["shared_services"].get<std::string>(),
              ::testing::HasSubstr("not fitted: one load level"));
  EXPECT_FALSE(ToJson(*c).contains("artifactStore"));
}

TEST(CalibrateLevels, SaysWhyNotWithoutSizesOrWithLoadsTooClose) {
  std::vector<MeasuredLevel> levels = {SimulatedLevel("light", Uploading(5, 120)),
                                       SimulatedLevel("heavy", Uploading(30, 5))};
  SharedServiceInputs no_sizes = Inputs();
  no_sizes.artifact_bytes.clear();
  auto c = CalibrateLevels(levels, testing::SixSteps(), no_sizes);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->shared.fitted);
  EXPECT_THAT(c->shared.why_not, ::testing::HasSubstr("--artifact-bytes"));

  std::vector<MeasuredLevel> close = {SimulatedLevel("a", Uploading(5, 120)),
                                      SimulatedLevel("b", Uploading(5, 110))};
  c = CalibrateLevels(close, testing::SixSteps(), Inputs());
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->shared.fitted);
  EXPECT_THAT(c->shared.why_not, ::testing::HasSubstr("too close"));

  // More runs in flight, but a run every 30 s never uploads while another
  // does: nothing waited for the store, so nothing tells its bandwidth.
  std::vector<MeasuredLevel> apart = {SimulatedLevel("light", Uploading(5, 120)),
                                      SimulatedLevel("busier", Uploading(10, 30))};
  c = CalibrateLevels(apart, testing::SixSteps(), Inputs());
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->shared.fitted);
  EXPECT_THAT(c->shared.why_not, ::testing::HasSubstr("no level waited for the store"));
}

TEST(CalibrateLevels, RefusesBadLevels) {
  std::vector<MeasuredLevel> levels = {SimulatedLevel("light", Uploading(5, 120)),
                                       SimulatedLevel("heavy", Uploading(30, 5))};
  SharedServiceInputs wrong = Inputs();
  wrong.artifact_bytes = {{"exec-trian", 1 << 20}};
  auto c = CalibrateLevels(levels, testing::SixSteps(), wrong);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.error().message, ::testing::HasSubstr("'exec-trian'"));
  EXPECT_THAT(c.error().message, ::testing::HasSubstr("exec-train"));

  MeasuredLevel empty{"nothing-succeeded", {}, {}};
  c = CalibrateLevels({levels[0], empty}, testing::SixSteps(), Inputs());
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.error().message, ::testing::HasSubstr("nothing-succeeded"));

  MeasuredLevel unfinished = levels[0];
  unfinished.source = "unfinished";
  for (auto& r : unfinished.runs) r.finished = WallTime{};
  c = CalibrateLevels({levels[0], unfinished}, testing::SixSteps(), Inputs());
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.error().message, ::testing::HasSubstr("unfinished: no succeeded run"));

  EXPECT_FALSE(CalibrateLevels({}, testing::SixSteps(), Inputs()).ok());
  c = CalibrateLevels(levels, nullptr, Inputs());
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.error().message, ::testing::HasSubstr("pipeline"));
}

// The API from CreateRun latencies: `calls` submitted every `gap` seconds
// to 3 workers taking 50 ms each, the latencies computed here by hand (each
// call takes the worker free soonest) as a client would have measured them.
MeasuredLevel CreateRunLevel(const std::string& name, int calls, double gap) {
  MeasuredLevel level;
  level.source = name;
  std::vector<double> free_at(3, 0);
  for (int i = 0; i < calls; ++i) {
    double sent = i * gap;
    auto worker = std::min_element(free_at.begin(), free_at.end());
    double done = std::max(sent, *worker) + 0.05;
    *worker = done;
    level.create_run_us.Record(static_cast<int64_t>(std::llround((done - sent) * 1e6)));
    results::RunRecord r;
    r.state = RuntimeState::kSucceeded;
    r.submitted = WallTime(std::chrono::seconds(1'700'000'000)) + FromSeconds(sent);
    r.created = r.submitted + FromSeconds(done - sent);
    r.finished = r.created + 1s;
    r.tasks.push_back({.name = "prepare",
                       .state = RuntimeState::kSucceeded,
                       .created = r.created,
                       .started = r.created,
                       .finished = r.finished});
    level.runs.push_back(r);
  }
  return level;
}

TEST(CalibrateApi, FitsServiceTimeAndWorkersFromCreateRunLatencies) {
  SharedServiceFit fit;
  // One call a second never queues; 100 a second ask 5 workers' worth.
  auto c = CalibrateLevels({CreateRunLevel("light", 20, 1), CreateRunLevel("heavy", 200, 0.01)},
                           nullptr, {});
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_TRUE(c->shared.api_fitted) << c->shared.api_why_not;
  EXPECT_NEAR(ToSeconds(c->shared.api.run_create), 0.05, 0.001);
  EXPECT_EQ(c->shared.api.workers, 3);
  ASSERT_EQ(c->shared.api_levels.size(), 2u);
  for (const auto& l : c->shared.api_levels) {
    EXPECT_NEAR(l.predicted_mean / l.measured_mean, 1.0, 0.02) << l.source;
  }
  // The calibration file carries it, and simulate applies it.
  auto file = ParseCalibration(ToJson(*c).dump());
  ASSERT_TRUE(file.ok()) << file.error().message;
  EXPECT_EQ(file->api.workers, 3);
  EXPECT_NEAR(ToSeconds(file->api.run_create), 0.05, 0.001);
  WorkloadSpec w = testing::SixStepWorkload(6, 1s, 1s);
  w.calibrated_api = file->api;
  auto r = Simulate(testing::FixedCluster(20, 4), w);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->api.modelled);
  EXPECT_EQ(r->api.served, 6u);
  EXPECT_NEAR(ToSeconds(r->makespan), 4.1, 1e-6);  // the last create waits for a worker: 0.1 s
}

TEST(CalibrateApi, SaysWhyWhenNothingQueuedOrNothingWasMeasured) {
  auto c = CalibrateLevels({CreateRunLevel("light", 20, 1), CreateRunLevel("also-light", 40, 0.5)},
                           nullptr, {});
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->shared.api_fitted);
  EXPECT_THAT(c->shared.api_why_not, ::testing::HasSubstr("CreateRun never queued"));
  EXPECT_THAT(ToJson(*c)["fit"]["api"].get<std::string>(), ::testing::HasSubstr("not fitted"));
  EXPECT_FALSE(ToJson(*c).contains("api"));

  MeasuredLevel bare = CreateRunLevel("no-latencies", 20, 1);
  bare.create_run_us = metrics::Histogram();
  c = CalibrateLevels({bare, CreateRunLevel("heavy", 200, 0.01)}, nullptr, {});
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->shared.api_fitted);
  EXPECT_THAT(c->shared.api_why_not, ::testing::HasSubstr("CreateRun latencies"));
}

// Issue 35: a run of 300,000 tasks was quadratic (every task against every
// other). The ready times are the same as the pairwise definition, and the
// comparisons made grow as n log n.
TEST(Calibrate, ReadyTimesAreTheLatestEndBeforeEachStartInNLogN) {
  const WallTime created{std::chrono::seconds(1'700'000'000)};
  auto at = [&](double s) { return created + FromSeconds(s); };
  std::vector<std::pair<WallTime, WallTime>> small = {
      {at(1), at(5)}, {at(5), at(9)}, {at(6), at(7)}, {at(7.5), at(8)}, {at(0.5), at(0.5)}};
  const std::vector<WallTime> ready = ReadyTimes(small, created);
  for (size_t i = 0; i < small.size(); ++i) {
    WallTime pairwise = created;
    for (const auto& o : small) {
      if (o.second <= small[i].first && o.second > pairwise) pairwise = o.second;
    }
    EXPECT_EQ(ready[i], pairwise) << "task " << i;
  }
  EXPECT_EQ(ready[3], at(7));  // the 6-7 task ended before 7.5
  EXPECT_EQ(ready[0], at(0.5));

  constexpr size_t kTasks = 300'000;
  std::vector<std::pair<WallTime, WallTime>> wide;
  for (size_t i = 0; i < kTasks; ++i) {
    const double start = static_cast<double>(i % 1000) + static_cast<double>(i) * 1e-6;
    wide.emplace_back(at(start), at(start + 1 + static_cast<double>(i % 7)));
  }
  int64_t compared = 0;
  ASSERT_EQ(ReadyTimes(wide, created, &compared).size(), kTasks);
  // n log2 n is about 5.4 million; every pair would be 9e10.
  EXPECT_LT(compared, int64_t{4} * static_cast<int64_t>(kTasks) * 19);
}

// Issue 38 section 3: calibration.json is read back by simulate; its
// durations must be the fitted ones, not the console's rounded forms
// (145.123 s once went out as "2m25s").
TEST(Calibrate, TheFileCarriesFullPrecision) {
  Calibration c;
  c.models.fallback = {exec::DurationDist::Constant(FromSeconds(145.123456)),
                       FromSeconds(3.999999)};
  exec::DurationDist lognormal;
  lognormal.kind = exec::DurationDist::Kind::kLognormal;
  lognormal.a = FromSeconds(3599.9);
  lognormal.sigma = 0.123456789;
  c.models.by_label["exec-train"] = {lognormal, FromSeconds(0.0004567)};
  const nlohmann::json j = ToJson(c);
  auto back = ParseCalibration(j.dump());
  ASSERT_TRUE(back.ok()) << back.error().message << "\n" << j.dump(1);
  EXPECT_EQ(back->steps.fallback.duration.a, c.models.fallback.duration.a) << j.dump(1);
  EXPECT_EQ(back->steps.fallback.overhead, c.models.fallback.overhead);
  const StepModel& train = back->steps.by_label.at("exec-train");
  EXPECT_EQ(train.duration.a, lognormal.a) << j.dump(1);
  EXPECT_DOUBLE_EQ(train.duration.sigma, lognormal.sigma);
  EXPECT_EQ(train.overhead, FromSeconds(0.0004567));
}

}  // namespace
}  // namespace kfpbench::sim
