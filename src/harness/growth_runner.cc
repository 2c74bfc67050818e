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

Status RunGrowth(const Scenario& scenario, Context& context) {
  const Scenario::Growth& g = *scenario.growth;
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
  context.Record([&](Findings& f) { f.SetGrowthCurve(curve); });
  const WallTime deadline = WallClock::now() + scenario.run_time;
  auto out_of_time = [&] { return context.Interrupted() || WallClock::now() >= deadline; };
  auto why_stopped = [&] { return context.Interrupted() ? "interrupted" : "runTime ended"; };
  auto stopped = [&](std::string why) {
    spdlog::warn("scenario [{}] growth: {}", scenario.index, why);
    curve.stopped_because = std::move(why);
    context.Record([&](Findings& f) { f.SetGrowthCurve(curve); });
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
      context.Record([&](Findings& f) { f.SetGrowthCurve(curve); });
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
    context.Record([&](Findings& f) { f.SetGrowthCurve(curve); });
  }
  return Ok();
}

}  // namespace kfpbench::harness
