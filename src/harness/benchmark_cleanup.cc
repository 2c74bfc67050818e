#include "harness/benchmark_cleanup.h"

#include <regex>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace kfpbench::harness {
namespace {

// KFP's filter narrows the listing on the server (a production KFP may hold
// millions of runs); the prefix is checked again here, as IS_SUBSTRING also
// matches in the middle of a name.
std::string SubstringFilter(const char* key, const std::string& text) {
  nlohmann::json filter = {
      {"predicates", nlohmann::json::array(
                         {{{"key", key}, {"operation", "IS_SUBSTRING"}, {"string_value", text}}})}};
  return filter.dump();
}

// Every page of `list` (one call per page), the ids of the items `ours`
// takes; what was listed so far once `stop()` says so (a Ctrl-C or SIGTERM
// while a target keeps handing out pages). A token the target gave before
// would list forever: an error.
template <typename T, typename List, typename Ours, typename Id>
Result<std::vector<std::string>> ListOurs(const char* key, const std::string& prefix, List list,
                                          Ours ours, Id id, CallBudget& budget,
                                          const std::function<bool()>& stop) {
  std::vector<std::string> ids;
  std::set<std::string> tokens;
  kfp::ListOptions options;
  options.page_size = 100;
  options.filter = SubstringFilter(key, prefix);
  for (;;) {
    if (!budget.Acquire(WallTime::max(), stop)) return ids;
    Result<kfp::Page<T>> page = list(options);
    if (!page.ok()) return page.error();
    for (const T& item : page->items) {
      if (ours(item)) ids.push_back(item.*id);
    }
    if (page->next_page_token.empty()) return ids;
    if (!tokens.insert(page->next_page_token).second) {
      return Error{"the target gave the same next_page_token twice; listing again would never end"};
    }
    options.page_token = page->next_page_token;
  }
}

}  // namespace

Status CheckBenchmarkId(const std::string& benchmark_id) {
  static const std::regex kId("kfpbench-[0-9a-f]{8}");
  if (std::regex_match(benchmark_id, kId)) return Ok();
  return Error{fmt::format(
      "--benchmark-id: '{}' is not a benchmark id (kfpbench-<8 hex digits>, as results.json's "
      "benchmark_id and the console say): a shorter prefix would delete what others made",
      benchmark_id)};
}

BenchmarkCleanUp CleanUpBenchmark(kfp::Client& client, const std::string& benchmark_id,
                                  CallBudget& budget, const std::function<bool()>& stop) {
  BenchmarkCleanUp out;
  const std::string prefix = benchmark_id + "-";
  auto starts = [&](const std::string& name) { return name.rfind(prefix, 0) == 0; };
  // Deletes each id; already gone is as good as deleted.
  auto remove = [&](const char* kind, const Result<std::vector<std::string>>& ids,
                    const std::function<Status(const std::string&)>& del, int64_t& count) {
    if (stop()) {
      out.stopped = true;
      return;
    }
    if (!ids.ok()) {
      out.failures.push_back(fmt::format("listing {}s: {}", kind, ids.error().message));
      return;
    }
    for (const auto& id : *ids) {
      if (!budget.Acquire(WallTime::max(), stop)) {
        out.stopped = true;
        return;
      }
      Status s = del(id);
      if (s.ok() || s.error().NotFound()) {
        ++count;
      } else {
        out.failures.push_back(fmt::format("{} {}: {}", kind, id, s.error().message));
      }
    }
  };
  if (client.api() == kfp::ApiVersion::kV2beta1) {
    remove(
        "recurring run",
        ListOurs<kfp::RecurringRun>(
            "display_name", prefix,
            [&](const kfp::ListOptions& o) { return client.ListRecurringRuns(o); },
            [&](const kfp::RecurringRun& r) { return starts(r.display_name); },
            &kfp::RecurringRun::recurring_run_id, budget, stop),
        [&](const std::string& id) { return client.DeleteRecurringRun(id); },
        out.deleted.recurring_runs);
  }
  if (out.stopped) return out;
  remove(
      "run",
      ListOurs<kfp::Run>(
          "display_name", prefix, [&](const kfp::ListOptions& o) { return client.ListRuns(o); },
          [&](const kfp::Run& r) { return starts(r.display_name); }, &kfp::Run::run_id, budget,
          stop),
      [&](const std::string& id) { return client.DeleteRun(id); }, out.deleted.runs);
  if (out.stopped) return out;
  remove(
      "experiment",
      ListOurs<kfp::Experiment>(
          "display_name", prefix,
          [&](const kfp::ListOptions& o) { return client.ListExperiments(o); },
          [&](const kfp::Experiment& e) { return starts(e.display_name); },
          &kfp::Experiment::experiment_id, budget, stop),
      [&](const std::string& id) { return client.DeleteExperiment(id); }, out.deleted.experiments);
  if (out.stopped) return out;
  remove(
      "pipeline",
      ListOurs<kfp::Pipeline>(
          "name", prefix, [&](const kfp::ListOptions& o) { return client.ListPipelines(o); },
          // By its name, which the benchmark gave; a display name is anyone's
          // to choose. Servers that send no name (KFP before 2.2) have only
          // the display name to go by.
          [&](const kfp::Pipeline& p) { return starts(p.name.empty() ? p.display_name : p.name); },
          &kfp::Pipeline::pipeline_id, budget, stop),
      [&](const std::string& id) { return client.DeletePipeline(id, /*cascade=*/true); },
      out.deleted.pipelines);
  return out;
}

}  // namespace kfpbench::harness
