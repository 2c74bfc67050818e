#include "engine/task_record_json.h"

#include <chrono>

#include <fmt/format.h>

namespace kfpbench::engine {

using nlohmann::json;

namespace {

int64_t Ns(WallTime t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}
WallTime FromNs(int64_t ns) {
  return WallTime(std::chrono::duration_cast<WallClock::duration>(std::chrono::nanoseconds(ns)));
}

}  // namespace

json TaskRecordToJson(const TaskRecord& r) {
  json history = json::array();
  for (const auto& c : r.history) {
    history.push_back(
        {{"time_ns", Ns(c.time)}, {"state", RuntimeStateName(c.state)}, {"error", c.error}});
  }
  return {{"task_id", r.task_id},
          {"key", r.key},
          {"name", r.name},
          {"display_name", r.display_name},
          {"pod_name", r.pod_name},
          {"executor_label", r.executor_label},
          {"state", RuntimeStateName(r.state)},
          {"create_time_ns", Ns(r.create_time)},
          {"start_time_ns", Ns(r.start_time)},
          {"end_time_ns", Ns(r.end_time)},
          {"history", std::move(history)},
          {"inputs", r.inputs},
          {"outputs", r.outputs},
          {"error", r.error},
          {"node", r.node},
          {"scheduling_delay_ns", r.scheduling_delay.count()},
          {"cpu_seconds", r.cpu_seconds},
          {"peak_rss_bytes", r.peak_rss_bytes},
          {"log_path", r.log_path},
          {"cache_fingerprint", r.cache_fingerprint}};
}

Result<TaskRecord> TaskRecordFromJson(const json& j) {
  if (!j.is_object()) return Error{"task record: not an object"};
  TaskRecord r;
  try {
    auto state = [](const json& v, const char* where) -> Result<RuntimeState> {
      auto s = ParseRuntimeState(v.get<std::string>());
      if (!s)
        return Error{
            fmt::format("task record: {}: unknown state '{}'", where, v.get<std::string>())};
      return *s;
    };
    r.task_id = j.at("task_id").get<std::string>();
    r.key = j.at("key").get<std::string>();
    r.name = j.at("name").get<std::string>();
    r.display_name = j.at("display_name").get<std::string>();
    r.pod_name = j.at("pod_name").get<std::string>();
    r.executor_label = j.at("executor_label").get<std::string>();
    auto s = state(j.at("state"), "state");
    if (!s.ok()) return s.error();
    r.state = *s;
    r.create_time = FromNs(j.at("create_time_ns").get<int64_t>());
    r.start_time = FromNs(j.at("start_time_ns").get<int64_t>());
    r.end_time = FromNs(j.at("end_time_ns").get<int64_t>());
    for (const auto& c : j.at("history")) {
      auto hs = state(c.at("state"), "history");
      if (!hs.ok()) return hs.error();
      r.history.push_back(
          {FromNs(c.at("time_ns").get<int64_t>()), *hs, c.at("error").get<std::string>()});
    }
    r.inputs = j.at("inputs");
    r.outputs = j.at("outputs");
    r.error = j.at("error").get<std::string>();
    r.node = j.at("node").get<std::string>();
    r.scheduling_delay = Duration(j.at("scheduling_delay_ns").get<int64_t>());
    r.cpu_seconds = j.at("cpu_seconds").get<double>();
    r.peak_rss_bytes = j.at("peak_rss_bytes").get<int64_t>();
    r.log_path = j.at("log_path").get<std::string>();
    r.cache_fingerprint = j.at("cache_fingerprint").get<std::string>();
  } catch (const json::exception& e) {
    // A configuration boundary (stored text), so the library's exception is
    // caught here and turned into an error.
    return Error{fmt::format("task record: {}", e.what())};
  }
  return r;
}

}  // namespace kfpbench::engine
