#include "capture/selection.h"

#include <fmt/format.h>

#include "capture/window.h"
#include "util/json_reader.h"

namespace kfpbench::capture {
namespace {

using nlohmann::json;

std::string Equals(const std::string& key, const std::string& value) {
  json filter = {{"predicates",
                  json::array({{{"key", key}, {"operation", "EQUALS"}, {"string_value", value}}})}};
  return filter.dump();
}

// Every id of what `list` finds by display name, else by id.
template <typename List, typename IdOf>
Result<std::vector<std::string>> IdsNamed(const std::string& name, const char* id_key, List list,
                                          IdOf id_of, const std::function<Status()>& turn) {
  for (const std::string& key : {std::string("display_name"), std::string(id_key)}) {
    kfp::ListOptions options;
    options.filter = Equals(key, name);
    options.page_size = 100;
    if (Status s = turn(); !s.ok()) return s.error();
    auto page = list(options);
    if (!page.ok()) {
      // KFP refuses a filter on an id that is not a UUID: nothing found.
      if (key == id_key && page.error().code == kHttpBadRequest) break;
      return page.error();
    }
    if (page->items.empty()) continue;
    std::vector<std::string> ids;
    for (const auto& item : page->items) ids.push_back(id_of(item));
    return ids;
  }
  return Error{
      fmt::format("no {} named '{}' (nor with that id) on the target",
                  std::string(id_key) == "experiment_id" ? "experiment" : "pipeline", name),
      kHttpBadRequest};
}

}  // namespace

json Selection::ToJson() const {
  return {{"experiments", experiments_named},
          {"experiment_ids", experiment_ids},
          {"pipelines", pipelines_named},
          {"pipeline_ids", pipeline_ids}};
}

Result<Selection> Selection::FromJson(const json& j) {
  try {
    Selection s;
    s.experiments_named = j.at("experiments").get<std::vector<std::string>>();
    s.experiment_ids = j.at("experiment_ids").get<std::vector<std::string>>();
    s.pipelines_named = j.at("pipelines").get<std::vector<std::string>>();
    s.pipeline_ids = j.at("pipeline_ids").get<std::set<std::string>>();
    return s;
  } catch (const json::exception& e) {
    return Error{std::string("its selection does not read: ") + e.what()};
  }
}

Result<Selection> ResolveSelection(kfp::Client& client, const std::vector<std::string>& experiments,
                                   const std::vector<std::string>& pipelines,
                                   const std::function<Status()>& turn) {
  Selection s;
  s.experiments_named = experiments;
  s.pipelines_named = pipelines;
  for (const auto& name : experiments) {
    auto ids = IdsNamed(
        name, "experiment_id", [&](const kfp::ListOptions& o) { return client.ListExperiments(o); },
        [](const kfp::Experiment& e) { return e.experiment_id; }, turn);
    if (!ids.ok()) return Error{"--experiment: " + ids.error().message, ids.error().code};
    s.experiment_ids.insert(s.experiment_ids.end(), ids->begin(), ids->end());
  }
  for (const auto& name : pipelines) {
    auto ids = IdsNamed(
        name, "pipeline_id", [&](const kfp::ListOptions& o) { return client.ListPipelines(o); },
        [](const kfp::Pipeline& p) { return p.pipeline_id; }, turn);
    if (!ids.ok()) return Error{"--pipeline: " + ids.error().message, ids.error().code};
    s.pipeline_ids.insert(ids->begin(), ids->end());
  }
  return s;
}

std::string RunsFilter(WallTime since, WallTime until, const Selection& selection) {
  json filter = ParseJson(CreatedAtFilter(since, until));
  if (!selection.experiment_ids.empty()) {
    filter["predicates"].push_back({{"key", "experiment_id"},
                                    {"operation", "IN"},
                                    {"string_values", {{"values", selection.experiment_ids}}}});
  }
  return filter.dump();
}

}  // namespace kfpbench::capture
