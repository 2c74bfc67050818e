// RANDOM_GETS: the read path of KFP's UI and SDK, as perf-tests exercise it —
// list pipelines, list a pipeline's versions, list experiments, list runs,
// get a run — repeated by `concurrency` (else `numTimes`) workers as fast as
// the server answers, or started `rate` times a minute (open loop), for
// `runTime`. With a `mix` ({"GetRun": 8, "ListRuns": 1}), each arrival or
// turn is instead one call drawn by weight, on ids read once at the start.
#include "harness/random_gets_runner.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <random>
#include <vector>

#include "harness/load_loops.h"
#include "harness/modes.h"
#include "results/results.h"
#include "util/json_checks.h"

namespace kfpbench::harness {
namespace {

class RandomGetsRunner : public ModeRunner {
 public:
  Status Run(const Scenario& scenario, Context& context) override;
};

}  // namespace

namespace {

// One pass of the chain; false when no call got an answer. Each call reads
// only what the chain needs from its answer (kfp::Client's lean path), so the
// client's CPU goes to sending rather than to parsing answers it drops.
bool ReadChain(kfp::Client& client, std::mt19937& rng) {
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  kfp::ListOptions page;
  page.page_size = 20;
  // Each call is recorded by the client's observer, failures included; a
  // failed step only skips the steps that need its answer.
  bool any_ok = false;
  if (auto pipelines = client.ListPipelineIds(page); pipelines.ok()) {
    any_ok = true;
    if (!pipelines->ids.empty()) {
      (void)client.ListPipelineVersionIds(pipelines->ids[pick(pipelines->ids.size())], page);
    }
  }
  any_ok |= client.ListExperimentIds(page).ok();
  kfp::ListOptions runs_page = page;
  runs_page.sort_by = "created_at desc";
  if (auto runs = client.ListRunIds(runs_page); runs.ok()) {
    any_ok = true;
    if (!runs->ids.empty()) (void)client.GetRunState(runs->ids[pick(runs->ids.size())]);
  }
  return any_ok;
}

// A weighted mix: one call per draw, on ids read once at the start.
class Mix {
 public:
  static Result<Mix> Prepare(const RandomGetsMix& weights, kfp::Client& client) {
    Mix mix;
    double total = 0;
    for (const auto& [name, weight] : weights.weights) {
      mix.operations_.push_back(name);
      mix.cumulative_.push_back(total += weight);
    }
    auto needs = [&](std::string_view op) {
      return std::find(mix.operations_.begin(), mix.operations_.end(), op) != mix.operations_.end();
    };
    kfp::ListOptions page;
    page.page_size = 200;
    if (needs("GetPipeline") || needs("ListPipelineVersions")) {
      auto pipelines = client.ListPipelineIds(page);
      if (!pipelines.ok()) return Error{"listing pipelines: " + pipelines.error().message};
      mix.pipeline_ids_ = std::move(pipelines->ids);
      if (mix.pipeline_ids_.empty()) {
        return Error{"mix: GetPipeline and ListPipelineVersions need a pipeline on the target"};
      }
    }
    if (needs("GetRun")) {
      auto runs = client.ListRunIds(page);
      if (!runs.ok()) return Error{"listing runs: " + runs.error().message};
      mix.run_ids_ = std::move(runs->ids);
      if (mix.run_ids_.empty()) return Error{"mix: GetRun needs a run on the target"};
    }
    return mix;
  }

  // One drawn call; false when it got no answer.
  bool Call(kfp::Client& client, std::mt19937& rng) const {
    auto pick = [&](const std::vector<std::string>& ids) -> const std::string& {
      return ids[std::uniform_int_distribution<size_t>(0, ids.size() - 1)(rng)];
    };
    kfp::ListOptions page;
    page.page_size = 20;
    double u = std::uniform_real_distribution<double>(0, cumulative_.back())(rng);
    size_t drawn =
        std::upper_bound(cumulative_.begin(), cumulative_.end(), u) - cumulative_.begin();
    const std::string& op = operations_[std::min(drawn, operations_.size() - 1)];
    if (op == "ListPipelines") return client.ListPipelineIds(page).ok();
    if (op == "ListPipelineVersions") {
      return client.ListPipelineVersionIds(pick(pipeline_ids_), page).ok();
    }
    if (op == "ListExperiments") return client.ListExperimentIds(page).ok();
    if (op == "GetPipeline") return client.GetPipeline(pick(pipeline_ids_)).ok();
    if (op == "GetRun") return client.GetRunState(pick(run_ids_)).ok();
    page.sort_by = "created_at desc";
    return client.ListRunIds(page).ok();  // the scenario parser admits nothing else
  }

 private:
  std::vector<std::string> operations_;
  std::vector<double> cumulative_;  // running sums of the weights: const, so threads share it
  std::vector<std::string> pipeline_ids_, run_ids_;
};

}  // namespace

Status RandomGetsRunner::Run(const Scenario& scenario, Context& context) {
  std::optional<Mix> mix;
  if (scenario.mode_data) {
    const auto& weights = static_cast<const RandomGetsMix&>(*scenario.mode_data);
    auto prepared = Mix::Prepare(weights, context.client());
    if (!prepared.ok()) return Error{"RANDOM_GETS: " + prepared.error().message};
    mix = std::move(*prepared);
  }
  const WallTime end = WallClock::now() + scenario.run_time;
  // One arrival or loop turn: a drawn call with a mix, else the chain, none
  // of whose calls starts after the end.
  kfp::Client load = context.client().StartingBefore(end);
  auto one = [&](std::mt19937& rng) { return mix ? mix->Call(load, rng) : ReadChain(load, rng); };
  if (scenario.rate_per_minute) {
    // Open loop: each arrival is one pass of the chain, or one drawn call.
    std::mutex mu;
    std::mt19937 rng(static_cast<unsigned>(scenario.seed));
    std::atomic<int64_t> sent{0}, late{0}, dropped{0};
    DriveOpenLoop(context, scenario, 8, end, [&](int n, WallTime intended) {
      const WallTime now = WallClock::now();
      // Arrivals still queued at the end are not sent: a sender that fell
      // behind must not stretch the scenario by its backlog.
      if (now >= end) {
        dropped.fetch_add(1, std::memory_order_relaxed);
        return;
      }
      if (now - intended > results::BenchmarkResults::kLateStart)
        late.fetch_add(1, std::memory_order_relaxed);
      sent.fetch_add(1, std::memory_order_relaxed);
      std::mt19937 local;
      {
        std::lock_guard lock(mu);
        local.seed(rng() + static_cast<unsigned>(n));
      }
      one(local);
    });
    spdlog::info(
        "RANDOM_GETS [{}] open loop: {} {} sent, {} of them started > {} ms late, {} "
        "not sent before the end",
        scenario.index, sent.load(), mix ? "calls" : "chains", late.load(),
        results::BenchmarkResults::kLateStart.count(), dropped.load());
    return Ok();
  }
  std::vector<std::mt19937> rngs;
  for (int w = 0; w < scenario.InFlight(); ++w) rngs.emplace_back(static_cast<unsigned>(w) + 1);
  DriveClosedLoop(context, scenario.InFlight(), end,
                  [&](int worker, int) { return one(rngs[worker]); });
  return Ok();
}

namespace {

void ReadMix(JsonReader& entry, const std::filesystem::path&, Scenario& s) {
  nlohmann::json weights;
  entry.Field("mix", weights,
              checks::JsonObject{"must be an object of operation weights, e.g. {\"GetRun\": 8}",
                                 /*non_empty=*/true});
  if (weights.is_null()) return;
  auto mix = std::make_shared<RandomGetsMix>();
  for (const auto& [name, weight] : weights.items()) {
    std::string field = "mix." + name;
    if (std::find(std::begin(kRandomGetsOperations), std::end(kRandomGetsOperations), name) ==
        std::end(kRandomGetsOperations)) {
      return entry.Fail(field.c_str(), fmt::format("not a read operation (known: {})",
                                                   fmt::join(kRandomGetsOperations, ", ")));
    }
    if (!weight.is_number() || !(weight.get<double>() > 0)) {
      return entry.Fail(field.c_str(), "weight must be a number > 0");
    }
    mix->weights.emplace_back(name, weight.get<double>());
  }
  s.mode_data = std::move(mix);
}

}  // namespace

const ModeSpec& RandomGetsMode() {
  static const ModeSpec mode{
      .name = "RANDOM_GETS",
      .fields = {{"mix", "draws a mix"}},
      .read = ReadMix,
      .make_runner = [] { return std::unique_ptr<ModeRunner>(new RandomGetsRunner()); },
  };
  return mode;
}

}  // namespace kfpbench::harness
