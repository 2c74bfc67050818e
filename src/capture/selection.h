// What a capture reads beyond its window: experiments and pipelines, named on
// the command line by name or id and resolved once, at the first start.
// Experiments go to KFP as an `experiment_id IN (...)` predicate beside the
// created_at window (a filter key KFP's run table has); KFP's run filter has
// no pipeline key, so pipelines are matched on each listed run's pipeline
// reference, and a run of another pipeline costs its share of a ListRuns page
// but no GetRun. --namespace is the session's, sent with every call.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kfp/client.h"
#include "util/result.h"
#include "util/time.h"

namespace kfpbench::capture {

struct Selection {
  std::vector<std::string> experiment_ids;  // empty: every experiment
  std::set<std::string> pipeline_ids;       // empty: every pipeline
  // As the command line named them, for the manifest.
  std::vector<std::string> experiments_named;
  std::vector<std::string> pipelines_named;

  bool Selects(const kfp::Run& listed) const {
    return pipeline_ids.empty() || pipeline_ids.contains(listed.pipeline_id);
  }
  nlohmann::json ToJson() const;
  static Result<Selection> FromJson(const nlohmann::json& j);
};

// Each name is a display name (every experiment or pipeline of that name the
// token may list) or else an id. `turn` is called before each call (the
// budget) and may stop it. A name that matches nothing is bad input (400).
Result<Selection> ResolveSelection(kfp::Client& client, const std::vector<std::string>& experiments,
                                   const std::vector<std::string>& pipelines,
                                   const std::function<Status()>& turn);

// KFP's filter JSON: since <= created_at < until, and the experiments.
std::string RunsFilter(WallTime since, WallTime until, const Selection& selection);

}  // namespace kfpbench::capture
