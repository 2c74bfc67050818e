// The growth shape: level by level, fill the target to the level's runs
// stored, let the filled runs finish, read what the target stores, then
// measure a read-and-write mix there for measureTime, each level in its own
// histograms (results::GrowthLevel).
#include "harness/growth_runner.h"

#include <algorithm>
#include <iterator>
#include <mutex>
#include <random>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "harness/growth_fill.h"
#include "harness/preflight.h"
#include "harness/shapes.h"
#include "util/json_checks.h"

namespace kfpbench::harness {
namespace {

constexpr int kFirstPage = 20;  // the UI's page size
constexpr int kDeepPage = 100;  // pages followed by ListRuns:deep
constexpr size_t kRunIdsKept = 1000;

const std::string kNewestFirst = "created_at desc";

// What one worker of the mix measured.
struct Tally {
  std::map<std::string, metrics::Histogram> latency_us;
  std::map<std::string, uint64_t> errors;
  int64_t deepest_page = 0;
};

struct MixInputs {
  FillObjects fill;
  std::string prefix;
  size_t level_index = 0;
  nlohmann::json params;
};

// One closed-loop worker: the operations in turn (so each gets an equal
// share of calls), timed around the client call, until `end` or `stop()`.
// Latency of answered calls only; failures are counted apart.
void MixWorker(kfp::Client& client, const MixInputs& in, int worker, WallTime end,
               const std::function<bool()>& stop, Tally& tally) {
  std::mt19937_64 random(static_cast<uint64_t>(worker) * 7919 + in.level_index);
  std::vector<std::string> run_ids;
  std::string deep_token;
  int64_t depth = 0;
  auto pick = [&](const auto& list) -> const auto& {
    return list[std::uniform_int_distribution<size_t>(0, list.size() - 1)(random)];
  };
  auto keep_ids = [&](const kfp::IdPage& page) {
    for (const auto& id : page.ids) {
      if (run_ids.size() < kRunIdsKept) run_ids.push_back(id);
    }
  };
  constexpr size_t kOps = std::size(results::kGrowthOperations);
  // At least one whole turn, even past `end`: on a slow target a short
  // measureTime would otherwise leave an operation without a sample at this
  // level, and its curve without a point.
  const size_t first = static_cast<size_t>(worker);
  for (size_t n = first; (n < first + kOps || WallClock::now() < end) && !stop(); ++n) {
    const std::string op(results::kGrowthOperations[n % kOps]);
    kfp::ListOptions list;
    list.page_size = kFirstPage;
    list.sort_by = kNewestFirst;
    std::function<Status()> call;
    if (op == "ListRuns") {
      call = [&]() -> Status {
        auto page = client.ListRunIds(list);
        if (page.ok()) keep_ids(*page);
        return page.ok() ? Ok() : Status(page.error());
      };
    } else if (op == "ListRuns:state") {
      list.filter =
          nlohmann::json{
              {"predicates",
               {{{"key", "state"}, {"operation", "EQUALS"}, {"string_value", "SUCCEEDED"}}}}}
              .dump();
      call = [&]() -> Status {
        auto page = client.ListRunIds(list);
        return page.ok() ? Ok() : Status(page.error());
      };
    } else if (op == "ListRuns:experiment") {
      if (in.fill.experiment_ids.empty()) continue;
      list.experiment_id = pick(in.fill.experiment_ids);
      call = [&]() -> Status {
        auto page = client.ListRunIds(list);
        if (page.ok()) keep_ids(*page);
        return page.ok() ? Ok() : Status(page.error());
      };
    } else if (op == "ListRuns:deep") {
      list.page_size = kDeepPage;
      list.page_token = deep_token;
      call = [&]() -> Status {
        auto page = client.ListRunIds(list);
        if (!page.ok()) return page.error();
        deep_token = page->next_page_token;
        depth = deep_token.empty() ? 0 : depth + 1;  // the last page: from the top again
        tally.deepest_page = std::max(tally.deepest_page, depth);
        return Ok();
      };
    } else if (op == "GetRun") {
      if (run_ids.empty()) continue;
      const std::string& id = pick(run_ids);
      call = [&]() -> Status {
        auto state = client.GetRunState(id);
        return state.ok() ? Ok() : Status(state.error());
      };
    } else if (op == "ListExperiments") {
      list.sort_by.clear();
      call = [&]() -> Status {
        auto page = client.ListExperimentIds(list);
        return page.ok() ? Ok() : Status(page.error());
      };
    } else if (op == "ListPipelines") {
      list.sort_by.clear();
      call = [&]() -> Status {
        auto page = client.ListPipelineIds(list);
        return page.ok() ? Ok() : Status(page.error());
      };
    } else if (op == "CreateRun") {
      if (in.fill.experiment_ids.empty() || in.fill.pipeline_versions.empty()) continue;
      // Into the fill's experiments, so the clean-up finds these runs too.
      kfp::RunCreate create;
      create.display_name = fmt::format("{}-m{}-w{}-{}", in.prefix, in.level_index, worker, n);
      create.experiment_id = pick(in.fill.experiment_ids);
      const auto& [pipeline_id, version_id] = pick(in.fill.pipeline_versions);
      create.pipeline_id = pipeline_id;
      create.pipeline_version_id = version_id;
      create.parameters = in.params;
      call = [&, create]() -> Status {
        auto run = client.CreateRun(create);
        return run.ok() ? Ok() : Status(run.error());
      };
    } else {
      continue;
    }
    auto began = std::chrono::steady_clock::now();
    Status s = call();
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                  std::chrono::steady_clock::now() - began)
                  .count();
    if (s.ok()) {
      tally.latency_us[op].Record(us);
    } else {
      ++tally.errors[op];
    }
  }
}

void MeasureLevel(kfp::Client& client, const MixInputs& in, int concurrency, WallTime end,
                  const std::function<bool()>& stop, results::GrowthLevel& level) {
  auto began = std::chrono::steady_clock::now();
  std::vector<Tally> tallies(static_cast<size_t>(concurrency));
  std::vector<std::thread> workers;
  for (int w = 0; w < concurrency; ++w) {
    workers.emplace_back([&, w] { MixWorker(client, in, w, end, stop, tallies[w]); });
  }
  for (auto& t : workers) t.join();
  for (const auto& t : tallies) {
    for (const auto& [op, h] : t.latency_us) level.latency_us[op].Merge(h);
    for (const auto& [op, n] : t.errors) level.errors[op] += n;
    level.deepest_page = std::max(level.deepest_page, t.deepest_page);
  }
  level.measure_seconds = ToSeconds(std::chrono::steady_clock::now() - began);
}

// After a level's fill: runs still executing would put the engine's work
// into the measurement, so they are waited for (up to `settle_timeout`);
// then what the target stores is counted.
Status SettleAndCount(kfp::Client& client, Duration settle_timeout, WallTime deadline,
                      Context& context, results::GrowthLevel& level) {
  auto settle_began = std::chrono::steady_clock::now();
  const WallTime settle_until = WallClock::now() + settle_timeout;
  auto active =
      Settle(client, std::min(settle_until, deadline), [&] { return context.Interrupted(); });
  if (!active.ok()) return Error{"waiting for the filled runs: " + active.error().message};
  level.settle_seconds = ToSeconds(std::chrono::steady_clock::now() - settle_began);
  level.unsettled_runs = *active;
  auto stored = CountStored(client);
  if (!stored.ok()) return Error{"counting what the target stores: " + stored.error().message};
  level.runs_stored = stored->runs;
  level.experiments_stored = stored->experiments;
  level.pipelines_stored = stored->pipelines;
  return Ok();
}

}  // namespace

namespace {

// A growth scenario's curve so far, replacing the scenario's earlier one.
void SetGrowthCurve(std::vector<results::GrowthCurve>& curves, const results::GrowthCurve& curve) {
  for (auto& c : curves) {
    if (c.scenario == curve.scenario) {
      c = curve;
      return;
    }
  }
  curves.push_back(curve);
}

}  // namespace

Status RunGrowth(const Scenario& scenario, Context& context) {
  const GrowthSettings& g = *scenario.ShapeSettings<GrowthSettings>();
  const HarnessOptions& options = context.options();
  std::string prefix = options.growth_fill;
  if (prefix.empty()) {
    if (!options.embedded_target) {
      return Error{
          "the growth shape fills a real target only with --growth-fill NAME, naming what it "
          "may create (experiments NAME-e0, NAME-e1, ..., pipelines NAME-p0, ...)"};
    }
    prefix = context.Name(fmt::format("growth-s{}", scenario.index));
  }
  auto text = context.ReadPipelineFile(scenario.pipeline_path);
  if (!text.ok()) return text.error();
  const FillPlan plan = PlanFill(scenario, prefix, *text);
  // The embedded backend's database goes with it; a real target's fill is
  // deleted by experiment.
  if (!options.embedded_target) context.TrackGrowthFill(prefix);

  kfp::Client& client = context.client();
  results::GrowthCurve curve;
  curve.scenario = scenario.index;
  curve.extrapolate_to = g.extrapolate_to;
  context.Record([&](Findings& f) { SetGrowthCurve(f.growth, curve); });
  const WallTime deadline = WallClock::now() + scenario.run_time;
  auto out_of_time = [&] { return context.Interrupted() || WallClock::now() >= deadline; };
  auto why_stopped = [&] { return context.Interrupted() ? "interrupted" : "runTime ended"; };
  auto stopped = [&](std::string why) {
    spdlog::warn("scenario [{}] growth: {}", scenario.index, why);
    curve.stopped_because = std::move(why);
    context.Record([&](Findings& f) { SetGrowthCurve(f.growth, curve); });
    return Ok();
  };

  for (size_t i = 0; i < g.levels.size(); ++i) {
    const int64_t target = g.levels[i];
    if (out_of_time()) {
      return stopped(fmt::format("{} before level {} ({} runs)", why_stopped(), i + 1, target));
    }
    results::GrowthLevel level;
    level.target_runs = target;
    spdlog::info("scenario [{}] growth: filling to {} runs ({} at a time)", scenario.index, target,
                 plan.concurrency);
    auto fill = FillTo(client, plan, target, out_of_time);
    if (!fill.ok()) {
      curve.stopped_because = fmt::format("the fill of level {} ({} runs) failed: {}", i + 1,
                                          target, fill.error().message);
      context.Record([&](Findings& f) { SetGrowthCurve(f.growth, curve); });
      return Error{curve.stopped_because};
    }
    level.runs_created = fill->runs_created;
    level.experiments_created = fill->experiments_created;
    level.pipelines_created = fill->pipelines_created;
    level.versions_created = fill->versions_created;
    level.fill_failures = fill->failures;
    level.fill_seconds = fill->seconds;
    if (fill->stopped) {
      return stopped(fmt::format("{} during the fill of level {} ({} runs), after creating {} runs",
                                 why_stopped(), i + 1, target, fill->runs_created));
    }
    if (Status s = SettleAndCount(client, g.settle_timeout, deadline, context, level); !s.ok()) {
      return s;
    }
    auto objects = FindFill(client, prefix);
    if (!objects.ok()) return Error{"finding the fill's objects: " + objects.error().message};
    spdlog::info("scenario [{}] growth: {} runs stored ({} created in {:.1f}s), measuring for {}",
                 scenario.index, level.runs_stored, level.runs_created, level.fill_seconds,
                 FormatDuration(g.measure_time));
    MixInputs inputs{
        .fill = std::move(*objects), .prefix = prefix, .level_index = i, .params = scenario.params};
    const WallTime measure_until = WallClock::now() + g.measure_time;
    MeasureLevel(
        client, inputs, g.measure_concurrency, std::min(measure_until, deadline),
        [&] { return context.Interrupted(); }, level);
    curve.levels.push_back(std::move(level));
    context.Record([&](Findings& f) { SetGrowthCurve(f.growth, curve); });
  }
  return Ok();
}

namespace {

using nlohmann::json;

// Far above what any KFP deployment stores; keeps every count in range.
constexpr int64_t kMaxGrowthLevel = 100'000'000;

// growth.levels: increasing run counts, each from 1 to kMaxGrowthLevel.
void ReadGrowthLevels(JsonReader& r, std::vector<int64_t>& levels) {
  r.Custom("levels", [&](const json& value) -> std::string {
    if (!value.is_array() || value.empty()) {
      return "must be a non-empty array of run counts, e.g. [1000, 10000]";
    }
    return {};
  });
  const json* value = r.ok() && r.Has("levels") ? &r.object()["levels"] : nullptr;
  for (size_t i = 0; value != nullptr && i < value->size() && r.ok(); ++i) {
    std::string item = fmt::format("levels[{}]", i);
    const json& level = (*value)[i];
    std::string why;
    if (!level.is_number()) {
      why = fmt::format("must be a number of runs (got {})", level.dump());
    } else if (!level.is_number_integer()) {
      why = fmt::format("must be a whole number of runs (got {})", level.dump());
    } else if (int64_t runs = 0; !checks::WholeNumber{1, kMaxGrowthLevel}(level, runs).empty()) {
      why = fmt::format("must be from 1 to {} runs (got {})", kMaxGrowthLevel, level.dump());
    } else if (!levels.empty() && runs <= levels.back()) {
      why = fmt::format("levels must increase ({} follows {}); each level adds runs to the last",
                        runs, levels.back());
    } else {
      levels.push_back(runs);
    }
    if (!why.empty()) r.Fail(item.c_str(), why);
  }
}

// {"levels": [1000, 10000, 100000], "measureTime": "30s", "fillConcurrency": 8, ...}
void ReadGrowth(JsonReader& entry, double time_scale, Scenario& s) {
  if (s.rate_per_minute) {
    return entry.Fail("rate", "the growth shape fills and measures in closed loop; remove rate");
  }
  if (!entry.Has("growth")) {
    return entry.Fail("growth", "required with \"shape\": \"growth\" (levels, measureTime)");
  }
  GrowthSettings g;
  entry.Message("growth", [&](JsonReader& r) {
    constexpr checks::WholeNumber kWorkers{1, 256};
    constexpr checks::WholeNumber kPerParent{1, kMaxGrowthLevel};
    ReadGrowthLevels(r, g.levels);
    r.Field("measureTime", g.measure_time, ScenarioTime{time_scale});
    r.Field("fillConcurrency", g.fill_concurrency, kWorkers);
    r.Field("measureConcurrency", g.measure_concurrency, kWorkers);
    r.Field("runsPerExperiment", g.runs_per_experiment, kPerParent);
    r.Field("runsPerPipeline", g.runs_per_pipeline, kPerParent);
    r.Field("versionsPerPipeline", g.versions_per_pipeline, checks::WholeNumber{1, 100});
    r.Field("settleTimeout", g.settle_timeout, ScenarioTime{time_scale});
    r.Field("extrapolateTo", g.extrapolate_to, checks::WholeNumber{0, int64_t{1} << 40});
    if (g.levels.empty()) r.Fail("levels", "required, e.g. [1000, 10000, 100000]");
    if (g.measure_time <= Duration::zero()) {
      r.Fail("measureTime", "required, > 0 (how long the mix runs at each level)");
    }
  });
  s.shape_data = std::make_shared<GrowthSettings>(std::move(g));
}

// A growth scenario fills to each level and measures there for measureTime:
// runTime must at least hold every level's measurement (the fills come on
// top, at a rate only the target knows). Says what the last level creates.
void PlanGrowth(const Scenario& s, const std::string& at, Preflight& out) {
  const auto* settings = s.ShapeSettings<GrowthSettings>();
  if (settings == nullptr) return;
  const GrowthSettings& g = *settings;
  const int64_t top = g.levels.back();
  const auto levels = static_cast<int64_t>(g.levels.size());
  const Duration measuring = g.measure_time * levels;
  if (s.run_time < measuring) {
    out.problems.push_back(fmt::format(
        "{}.runTime: {} cannot hold {} level(s) of growth.measureTime {} ({}), let alone the fills",
        at, FormatDuration(s.run_time), levels, FormatDuration(g.measure_time),
        FormatDuration(measuring)));
    return;
  }
  out.notes.push_back(fmt::format(
      "{}.growth: {} level(s) up to {} runs stored ({} experiments, {} pipelines of {} "
      "version(s) at the top), filled {} CreateRun at a time, then {} of the mix at each level "
      "with {} worker(s); runTime {} bounds it all",
      at, levels, top, (top + g.runs_per_experiment - 1) / g.runs_per_experiment,
      (top + g.runs_per_pipeline - 1) / g.runs_per_pipeline, g.versions_per_pipeline,
      g.fill_concurrency, FormatDuration(g.measure_time), g.measure_concurrency,
      FormatDuration(s.run_time)));
}

// Levels count the runs one target stores: N processes filling it would each
// count the others' runs.
Status ShardGrowth(Scenario& s, int /*count*/) {
  return Error{fmt::format(
      "--shard: scenario [{}] has the growth shape, whose levels count the runs one target "
      "stores; run it from one process",
      s.index)};
}

// Filling a real deployment with runs is never a side effect of a file:
// its operator names what may be filled (and is deleted afterwards).
Status CheckGrowthTarget(const Scenario& s, bool embedded_target, const HarnessOptions& options) {
  if (embedded_target || !options.growth_fill.empty()) return Ok();
  return Error{fmt::format(
      "scenario [{}] has the growth shape, which fills the target with runs: on a real "
      "target it runs only with --growth-fill NAME, naming what it may create (experiments "
      "NAME-e0, NAME-e1, ..., pipelines NAME-p0, ...; deleted by experiment afterwards "
      "unless --keep)",
      s.index)};
}

Status DriveGrowth(const Scenario& scenario, Context& context, ShapeLoad* /*load*/) {
  return RunGrowth(scenario, context);
}

}  // namespace

// Fill to each level of runs stored, then measure a mix there.
const ShapeSpec& GrowthShape() {
  static const ShapeSpec shape{.name = "growth",
                               .field = "growth",
                               .read = ReadGrowth,
                               .plan = PlanGrowth,
                               .shard = ShardGrowth,
                               .check_target = CheckGrowthTarget,
                               .drive = DriveGrowth,
                               .own_pipelines = true,
                               .section = "growth"};
  return shape;
}

}  // namespace kfpbench::harness
