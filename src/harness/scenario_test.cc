#include "harness/scenario.h"
#include "harness/growth_fill.h"
#include "harness/random_gets_runner.h"
#include "harness/scheduled_runs_runner.h"
#include "harness/stress_runner.h"

#include <filesystem>
#include <fstream>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "results/results.h"
#include "util/ids.h"

namespace kfpbench::harness {
namespace {

namespace fs = std::filesystem;

class ScenarioTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kfpbench-scenario-" + NewUuid());
    fs::create_directories(dir_ / "pipelines");
    std::ofstream(dir_ / "here.yaml") << "x";
    std::ofstream(dir_ / "pipelines" / "elsewhere.yaml") << "x";
  }
  void TearDown() override { fs::remove_all(dir_); }

  Result<ScenarioFile> Parse(const std::string& text, LoadOptions options = {}) {
    return ParseScenarios(text, dir_ / "s.json", options);
  }

  fs::path dir_;
};

TEST_F(ScenarioTest, ReadsThePerfTestsFormat) {
  auto f = Parse(R"([
    {"mode": "PIPELINE_RUN", "startTime": 0, "runTime": 5, "numTimes": 2,
     "pipelineFileName": "here.yaml", "params": {"a": 4, "b": 5}},
    {"mode": "RANDOM_GETS", "startTime": 2, "runTime": 0.5},
    {"mode": "EXPERIMENT", "runTime": "30s", "concurrency": 3, "pipelineFileName": "here.yaml"}
  ])");
  ASSERT_TRUE(f.ok()) << f.error().message;
  ASSERT_EQ(f->scenarios.size(), 3u);
  const auto& a = f->scenarios[0];
  EXPECT_EQ(a.mode_name(), "PIPELINE_RUN");
  EXPECT_EQ(a.run_time, std::chrono::minutes(5));
  EXPECT_EQ(a.num_times, 2);
  EXPECT_EQ(a.InFlight(), 2);
  EXPECT_EQ(a.params["a"], 4);
  EXPECT_EQ(a.pipeline_path, dir_ / "here.yaml");
  EXPECT_EQ(f->scenarios[1].start_time, std::chrono::minutes(2));
  EXPECT_EQ(f->scenarios[1].run_time, std::chrono::seconds(30));
  EXPECT_EQ(f->scenarios[2].run_time, std::chrono::seconds(30));
  EXPECT_EQ(f->scenarios[2].InFlight(), 3);
}

TEST_F(ScenarioTest, HugeNumbersAreErrorsNotAborts) {
  // nlohmann throws out_of_range on 1e999; finite huge times would overflow.
  for (const char* text : {R"([{"mode":"RANDOM_GETS","runTime":1e999}])",
                           R"([{"mode":"RANDOM_GETS","runTime":1e300}])",
                           R"([{"mode":"RANDOM_GETS","runTime":"99999999999999999h"}])",
                           R"([{"mode":"RANDOM_GETS","runTime":1,"startTime":1e308}])"}) {
    auto f = Parse(text);
    EXPECT_FALSE(f.ok()) << text;
  }
  LoadOptions absurd;
  absurd.time_scale = 1e300;
  auto scaled = Parse(R"([{"mode":"RANDOM_GETS","runTime":"1h"}])", absurd);
  ASSERT_TRUE(scaled.ok()) << scaled.error().message;
  EXPECT_EQ(scaled->scenarios[0].run_time, Duration::max());  // saturated, not overflowed
}

TEST_F(ScenarioTest, TimeScaleMultipliesEveryTime) {
  LoadOptions o;
  o.time_scale = 0.05;
  auto f = Parse(R"([{"mode":"RANDOM_GETS","startTime":2,"runTime":10}])", o);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->scenarios[0].start_time, std::chrono::seconds(6));
  EXPECT_EQ(f->scenarios[0].run_time, std::chrono::seconds(30));
}

TEST_F(ScenarioTest, FindsPipelinesAlongPipelineDirs) {
  std::string text = R"([{"mode":"PIPELINE_RUN","runTime":1,"pipelineFileName":"elsewhere.yaml"}])";
  auto missing = Parse(text);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(
      missing.error().message,
      ::testing::HasSubstr("[0].pipelineFileName: pipeline file 'elsewhere.yaml' not found"))
      << missing.error().message;
  LoadOptions o;
  o.pipeline_dirs = {dir_ / "pipelines"};
  auto found = Parse(text, o);
  ASSERT_TRUE(found.ok()) << found.error().message;
  EXPECT_EQ(found->scenarios[0].pipeline_path, dir_ / "pipelines" / "elsewhere.yaml");
}

TEST_F(ScenarioTest, EachBadInputNamesFileAndPath) {
  struct Case {
    const char* text;
    const char* message;
  };
  for (
      const auto& c : std::vector<Case>{
          {"[", "malformed JSON"},
          {"3", "JSON array"},
          {"[]", "no scenarios"},
          {"[1]", "[0]: each scenario must be a JSON object"},
          {R"([{"runTime":1}])", "[0].mode: missing"},
          {R"([{"mode":"RUN","runTime":1}])", "[0].mode: unknown mode 'RUN'"},
          {R"([{"mode":7,"runTime":1}])", "[0].mode: must be a string"},
          {R"([{"mode":"RANDOM_GETS"}])", "[0].runTime: missing"},
          {R"([{"mode":"RANDOM_GETS","runTime":-1}])", "[0].runTime: must not be negative"},
          {R"([{"mode":"RANDOM_GETS","runTime":0}])", "[0].runTime: must be greater than zero"},
          {R"([{"mode":"RANDOM_GETS","runTime":1,"startTime":-2}])",
           "[0].startTime: must not be negative"},
          {R"([{"mode":"RANDOM_GETS","runTime":"soon"}])", "[0].runTime: invalid duration"},
          {R"([{"mode":"RANDOM_GETS","runTime":1,"numTimes":0}])",
           "[0].numTimes: must be a whole number"},
          {R"([{"mode":"RANDOM_GETS","runTime":1,"numTimes":1.5}])", "[0].numTimes"},
          {R"([{"mode":"RANDOM_GETS","runTime":1,"colour":"red"}])", "[0].colour: unknown field"},
          {R"([{"mode":"PIPELINE_RUN","runTime":1}])", "[0].pipelineFileName: required"},
          {R"([{"mode":"PIPELINE_RUN","runTime":1,"pipelineFileName":"nope.yaml"}])",
           "[0].pipelineFileName: pipeline file 'nope.yaml' not found"},
          {R"([{"mode":"PIPELINE_RUN","runTime":1,"pipelineFileName":"here.yaml","params":[1]}])",
           "[0].params: must be an object"},
          {R"([{"mode":"SCHEDULED_RUNS","runTime":1,"pipelineFileName":"here.yaml"}])",
           "[0].cron: required"},
          {R"([{"mode":"RANDOM_GETS","runTime":1,"mix":{"DeleteRun":1}}])",
           "[0].mix.DeleteRun: not a read operation (known: ListPipelines,"},
          {R"([{"mode":"RANDOM_GETS","runTime":1,"mix":{"GetRun":0}}])",
           "[0].mix.GetRun: weight must be a number > 0"},
          {R"([{"mode":"RANDOM_GETS","runTime":1,"mix":{"GetRun":"8"}}])",
           "[0].mix.GetRun: weight must be a number > 0"},
          {R"([{"mode":"RANDOM_GETS","runTime":1,"mix":{}}])", "[0].mix: must be an object"},
          {R"([{"mode":"PIPELINE_RUN","runTime":1,"pipelineFileName":"here.yaml","mix":{"GetRun":1}}])",
           "[0].mix: only RANDOM_GETS draws a mix"},
      }) {
    auto f = Parse(c.text);
    ASSERT_FALSE(f.ok()) << c.text;
    EXPECT_THAT(f.error().message, ::testing::HasSubstr(c.message))
        << c.text << " -> " << f.error().message;
    EXPECT_EQ(f.error().message.rfind((dir_ / "s.json").string() + ": ", 0), 0u)
        << f.error().message;
  }
}

TEST_F(ScenarioTest, RandomGetsMixReadsTheWeights) {
  auto f = Parse(R"([{"mode":"RANDOM_GETS","runTime":1,"mix":{"GetRun":8,"ListRuns":1.5}}])");
  ASSERT_TRUE(f.ok()) << f.error().message;
  const auto* mix = dynamic_cast<const RandomGetsMix*>(f->scenarios[0].mode_data.get());
  ASSERT_NE(mix, nullptr);
  ASSERT_EQ(mix->weights.size(), 2u);
  EXPECT_EQ(mix->weights[0], (std::pair<std::string, double>{"GetRun", 8}));
  EXPECT_EQ(mix->weights[1], (std::pair<std::string, double>{"ListRuns", 1.5}));
  // Without a mix the mode has nothing of its own: the runner sends the chain.
  auto chain = Parse(R"([{"mode":"RANDOM_GETS","runTime":1}])");
  ASSERT_TRUE(chain.ok()) << chain.error().message;
  EXPECT_EQ(chain->scenarios[0].mode_data, nullptr);
}

TEST_F(ScenarioTest, ObjectFormAppliesDefaultsAndKeepsThresholds) {
  auto f = Parse(R"({
    "target": {"host": "http://127.0.0.1:8888"},
    "defaults": {"runTime": "10s", "numTimes": 3},
    "thresholds": {"CreateRun": ["p95 < 500ms"]},
    "scenarios": [{"mode": "RANDOM_GETS"}, {"mode": "RANDOM_GETS", "numTimes": 1}]
  })");
  ASSERT_TRUE(f.ok()) << f.error().message;
  ASSERT_EQ(f->scenarios.size(), 2u);
  EXPECT_EQ(f->scenarios[0].run_time, std::chrono::seconds(10));
  EXPECT_EQ(f->scenarios[0].num_times, 3);
  EXPECT_EQ(f->scenarios[1].num_times, 1);
  EXPECT_EQ(f->thresholds["CreateRun"][0], "p95 < 500ms");
  EXPECT_EQ(f->target["host"], "http://127.0.0.1:8888");
}

TEST_F(ScenarioTest, ObjectFormErrorsNameTheirPath) {
  for (auto [text, fragment] : std::vector<std::pair<const char*, const char*>>{
           {R"({"scenarios": [{"mode": "X", "runTime": 1}]})", "scenarios[0].mode: unknown mode"},
           {R"({"scenario": []})", "scenario: unknown field"},
           {R"({"thresholds": [], "scenarios": []})", "thresholds: must be an object"},
           {R"({"defaults": {}})", "scenarios: missing"},
       }) {
    auto f = Parse(text);
    ASSERT_FALSE(f.ok()) << text;
    EXPECT_THAT(f.error().message, ::testing::HasSubstr(fragment)) << f.error().message;
  }
}

TEST_F(ScenarioTest, OpenLoopFields) {
  auto f = Parse(R"([{"mode":"PIPELINE_RUN","runTime":1,"pipelineFileName":"here.yaml",
                     "rate":120,"arrival":"poisson","seed":7}])");
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(*f->scenarios[0].rate_per_minute, 120);
  EXPECT_EQ(f->scenarios[0].arrival, Scenario::Arrival::kPoisson);
  EXPECT_EQ(f->scenarios[0].seed, 7u);
  for (auto [text, fragment] : std::vector<std::pair<const char*, const char*>>{
           {R"([{"mode":"RANDOM_GETS","runTime":1,"rate":0}])",
            "[0].rate: must be runs per minute"},
           {R"([{"mode":"RANDOM_GETS","runTime":1,"rate":"fast"}])", "[0].rate"},
           {R"([{"mode":"RANDOM_GETS","runTime":1,"rate":5,"arrival":"bursty"}])",
            "[0].arrival: must be"},
           {R"([{"mode":"RANDOM_GETS","runTime":1,"arrival":"poisson"}])", "needs a rate"},
           {R"([{"mode":"RANDOM_GETS","runTime":1,"rate":5,"seed":-1}])", "[0].seed"},
       }) {
    auto bad = Parse(text);
    ASSERT_FALSE(bad.ok()) << text;
    EXPECT_THAT(bad.error().message, ::testing::HasSubstr(fragment)) << bad.error().message;
  }
}

TEST_F(ScenarioTest, LargeDatasetNeedsAnArtifactSize) {
  auto f = Parse(R"([{"mode":"LARGE_DATASET","runTime":1,"pipelineFileName":"here.yaml",
                     "params":{"size":"512Mi"}}])");
  ASSERT_TRUE(f.ok()) << f.error().message;
  ASSERT_NE(f->scenarios[0].mode_data, nullptr);
  results::ScenarioInfo info;
  f->scenarios[0].mode_data->Describe(info);
  EXPECT_EQ(info.artifact_bytes, 512 << 20);
  auto missing = Parse(R"([{"mode":"LARGE_DATASET","runTime":1,"pipelineFileName":"here.yaml"}])");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, ::testing::HasSubstr("[0].params.size: required"));
  auto bad = Parse(R"([{"mode":"LARGE_DATASET","runTime":1,"pipelineFileName":"here.yaml",
                       "params":{"size":"huge"}}])");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, ::testing::HasSubstr("[0].params.size: not a size"));
}

TEST_F(ScenarioTest, StressShape) {
  auto f = Parse(R"([{"mode":"PIPELINE_RUN","runTime":"10m","pipelineFileName":"here.yaml",
                     "rate":10,"shape":"stress","stress":{"stepTime":"1m","rateFactor":1.5,
                     "maxRate":100,"slo":{"p95":"30s","errorRate":"2%"}}}])");
  ASSERT_TRUE(f.ok()) << f.error().message;
  ASSERT_NE(f->scenarios[0].ShapeSettings<StressSettings>(), nullptr);
  const auto& st = *f->scenarios[0].ShapeSettings<StressSettings>();
  EXPECT_EQ(st.step_time, std::chrono::minutes(1));
  EXPECT_DOUBLE_EQ(st.rate_factor, 1.5);
  EXPECT_DOUBLE_EQ(st.max_rate, 100);
  EXPECT_EQ(st.slo_p95, std::chrono::seconds(30));
  EXPECT_DOUBLE_EQ(st.slo_error_rate, 0.02);
  std::string base = R"({"mode":"PIPELINE_RUN","runTime":"10m","pipelineFileName":"here.yaml",)";
  for (
      auto [tail, fragment] : std::vector<std::pair<std::string, const char*>>{
          {R"("shape":"stress","stress":{"stepTime":"1m","slo":{"p95":"1s"}}})",
           "starts from a rate"},
          {R"("rate":1,"shape":"stress"})", "[0].stress: required"},
          {R"("rate":1,"shape":"stress","stress":{"slo":{"p95":"1s"}}})", "stepTime: required"},
          {R"("rate":1,"shape":"stress","stress":{"stepTime":"1m"}})", "slo.p95: required"},
          {R"("rate":1,"shape":"stress","stress":{"stepTime":"1m","rateFactor":1,"slo":{"p95":"1s"}}})",
           "rateFactor: must be a number greater than 1"},
          {R"("rate":1,"shape":"stress","stress":{"stepTime":"1m","slo":{"p99":"1s"}}})",
           "slo.p99: unknown field"},
          {R"("rate":1,"shape":"spiky"})", "[0].shape: must be"},
          {R"("rate":1,"stress":{}})", "goes with"},
      }) {
    auto bad = Parse("[" + base + tail + "]");
    ASSERT_FALSE(bad.ok()) << tail;
    EXPECT_THAT(bad.error().message, ::testing::HasSubstr(fragment)) << bad.error().message;
  }
}

TEST_F(ScenarioTest, GrowthShapeReadsItsLevelsAndRefusesBadOnes) {
  std::string base = R"({"mode":"PIPELINE_RUN","runTime":"10m","pipelineFileName":"here.yaml",)";
  auto f = Parse("[" + base + R"("shape":"growth","growth":{"levels":[20,60,150],
      "measureTime":"5s","fillConcurrency":3,"runsPerExperiment":10,"extrapolateTo":200000}}])");
  ASSERT_TRUE(f.ok()) << f.error().message;
  ASSERT_NE(f->scenarios[0].ShapeSettings<GrowthSettings>(), nullptr);
  const auto& g = *f->scenarios[0].ShapeSettings<GrowthSettings>();
  EXPECT_EQ(g.levels, (std::vector<int64_t>{20, 60, 150}));
  EXPECT_EQ(g.measure_time, std::chrono::seconds(5));
  EXPECT_EQ(g.fill_concurrency, 3);
  EXPECT_EQ(g.measure_concurrency, 4);
  EXPECT_EQ(g.runs_per_experiment, 10);
  EXPECT_EQ(g.extrapolate_to, 200000);
  for (auto [growth, fragment] : std::vector<std::pair<std::string, const char*>>{
           {R"({"levels":[100,50],"measureTime":"5s"})",
            "[0].growth.levels[1]: levels must increase (50 follows 100)"},
           {R"({"levels":[100,100],"measureTime":"5s"})", "levels must increase"},
           {R"({"levels":[0,10],"measureTime":"5s"})",
            "[0].growth.levels[0]: must be from 1 to 100000000 runs (got 0)"},
           {R"({"levels":[10,-5],"measureTime":"5s"})",
            "[0].growth.levels[1]: must be from 1 to 100000000 runs (got -5)"},
           {R"({"levels":[10,20.5],"measureTime":"5s"})",
            "[0].growth.levels[1]: must be a whole number of runs (got 20.5)"},
           {R"({"levels":["10"],"measureTime":"5s"})", "must be a number of runs"},
           {R"({"levels":[],"measureTime":"5s"})", "must be a non-empty array"},
           {R"({"measureTime":"5s"})", "[0].growth.levels: required"},
           {R"({"levels":[10]})", "[0].growth.measureTime: required"},
           {R"({"levels":[10],"measureTime":"5s","fillConcurrency":0})",
            "fillConcurrency: must be a whole number from 1 to 256"},
           {R"({"levels":[10],"measureTime":"5s","level":[1]})", "growth.level: unknown field"},
       }) {
    auto bad = Parse("[" + base + R"("shape":"growth","growth":)" + growth + "}]");
    ASSERT_FALSE(bad.ok()) << growth;
    EXPECT_THAT(bad.error().message, ::testing::HasSubstr(fragment)) << bad.error().message;
  }
  for (auto [tail, fragment] : std::vector<std::pair<std::string, const char*>>{
           {R"("shape":"growth"})", "[0].growth: required"},
           {R"("growth":{"levels":[1],"measureTime":"1s"}})", "[0].growth: goes with"},
           {R"("shape":"load","growth":{"levels":[1],"measureTime":"1s"}})", "goes with"},
           {R"("rate":5,"shape":"growth","growth":{"levels":[1],"measureTime":"1s"}})",
            "[0].rate: the growth shape fills and measures in closed loop"},
       }) {
    auto bad = Parse("[" + base + tail + "]");
    ASSERT_FALSE(bad.ok()) << tail;
    EXPECT_THAT(bad.error().message, ::testing::HasSubstr(fragment)) << bad.error().message;
  }
  auto experiment = Parse(R"([{"mode":"EXPERIMENT","runTime":"1m","pipelineFileName":"here.yaml",
      "shape":"growth","growth":{"levels":[1],"measureTime":"1s"}}])");
  ASSERT_FALSE(experiment.ok());
  EXPECT_THAT(experiment.error().message,
              ::testing::HasSubstr("growth works with mode PIPELINE_RUN"));
  // Levels count the runs of one target: a growth scenario is not split.
  EXPECT_FALSE(ApplyShard(*f, 0, 2).ok());
}

TEST(KfpCron, FiveFieldCronGetsSeconds) {
  EXPECT_EQ(KfpCron("0 */2 * * *"), "0 0 */2 * * *");
  EXPECT_EQ(KfpCron("*/10 * * * * *"), "*/10 * * * * *");
  EXPECT_EQ(KfpCron("@every 5m"), "@every 5m");
}

TEST_F(ScenarioTest, ShardsTogetherSendWhatOneWould) {
  std::string text = R"([
    {"mode": "PIPELINE_RUN", "runTime": 1, "numTimes": 10, "pipelineFileName": "here.yaml"},
    {"mode": "RANDOM_GETS", "runTime": 1, "concurrency": 3},
    {"mode": "PIPELINE_RUN", "runTime": 1, "rate": 120, "pipelineFileName": "here.yaml"}
  ])";
  int workers = 0, getters = 0;
  double rate = 0;
  std::set<double> offsets;
  for (int i = 0; i < 4; ++i) {
    auto f = Parse(text);
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE(ApplyShard(*f, i, 4).ok());
    workers += f->scenarios[0].InFlight();
    getters += f->scenarios[1].InFlight();
    rate += *f->scenarios[2].rate_per_minute;
    offsets.insert(f->scenarios[2].arrival_offset);
  }
  EXPECT_EQ(workers, 10);
  EXPECT_EQ(getters, 3);
  EXPECT_DOUBLE_EQ(rate, 120);
  EXPECT_EQ(offsets, (std::set<double>{0, 0.25, 0.5, 0.75}));
  auto f = Parse(text);
  EXPECT_FALSE(ApplyShard(*f, 4, 4).ok());
  EXPECT_FALSE(ApplyShard(*f, 0, 0).ok());
}

TEST_F(ScenarioTest, MissingFileIsAClearError) {
  auto f = LoadScenarioFile(dir_ / "absent.json", {});
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.error().message,
              ::testing::HasSubstr("cannot read " + (dir_ / "absent.json").string()));
}

TEST_F(ScenarioTest, ZeroTimeScaleIsRefused) {
  LoadOptions o;
  o.time_scale = 0;
  EXPECT_FALSE(Parse(R"([{"mode":"RANDOM_GETS","runTime":1}])", o).ok());
}

}  // namespace
}  // namespace kfpbench::harness
