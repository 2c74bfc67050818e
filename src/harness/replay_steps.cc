#include "harness/replay_steps.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "exec/duration_dist.h"
#include "exec/stub_executor.h"
#include "util/time.h"

namespace kfpbench::harness {
namespace {

using nlohmann::json;

std::string Micros(Duration d, double scale) {
  return fmt::format("{}us", std::llround(static_cast<double>(d.count()) * scale / 1e3));
}

Status ReadStrings(const json& replay, const char* key, std::vector<std::string>& out) {
  auto it = replay.find(key);
  if (it == replay.end()) return Ok();
  if (!it->is_array()) return Error{fmt::format("replay.{}: must be an array of strings", key)};
  for (size_t i = 0; i < it->size(); ++i) {
    if (!(*it)[i].is_string()) {
      return Error{fmt::format("replay.{}[{}]: must be a string", key, i)};
    }
    out.push_back((*it)[i].get<std::string>());
  }
  return Ok();
}

}  // namespace

Result<std::string> ScaleStubDuration(const std::string& spec, double scale) {
  auto labeled = exec::ParseLabeledDurationDist(spec);
  if (!labeled.ok()) return labeled.error();
  const auto& [label, d] = *labeled;
  std::string text;
  using Kind = exec::DurationDist::Kind;
  switch (d.kind) {
    case Kind::kConstant:
      text = "constant:" + Micros(d.a, scale);
      break;
    case Kind::kUniform:
      text = fmt::format("uniform:{}:{}", Micros(d.a, scale), Micros(d.b, scale));
      break;
    case Kind::kLognormal:
      text = fmt::format("lognormal:{}:{}", Micros(d.a, scale), d.sigma);
      break;
    case Kind::kExponential:
      text = "exponential:" + Micros(d.a, scale);
      break;
  }
  return label.empty() ? text : label + "=" + text;
}

Status ReadReplaySteps(const json& replay, double time_scale, ScenarioFile& file) {
  if (!replay.is_object()) return Error{"replay: must be an object"};
  for (const auto& [key, value] : replay.items()) {
    if (key != "stubDurations" && key != "stubFailures" && key != "peakRunsPerSecond") {
      return Error{fmt::format(
          "replay.{}: unknown field (known: stubDurations, stubFailures, peakRunsPerSecond)", key)};
    }
  }
  if (auto peak = replay.find("peakRunsPerSecond"); peak != replay.end()) {
    if (!peak->is_number() || !(peak->get<double>() >= 0)) {
      return Error{"replay.peakRunsPerSecond: must be a number, 0 or more"};
    }
    // Offsets shrink with --time-scale, so arrivals come faster.
    file.replay_runs_per_second = peak->get<double>() / time_scale;
  }
  std::vector<std::string> durations;
  if (Status s = ReadStrings(replay, "stubDurations", durations); !s.ok()) return s;
  if (Status s = ReadStrings(replay, "stubFailures", file.stub_failures); !s.ok()) return s;
  for (size_t i = 0; i < durations.size(); ++i) {
    auto scaled = ScaleStubDuration(durations[i], time_scale);
    if (!scaled.ok()) {
      return Error{fmt::format("replay.stubDurations[{}]: {}", i, scaled.error().message)};
    }
    file.stub_durations.push_back(std::move(*scaled));
  }
  exec::StubExecutorOptions check;
  if (Status s = exec::AddStubFailures(file.stub_failures, check); !s.ok()) {
    return Error{"replay.stubFailures: " + s.error().message};
  }
  return Ok();
}

double SizeObserverBudget(const ScenarioFile& file, HarnessOptions& options) {
  if (!(file.replay_runs_per_second > 0) || options.observer_qps <= 0) return 0;
  // Each run that ends costs the follower about one GetRun, and each poll
  // interval one listing per experiment in flight (one per scenario here):
  // twice that leaves room for bursts within the peak minute.
  const double interval = std::max(ToSeconds(options.poll_interval), 0.001);
  const double needed =
      2 * (file.replay_runs_per_second + static_cast<double>(file.scenarios.size()) / interval);
  if (needed <= options.observer_qps) return 0;
  options.observer_qps = std::ceil(needed);
  return options.observer_qps;
}

void ApplyReplaySteps(const ScenarioFile& file, server::BackendOptions& backend) {
  if (backend.stub_durations.empty()) backend.stub_durations = file.stub_durations;
  if (backend.stub_failures.empty()) backend.stub_failures = file.stub_failures;
}

}  // namespace kfpbench::harness
