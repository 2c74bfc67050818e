#include "harness/replay_steps.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "exec/duration_dist.h"
#include "exec/stub_executor.h"
#include "util/json_checks.h"
#include "util/time.h"

namespace kfpbench::harness {
namespace {

using nlohmann::json;

std::string Micros(Duration d, double scale) {
  return fmt::format("{}us", std::llround(static_cast<double>(d.count()) * scale / 1e3));
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

void ReadReplaySteps(JsonReader& replay, double time_scale, ScenarioFile& file) {
  double peak = 0;
  replay.Field("peakRunsPerSecond", peak,
               checks::Number{0, std::numeric_limits<double>::infinity(),
                              "must be a number, 0 or more", /*low_open=*/false});
  // Offsets shrink with --time-scale, so arrivals come faster.
  file.replay_runs_per_second = peak / time_scale;
  std::vector<std::string> durations;
  replay.StringList("stubDurations", durations);
  replay.StringList("stubFailures", file.stub_failures);
  for (size_t i = 0; i < durations.size() && replay.ok(); ++i) {
    auto scaled = ScaleStubDuration(durations[i], time_scale);
    if (!scaled.ok()) {
      replay.Fail(fmt::format("stubDurations[{}]", i).c_str(), scaled.error().message);
    } else {
      file.stub_durations.push_back(std::move(*scaled));
    }
  }
  exec::StubExecutorOptions check;
  if (Status s = exec::AddStubFailures(file.stub_failures, check); replay.ok() && !s.ok()) {
    replay.Fail("stubFailures", s.error().message);
  }
}

Status ReadReplaySteps(const json& replay, double time_scale, ScenarioFile& file) {
  JsonReader reader = JsonReader::Config(replay, "replay");
  ReadReplaySteps(reader, time_scale, file);
  return reader.Finish();
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
