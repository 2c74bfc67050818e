#include "sim/summary_fit.h"

#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/simulator.h"
#include "sim/summary_search.h"
#include "sim/test_support.h"
#include "util/sanitizers.h"

namespace kfpbench::sim {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::shared_ptr<const ir::PipelineSpec> FourSteps() {
  std::ifstream in(testing::CapacityExamples() / "four_steps.yaml");
  std::stringstream s;
  s << in.rdbuf();
  auto spec = ir::ParsePipelineSpec(s.str());
  EXPECT_TRUE(spec.ok()) << spec.error().message;
  return std::make_shared<const ir::PipelineSpec>(std::move(*spec));
}

// The truth the table is simulated from: 8 minutes of steps split
// 60/150/210/60 s, 4 s of overhead a step, nodes 90 s to come up.
struct Truth {
  std::map<std::string, double> seconds = {
      {"exec-ingest", 60}, {"exec-featurize", 150}, {"exec-train", 210}, {"exec-evaluate", 60}};
  double overhead = 4;
  double delay = 90;
};

NodePool Nodes(int min, int max) {
  NodePool pool;
  pool.name = "summary";
  pool.cpu = 16;
  pool.memory = int64_t{64} << 30;
  pool.min = pool.initial = min;
  pool.max = max;
  return pool;
}

// One row of the table: `runs` at once on 16-CPU nodes autoscaled 1-20.
SummaryLevel Row(const std::shared_ptr<const ir::PipelineSpec>& pipeline, const Truth& truth,
                 int64_t runs, int max_nodes = 20) {
  ClusterSpec cluster;
  cluster.pools = {Nodes(1, max_nodes)};
  cluster.autoscaler.provisioning_delay = FromSeconds(truth.delay);
  WorkloadSpec w;
  w.pipeline = pipeline;
  w.runs = runs;
  for (const auto& [label, seconds] : truth.seconds) {
    w.steps.by_label[label] = {exec::DurationDist::Constant(FromSeconds(seconds)),
                               FromSeconds(truth.overhead)};
  }
  auto r = Simulate(cluster, w);
  EXPECT_TRUE(r.ok());
  SummaryLevel level;
  level.name = fmt::format("{} runs", runs);
  level.runs = runs;
  level.pool = cluster.pools[0];
  level.makespan = ToSeconds(r->makespan);
  return level;
}

TEST(SummaryFitTest, CompositionsCoverTheSimplex) {
  EXPECT_EQ(Compositions(8, 4).size(), 35u);
  EXPECT_EQ(Compositions(3, 4).size(), 0u);
  EXPECT_EQ(Compositions(5, 1), (std::vector<std::vector<int>>{{5}}));
  for (const auto& c : Compositions(6, 3)) EXPECT_EQ(c[0] + c[1] + c[2], 6);
}

TEST(SummaryFitTest, StepLabelsAreTheContainerSteps) {
  EXPECT_EQ(StepLabels(*FourSteps()), (std::vector<std::string>{"exec-evaluate", "exec-featurize",
                                                                "exec-ingest", "exec-train"}));
}

// The done-when of issue 27 section 1: two rows of a table with known truth
// fitted, the other rows predicted within 10%, or the fit says with numbers
// that the data cannot decide and what would.
TEST(SummaryFitTest, TwoRowsPredictTheRestOrSayWhatWouldDecide) {
  const auto pipeline = FourSteps();
  const Truth truth;
  SummaryLevels file;
  // Under the sanitizers, whose unoptimised simulations are twenty times
  // slower, a coarser grid and the held-out rows up to 100: the same code,
  // with the Release build holding the full table.
  std::vector<int64_t> rows = {1, 10, 50, 100, 500, 1000};
  SummaryFitOptions options;
  if (kUnderAddressSanitizer) {
    rows = {1, 10, 50, 100};
    options.split_resolution = 4;
  }
  for (int64_t runs : rows) file.levels.push_back(Row(pipeline, truth, runs));
  for (auto& level : file.levels) level.held_out = level.runs != 1 && level.runs != 100;
  auto fit = FitSummaryLevels(file, pipeline, options);
  ASSERT_TRUE(fit.ok()) << fit.error().message;
  const std::string text = Describe(*fit, file);
  std::cout << text;
  ASSERT_EQ(fit->held_out.size(), rows.size() - 2);
  const Identifiability& id = fit->identifiability;
  for (const auto& e : fit->held_out) {
    if (std::abs(e.error()) <= 0.10) continue;
    // Not within 10%: the fit must say the data cannot decide, with the
    // near-equal fits' range at that level, and name what would.
    EXPECT_FALSE(id.decided) << file.levels[e.level].name;
    EXPECT_GT(id.range[e.level].second, id.range[e.level].first * (1 + 2 * fit->tolerance));
    EXPECT_TRUE(!id.measurements.empty() || id.level.has_value());
    EXPECT_THAT(text, HasSubstr("THE DATA CANNOT DECIDE"));
  }
  EXPECT_FALSE(fit->leave_one_out_why_not.empty());  // two fitted levels: none to leave out
  // Issue 38 section 4: the truth explains the fitted rows exactly, so it
  // is one of the near-equal fits, and the range they print for a held-out
  // row holds what the truth gives there: the measured value. (Unless the
  // time ran out before the near-equal set was searched at its edges, or
  // the sanitizer build's coarse grid, 4 splits, is searched: from it the
  // edge search does not reach the truth, which is issue 38 section 4's
  // remaining work, a search that does not depend on the grid.)
  if (!fit->out_of_time && !kUnderAddressSanitizer) {
    for (const auto& e : fit->held_out) {
      EXPECT_LE(id.range[e.level].first, e.measured * (1 + 1e-9)) << file.levels[e.level].name;
      EXPECT_GE(id.range[e.level].second, e.measured * (1 - 1e-9)) << file.levels[e.level].name;
    }
  }
}

TEST(SummaryFitTest, LeaveOneOutPredictsEachFittedLevel) {
  const auto pipeline = FourSteps();
  const Truth truth;
  SummaryLevels file;
  for (int64_t runs : {1, 20, 60}) file.levels.push_back(Row(pipeline, truth, runs, 6));
  SummaryFitOptions options;
  options.split_resolution = 4;
  auto fit = FitSummaryLevels(file, pipeline, options);
  ASSERT_TRUE(fit.ok()) << fit.error().message;
  ASSERT_EQ(fit->leave_one_out.size(), 3u);
  for (const auto& e : fit->leave_one_out) EXPECT_GT(e.measured, 0);
  EXPECT_THAT(Describe(*fit, file), HasSubstr("left out    \"20 runs\""));
  const nlohmann::json j = ToJson(*fit, file);
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(j["levels"][i].contains("leave_one_out_error")) << i;
}

TEST(SummaryFitTest, RefusesWhatItCannotFit) {
  SummaryLevels file;
  file.levels.push_back({});
  file.levels[0].runs = 1;
  file.levels[0].pool = Nodes(1, 1);
  EXPECT_THAT(FitSummaryLevels(file, FourSteps()).error().message, HasSubstr("no level to fit"));
  file.levels[0].makespan = 100;
  EXPECT_THAT(FitSummaryLevels(file, nullptr).error().message, HasSubstr("name the pipeline"));
  file.levels[0].pool.cpu = 2;  // no step of four_steps fits a 2-CPU node
  EXPECT_FALSE(FitSummaryLevels(file, FourSteps()).ok());
}

// Issue 35: thousands of levels ran far past --fit-seconds, the grid and
// leave-one-out taking no notice of it. With the time spent before the
// search starts, nothing is simulated and the error names the limit; the
// count of simulations is the work done, not a clock.
TEST(SummaryFitTest, TheFitSecondsBoundEverySimulation) {
  const auto pipeline = FourSteps();
  SummaryLevels file;
  for (int i = 0; i < 2000; ++i) {
    SummaryLevel l;
    l.name = fmt::format("level {}", i);
    l.runs = 1 + i % 7;
    l.pool = Nodes(1, 1);
    l.makespan = 500 + i % 7 * 60;
    file.levels.push_back(l);
  }
  SummaryFitOptions options;
  options.max_seconds = 0;
  options.threads = 2;
  auto fit = FitSummaryLevels(file, pipeline, options);
  ASSERT_FALSE(fit.ok());
  EXPECT_THAT(fit.error().message, HasSubstr("--fit-seconds")) << fit.error().message;
  EXPECT_THAT(fit.error().message, HasSubstr("0 simulations")) << fit.error().message;

  // The search itself: every candidate of the grid is cut short, none is
  // simulated.
  SummarySearch search(file, pipeline, options);
  std::vector<size_t> all(file.levels.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  auto grid = search.Grid(0, all);
  ASSERT_TRUE(grid.ok()) << grid.error().message;
  EXPECT_TRUE(grid->empty());
  EXPECT_EQ(search.simulations(), 0);
  EXPECT_EQ(search.cut_short(), 35 * 5);  // 35 splits x 5 overheads (no level autoscales)
}

// Issue 38 section 3: a delay no level could show is not called fitted.
TEST(SummaryFitTest, ADelayNoLevelCouldShowIsNotCalledFitted) {
  const auto pipeline = FourSteps();
  const Truth truth;
  SummaryLevels file;
  for (int64_t runs : {1, 20}) file.levels.push_back(Row(pipeline, truth, runs, 6));
  for (auto& l : file.levels) l.pool = Nodes(6, 6);  // fixed: nothing autoscales
  SummaryFitOptions options;
  options.split_resolution = 4;
  auto fit = FitSummaryLevels(file, pipeline, options);
  ASSERT_TRUE(fit.ok()) << fit.error().message;
  EXPECT_EQ(fit->delay_basis, "not fitted: no level autoscaled");
  const std::string text = Describe(*fit, file);
  EXPECT_THAT(text, Not(HasSubstr("provisioning delay 1m0s"))) << text;
  EXPECT_THAT(text, HasSubstr("provisioning delay not fitted")) << text;
  EXPECT_EQ(ToJson(*fit, file)["autoscaler"]["provisioning_delay"],
            "not fitted: no level autoscaled");
  EXPECT_FALSE(fit->out_of_time);

  // Autoscaled levels do fit it.
  SummaryLevels scaled;
  for (int64_t runs : {1, 20}) scaled.levels.push_back(Row(pipeline, truth, runs, 6));
  auto fitted = FitSummaryLevels(scaled, pipeline, options);
  ASSERT_TRUE(fitted.ok()) << fitted.error().message;
  EXPECT_EQ(fitted->delay_basis, "fitted");
}

// Issue 38 section 4: a best fit that misses a fitted level by more than
// the tolerance says so. 50 runs cannot finish on one node in barely more
// than one run's time, whatever the split.
TEST(SummaryFitTest, ABestFitThatMissesAFittedLevelIsFlagged) {
  const auto pipeline = FourSteps();
  SummaryLevels file;
  for (auto [runs, makespan] : {std::pair{1, 500.0}, {50, 510.0}}) {
    SummaryLevel l;
    l.name = fmt::format("{} runs", runs);
    l.runs = runs;
    l.pool = Nodes(1, 1);
    l.makespan = makespan;
    file.levels.push_back(l);
  }
  SummaryFitOptions options;
  options.split_resolution = 4;
  auto fit = FitSummaryLevels(file, pipeline, options);
  ASSERT_TRUE(fit.ok()) << fit.error().message;
  EXPECT_GT(fit->best.worst, fit->tolerance);
  const std::string text = Describe(*fit, file);
  EXPECT_THAT(text, HasSubstr("BEST FIT MISSES A FITTED LEVEL")) << text;
  EXPECT_THAT(text, HasSubstr("\"50 runs\"")) << text;
  EXPECT_TRUE(ToJson(*fit, file)["best_misses_a_fitted_level"].get<bool>());
}

}  // namespace
}  // namespace kfpbench::sim
