#include "harness/growth_fill.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

namespace kfpbench::harness {
namespace {

constexpr int kListPage = 200;  // experiments and pipelines listed per call when finding ours

// n of "<head><n>" (head is "<prefix>-e" or "<prefix>-p"); nullopt for any other name.
std::optional<int64_t> IndexIn(std::string_view name, std::string_view head) {
  if (!name.starts_with(head) || name.size() == head.size()) return std::nullopt;
  int64_t n = 0;
  auto digits = name.substr(head.size());
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc() || end != digits.data() + digits.size() || n < 0) return std::nullopt;
  return n;
}

std::string ExperimentName(const std::string& prefix, int64_t n) {
  return fmt::format("{}-e{}", prefix, n);
}
std::string PipelineName(const std::string& prefix, int64_t n) {
  return fmt::format("{}-p{}", prefix, n);
}

// Every object of the fill that `list` pages through and whose display
// name is "<head><index>", its id by its index.
template <typename T, typename ListFn>
Result<std::map<int64_t, std::string>> FindIndexed(ListFn list, const std::string& head,
                                                   std::string T::*id) {
  std::map<int64_t, std::string> out;
  kfp::ListOptions options;
  options.page_size = kListPage;
  do {
    auto page = list(options);
    if (!page.ok()) return page.error();
    for (const T& item : page->items) {
      if (auto n = IndexIn(item.display_name, head)) out[*n] = item.*id;
    }
    options.page_token = page->next_page_token;
  } while (!options.page_token.empty());
  return out;
}

Result<std::map<int64_t, std::string>> FindExperiments(kfp::Client& client,
                                                       const std::string& prefix) {
  return FindIndexed<kfp::Experiment>(
      [&](const kfp::ListOptions& o) { return client.ListExperiments(o); }, prefix + "-e",
      &kfp::Experiment::experiment_id);
}

Result<std::map<int64_t, std::string>> FindPipelines(kfp::Client& client,
                                                     const std::string& prefix) {
  return FindIndexed<kfp::Pipeline>(
      [&](const kfp::ListOptions& o) { return client.ListPipelines(o); }, prefix + "-p",
      &kfp::Pipeline::pipeline_id);
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Runs `work(i)` for i in [0, n) on `threads` threads; work returns false to stop them all.
void ParallelFor(int threads, int64_t n, const std::function<bool(int64_t)>& work) {
  std::atomic<int64_t> next{0};
  std::atomic<bool> halt{false};
  std::vector<std::thread> pool;
  int count = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(threads, n)));
  for (int t = 0; t < count; ++t) {
    pool.emplace_back([&] {
      while (!halt.load()) {
        int64_t i = next.fetch_add(1);
        if (i >= n) return;
        if (!work(i)) halt.store(true);
      }
    });
  }
  for (auto& t : pool) t.join();
}

std::string StateFilter(std::string_view state) {
  return nlohmann::json{
      {"predicates", {{{"key", "state"}, {"operation", "EQUALS"}, {"string_value", state}}}}}
      .dump();
}

}  // namespace

FillPlan PlanFill(const Scenario& scenario, const std::string& prefix, std::string pipeline_text) {
  const GrowthSettings& g = *scenario.ShapeSettings<GrowthSettings>();
  return FillPlan{.prefix = prefix,
                  .pipeline_text = std::move(pipeline_text),
                  .params = scenario.params,
                  .concurrency = g.fill_concurrency,
                  .runs_per_experiment = g.runs_per_experiment,
                  .runs_per_pipeline = g.runs_per_pipeline,
                  .versions_per_pipeline = g.versions_per_pipeline};
}

Result<StoredCounts> CountStored(kfp::Client& client) {
  kfp::ListOptions one;
  one.page_size = 1;
  StoredCounts out;
  auto runs = client.ListRunIds(one);
  if (!runs.ok()) return runs.error();
  out.runs = runs->total_size;
  auto experiments = client.ListExperimentIds(one);
  if (!experiments.ok()) return experiments.error();
  out.experiments = experiments->total_size;
  auto pipelines = client.ListPipelineIds(one);
  if (!pipelines.ok()) return pipelines.error();
  out.pipelines = pipelines->total_size;
  return out;
}

Result<FillOutcome> FillTo(kfp::Client& client, const FillPlan& plan, int64_t level,
                           const std::function<bool()>& stop) {
  const auto began = std::chrono::steady_clock::now();
  FillOutcome out;
  auto done = [&] {
    out.seconds = ToSeconds(std::chrono::steady_clock::now() - began);
    return out;
  };
  kfp::ListOptions one;
  one.page_size = 1;
  auto stored = client.ListRunIds(one);
  if (!stored.ok()) return Error{"counting the runs stored: " + stored.error().message};
  const int64_t first = stored->total_size;  // the index of the first run this fill adds
  if (first >= level) return done();

  // Experiments first: run k goes into experiment k / runs_per_experiment.
  auto experiments = FindExperiments(client, plan.prefix);
  if (!experiments.ok()) return Error{"listing experiments: " + experiments.error().message};
  const int64_t experiments_needed = CeilDiv(level, plan.runs_per_experiment);
  for (int64_t n = first / plan.runs_per_experiment; n < experiments_needed; ++n) {
    if (experiments->contains(n)) continue;
    if (stop()) {
      out.stopped = true;
      return done();
    }
    auto e = client.CreateExperiment(ExperimentName(plan.prefix, n),
                                     "filled by kfpbench's growth shape; deleted by its clean-up");
    if (!e.ok()) return Error{"creating the fill's experiments: " + e.error().message};
    (*experiments)[n] = e->experiment_id;
    ++out.experiments_created;
  }
  // Pipelines and their versions: run k uses pipeline k / runs_per_pipeline,
  // version k % versions_per_pipeline of it.
  auto pipelines = FindPipelines(client, plan.prefix);
  if (!pipelines.ok()) return Error{"listing pipelines: " + pipelines.error().message};
  std::map<int64_t, std::vector<std::string>> versions;
  for (int64_t n = first / plan.runs_per_pipeline; n < CeilDiv(level, plan.runs_per_pipeline);
       ++n) {
    if (stop()) {
      out.stopped = true;
      return done();
    }
    if (!pipelines->contains(n)) {
      auto p =
          client.UploadPipeline(PipelineName(plan.prefix, n), "growth.yaml", plan.pipeline_text);
      if (!p.ok()) return Error{"uploading the fill's pipelines: " + p.error().message};
      (*pipelines)[n] = p->pipeline_id;
      ++out.pipelines_created;
    }
    kfp::ListOptions all;
    all.page_size = 100;
    auto ids = client.ListPipelineVersionIds((*pipelines)[n], all);
    if (!ids.ok()) return Error{"listing the fill's pipeline versions: " + ids.error().message};
    std::vector<std::string>& mine = versions[n];
    mine = ids->ids;
    while (static_cast<int>(mine.size()) < plan.versions_per_pipeline) {
      auto v = client.UploadPipelineVersion(
          (*pipelines)[n], fmt::format("{}-v{}", PipelineName(plan.prefix, n), mine.size()),
          "growth.yaml", plan.pipeline_text);
      if (!v.ok()) return Error{"uploading the fill's pipeline versions: " + v.error().message};
      mine.push_back(v->pipeline_version_id);
      ++out.versions_created;
    }
    if (mine.empty()) return Error{"pipeline " + PipelineName(plan.prefix, n) + " has no version"};
  }

  std::atomic<int64_t> created{0}, failures{0}, in_a_row{0};
  std::atomic<bool> stopped{false}, refused{false};
  std::mutex mu;
  std::string last_error;
  ParallelFor(plan.concurrency, level - first, [&](int64_t i) {
    if (stop()) {
      stopped.store(true);
      return false;
    }
    const int64_t k = first + i;
    const auto& vs = versions.at(k / plan.runs_per_pipeline);
    kfp::RunCreate create;
    create.display_name = fmt::format("{}-r{}", plan.prefix, k);
    create.experiment_id = experiments->at(k / plan.runs_per_experiment);
    create.pipeline_id = pipelines->at(k / plan.runs_per_pipeline);
    create.pipeline_version_id = vs[static_cast<size_t>(k) % vs.size()];
    create.parameters = plan.params;
    auto run = client.CreateRun(create);
    if (run.ok()) {
      created.fetch_add(1);
      in_a_row.store(0);
      return true;
    }
    int64_t failed = failures.fetch_add(1) + 1;
    int64_t attempts = failed + created.load();
    {
      std::lock_guard lock(mu);
      last_error = run.error().message;
    }
    if (in_a_row.fetch_add(1) + 1 >= 20 || (attempts >= 100 && failed * 20 > attempts)) {
      refused.store(true);
      return false;
    }
    return true;
  });
  out.runs_created = created.load();
  out.failures = failures.load();
  if (refused.load()) {
    return Error{fmt::format("the target refused {} of {} CreateRun calls while filling; last: {}",
                             out.failures, out.failures + out.runs_created, last_error)};
  }
  out.stopped = stopped.load();
  return done();
}

Result<FillObjects> FindFill(kfp::Client& client, const std::string& prefix) {
  FillObjects out;
  auto experiments = FindExperiments(client, prefix);
  if (!experiments.ok()) return experiments.error();
  for (const auto& [n, id] : *experiments) out.experiment_ids.push_back(id);
  auto pipelines = FindPipelines(client, prefix);
  if (!pipelines.ok()) return pipelines.error();
  for (const auto& [n, id] : *pipelines) {
    kfp::ListOptions first;
    first.page_size = 1;
    auto versions = client.ListPipelineVersionIds(id, first);
    if (!versions.ok()) return versions.error();
    if (!versions->ids.empty()) out.pipeline_versions.emplace_back(id, versions->ids.front());
  }
  return out;
}

Result<int64_t> Settle(kfp::Client& client, WallTime give_up, const std::function<bool()>& stop) {
  for (;;) {
    int64_t active = 0;
    for (std::string_view state : {"PENDING", "RUNNING"}) {
      kfp::ListOptions options;
      options.page_size = 1;
      options.filter = StateFilter(state);
      auto page = client.ListRunIds(options);
      if (!page.ok()) return page.error();
      active += page->total_size;
    }
    if (active == 0 || WallClock::now() >= give_up || stop()) return active;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

CleanUpOutcome CleanUpFill(kfp::Client& client, const std::string& prefix, int concurrency,
                           const std::function<bool()>& stop) {
  CleanUpOutcome out;
  auto note = [&](const std::string& what, const Status& s) {
    // Already gone is as good as deleted.
    if (s.ok() || s.error().NotFound()) return true;
    out.failures.push_back(what + ": " + s.error().message);
    return false;
  };
  auto experiments = FindExperiments(client, prefix);
  if (!experiments.ok()) {
    out.failures.push_back("listing the fill's experiments: " + experiments.error().message);
    return out;
  }
  std::mutex mu;
  for (const auto& [n, experiment_id] : *experiments) {
    // Runs first: KFP keeps an experiment's runs when the experiment goes,
    // so an experiment is deleted only once it is empty.
    bool emptied = false;
    for (;;) {
      if (stop()) {
        out.stopped = true;
        return out;
      }
      kfp::ListOptions options;
      options.page_size = 100;
      options.experiment_id = experiment_id;
      auto page = client.ListRunIds(options);
      if (!page.ok()) {
        note("listing the runs of " + ExperimentName(prefix, n), page.error());
        break;
      }
      if (page->ids.empty()) {
        emptied = true;
        break;
      }
      std::atomic<int64_t> deleted{0};
      ParallelFor(concurrency, static_cast<int64_t>(page->ids.size()), [&](int64_t i) {
        if (stop()) return false;
        const std::string& id = page->ids[static_cast<size_t>(i)];
        Status s = client.DeleteRun(id);
        std::lock_guard lock(mu);
        if (note("run " + id, s)) deleted.fetch_add(1);
        return true;
      });
      out.runs_deleted += deleted.load();
      // A page of which nothing could be deleted would come back forever.
      if (deleted.load() == 0 && !stop()) break;
    }
    if (stop()) {
      out.stopped = true;
      return out;
    }
    if (emptied &&
        note("experiment " + ExperimentName(prefix, n), client.DeleteExperiment(experiment_id))) {
      ++out.experiments_deleted;
    }
  }
  auto pipelines = FindPipelines(client, prefix);
  if (!pipelines.ok()) {
    out.failures.push_back("listing the fill's pipelines: " + pipelines.error().message);
    return out;
  }
  for (const auto& [n, pipeline_id] : *pipelines) {
    if (stop()) {
      out.stopped = true;
      return out;
    }
    if (note("pipeline " + PipelineName(prefix, n),
             client.DeletePipeline(pipeline_id, /*cascade=*/true))) {
      ++out.pipelines_deleted;
    }
  }
  return out;
}

}  // namespace kfpbench::harness
