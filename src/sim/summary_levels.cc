#include "sim/summary_levels.h"

#include <cmath>

#include <fmt/format.h>

#include "ir/quantity.h"
#include "sim/budget.h"
#include "util/json_reader.h"

namespace kfpbench::sim {
namespace {

// A duration as text ("8m40s") or seconds; positive and within what the
// virtual clock holds.
template <typename Out>
void ReadSeconds(JsonReader& r, const char* name, Out& out, bool zero_ok) {
  r.Custom(name, [&](const nlohmann::json& v) -> std::string {
    double seconds = 0;
    if (v.is_number()) {
      seconds = v.get<double>();
    } else if (v.is_string()) {
      auto d = ParseDuration(v.get<std::string>());
      if (!d.ok()) return d.error().message;
      seconds = ToSeconds(*d);
    } else {
      return "expected a duration such as \"8m40s\" or a number of seconds";
    }
    if (!std::isfinite(seconds) || seconds < 0 || (!zero_ok && seconds == 0)) {
      return zero_ok ? "must not be negative" : "must be positive";
    }
    if (seconds > kMaxArrivalWindowSeconds) return "must be at most ten years";
    out = seconds;
    return "";
  });
}

void ReadDuration(JsonReader& r, const char* name, Duration& out) {
  double seconds = -1;
  ReadSeconds(r, name, seconds, true);
  if (seconds >= 0) out = FromSeconds(seconds);
}

int64_t IntIn(JsonReader& r, const char* name, int64_t lo, int64_t hi, int64_t fallback) {
  int64_t v = fallback;
  r.Number(name, v);
  if (r.Has(name) && (v < lo || v > hi)) {
    r.Fail(name, fmt::format("must be between {} and {}, got {}", lo, hi, v));
  }
  return v;
}

// "node": {"cpu": "16", "memory": "64Gi"} into `pool`.
void ReadNode(JsonReader& r, NodePool& pool) {
  r.Custom("cpu", [&](const nlohmann::json& v) -> std::string {
    auto cpu = ir::ParseQuantityCpu(v.is_string() ? v.get<std::string>() : v.dump());
    if (!cpu.ok()) return cpu.error().message;
    if (!(*cpu > 0)) return "must be positive";
    pool.cpu = *cpu;
    return "";
  });
  r.Custom("memory", [&](const nlohmann::json& v) -> std::string {
    auto bytes = ir::ParseQuantityMemory(v.is_string() ? v.get<std::string>() : v.dump());
    if (!bytes.ok()) return bytes.error().message;
    if (*bytes <= 0) return "must be positive";
    pool.memory = *bytes;
    return "";
  });
}

// "nodes": 20 (fixed) or {"min": 1, "max": 20, "initial": 1} (autoscaled).
void ReadNodes(JsonReader& r, NodePool& pool) {
  if (!r.Has("nodes")) return r.Require("nodes");
  if (r.object().at("nodes").is_number()) {
    const int64_t n = IntIn(r, "nodes", 1, kMaxNodes, 0);
    pool.min = pool.max = pool.initial = static_cast<int>(n);
    return;
  }
  r.Message("nodes", [&](JsonReader& n) {
    n.Require("max");
    pool.max = static_cast<int>(IntIn(n, "max", 1, kMaxNodes, 0));
    pool.min = static_cast<int>(IntIn(n, "min", 0, pool.max, 0));
    pool.initial = static_cast<int>(IntIn(n, "initial", pool.min, pool.max, pool.min));
  });
}

void ReadArrivals(JsonReader& r, SummaryLevel& level) {
  r.Message("arrivals", [&](JsonReader& a) {
    std::string kind = "all-at-once";
    a.String("kind", kind);
    if (kind == "all-at-once") {
      level.arrival_kind = WorkloadSpec::ArrivalKind::kAllAtOnce;
    } else if (kind == "rate") {
      level.arrival_kind = WorkloadSpec::ArrivalKind::kRate;
      a.Require("rate_per_second");
      a.Number("rate_per_second", level.rate_per_second);
      if (a.ok() && !(level.rate_per_second >= kMinRatePerSecond &&
                      level.rate_per_second <= kMaxRatePerSecond)) {
        a.Fail("rate_per_second", fmt::format("must be between {:g} and {:g} runs a second",
                                              kMinRatePerSecond, kMaxRatePerSecond));
      }
    } else if (kind == "closed") {
      level.arrival_kind = WorkloadSpec::ArrivalKind::kClosed;
      a.Require("concurrency");
      level.concurrency = IntIn(a, "concurrency", 1, kMaxRuns, 0);
    } else {
      a.Fail("kind", "expected all-at-once, rate or closed, got \"" + kind + "\"");
    }
  });
}

void ReadLevel(JsonReader& r, SummaryLevel& level, const NodePool& node) {
  r.String("name", level.name);
  r.Require("runs");
  level.runs = IntIn(r, "runs", 1, kMaxRuns, 0);
  level.pool = node;
  r.Message("node", [&](JsonReader& n) { ReadNode(n, level.pool); });
  ReadNodes(r, level.pool);
  ReadArrivals(r, level);
  for (auto [name, out] :
       {std::pair{"makespan", &level.makespan}, {"p50", &level.p50}, {"p95", &level.p95}}) {
    ReadSeconds(r, name, *out, false);
  }
  if (r.Has("peak_nodes"))
    level.peak_nodes = static_cast<int>(IntIn(r, "peak_nodes", 1, kMaxNodes, 1));
  r.Bool("held_out", level.held_out);
  if (!r.ok()) return;
  if (level.pool.cpu <= 0 || level.pool.memory <= 0) {
    r.Refuse("the node's cpu and memory are needed: give \"node\" here or at the top");
  } else if (level.held_out && !level.measured()) {
    r.Fail("held_out", "a level without a makespan is a question, not a measurement held out");
  } else if (level.peak_nodes && *level.peak_nodes > level.pool.max) {
    r.Fail("peak_nodes", fmt::format("{} is more than the level's {} nodes at most",
                                     *level.peak_nodes, level.pool.max));
  }
}

void ReadTop(JsonReader& r, SummaryLevels& out) {
  NodePool node;
  node.name = "summary";
  r.Message("node", [&](JsonReader& n) { ReadNode(n, node); });
  r.Number("tolerance", out.tolerance);
  if (r.ok() && !(out.tolerance > 0 && out.tolerance < 1)) {
    r.Fail("tolerance", "must be between 0 and 1 (0.03 is 3%)");
  }
  r.Message("autoscaler", [&](JsonReader& a) {
    ReadDuration(a, "scan_interval", out.autoscaler.scan_interval);
    if (a.ok() && out.autoscaler.scan_interval < std::chrono::seconds(1)) {
      a.Fail("scan_interval", "must be at least 1s");
    }
    out.delay_given = a.Has("provisioning_delay");
    ReadDuration(a, "provisioning_delay", out.autoscaler.provisioning_delay);
    ReadDuration(a, "scale_down_idle", out.autoscaler.scale_down_idle);
  });
  if (r.Has("overhead")) {
    Duration overhead{0};
    ReadDuration(r, "overhead", overhead);
    out.overhead = overhead;
  }
  r.Require("summary_levels");
  r.Array("summary_levels", [&](JsonReader& l) {
    SummaryLevel level;
    ReadLevel(l, level, node);
    if (level.name.empty()) level.name = fmt::format("level {}", out.levels.size() + 1);
    out.levels.push_back(std::move(level));
  });
  if (r.ok() && out.levels.empty()) r.Fail("summary_levels", "no level");
  nlohmann::json note;
  r.Any("note", note);  // free text for people
}

}  // namespace

bool IsSummaryLevels(const nlohmann::json& file) {
  return file.is_object() && (file.contains("summary_levels") || file.contains("summaryLevels"));
}

Result<SummaryLevels> ParseSummaryLevels(std::string_view text) {
  auto json = ParseJson(text);
  if (json.is_discarded()) return Error{"summary levels: not valid JSON"};
  if (!json.is_object()) return Error{"summary levels: expected a JSON object"};
  SummaryLevels out;
  JsonReader r(json, "", /*strict=*/true);
  ReadTop(r, out);
  if (auto st = r.Finish(); !st.ok()) return Error{"summary levels: " + st.error().message};
  for (auto& level : out.levels) {
    level.pool.initial = std::max(level.pool.initial, level.pool.min);
  }
  return out;
}

}  // namespace kfpbench::sim
