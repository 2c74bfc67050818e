#include "report/repetitions.h"

#include <fmt/format.h>

#include "report/merge.h"
#include "util/time.h"

namespace kfpbench::report {
namespace {

std::string Time(WallTime t) {
  return t.time_since_epoch().count() ? FormatRfc3339(t) : std::string();
}

Result<WallTime> ReadTime(const nlohmann::json& j, const char* key, const std::string& path) {
  auto it = j.find(key);
  if (it == j.end() || (it->is_string() && it->get<std::string>().empty())) return WallTime{};
  if (!it->is_string()) return Error{fmt::format("{}.{}: must be an RFC 3339 time", path, key)};
  auto t = ParseRfc3339(it->get<std::string>());
  if (!t.ok()) return Error{fmt::format("{}.{}: {}", path, key, t.error().message)};
  return *t;
}

}  // namespace

harness::RepetitionSummary Summarize(const harness::BenchmarkResults& repetition) {
  harness::RepetitionSummary s;
  s.started = repetition.started;
  s.finished = repetition.finished;
  for (const auto& [name, op] : repetition.operations) s.latency_us[name] = op.latency_us;
  s.run_duration_ms = repetition.RunDurationsMs();
  return s;
}

Result<harness::BenchmarkResults> CombineRepetitions(
    const std::vector<harness::BenchmarkResults>& repetitions) {
  auto combined = MergeResults(repetitions);
  if (!combined.ok()) return combined.error();
  combined->repetitions.clear();
  for (const auto& r : repetitions) combined->repetitions.push_back(Summarize(r));
  return combined;
}

std::vector<harness::RepetitionSummary> RepetitionsOf(
    const std::vector<harness::BenchmarkResults>& side) {
  std::vector<harness::RepetitionSummary> out;
  if (side.size() >= 2) {
    for (const auto& r : side) out.push_back(Summarize(r));
  } else if (side.size() == 1 && side.front().repetitions.size() >= 2) {
    out = side.front().repetitions;
  }
  return out;
}

nlohmann::json RepetitionsToJson(const std::vector<harness::RepetitionSummary>& repetitions) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : repetitions) {
    nlohmann::json ops = nlohmann::json::object();
    for (const auto& [name, h] : r.latency_us) ops[name] = h.ToJson();
    out.push_back({{"started_at", Time(r.started)},
                   {"finished_at", Time(r.finished)},
                   {"latency_us", std::move(ops)},
                   {"run_duration_ms", r.run_duration_ms.ToJson()}});
  }
  return out;
}

Result<std::vector<harness::RepetitionSummary>> RepetitionsFromJson(const nlohmann::json& j) {
  if (!j.is_array()) return Error{"repetitions: must be an array"};
  std::vector<harness::RepetitionSummary> out;
  for (size_t i = 0; i < j.size(); ++i) {
    std::string path = fmt::format("repetitions[{}]", i);
    const auto& item = j[i];
    if (!item.is_object()) return Error{path + ": must be an object"};
    harness::RepetitionSummary r;
    auto started = ReadTime(item, "started_at", path);
    if (!started.ok()) return started.error();
    r.started = *started;
    auto finished = ReadTime(item, "finished_at", path);
    if (!finished.ok()) return finished.error();
    r.finished = *finished;
    auto ops = item.find("latency_us");
    if (ops == item.end() || !ops->is_object()) {
      return Error{path + ".latency_us: missing or not an object"};
    }
    for (const auto& [name, h] : ops->items()) {
      auto hist = metrics::Histogram::FromJson(h);
      if (!hist.ok())
        return Error{fmt::format("{}.latency_us.{}: {}", path, name, hist.error().message)};
      r.latency_us[name] = std::move(*hist);
    }
    auto runs = item.find("run_duration_ms");
    if (runs == item.end()) return Error{path + ": missing field 'run_duration_ms'"};
    auto hist = metrics::Histogram::FromJson(*runs);
    if (!hist.ok()) return Error{path + ".run_duration_ms: " + hist.error().message};
    r.run_duration_ms = std::move(*hist);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace kfpbench::report
