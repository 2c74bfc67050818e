#include "harness/stress_runner.h"

#include <cstdlib>
#include <limits>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/preflight.h"
#include "harness/runner.h"
#include "harness/shapes.h"
#include "util/json_checks.h"

namespace kfpbench::harness {
namespace {

using nlohmann::json;

// An error rate: a fraction (0.02) or a percentage ("2%").
std::string ReadErrorRate(const json& x, double& out) {
  std::string text = x.is_string() ? x.get<std::string>() : x.dump();
  bool percent = !text.empty() && text.back() == '%';
  if (percent) text.pop_back();
  char* end = nullptr;
  double rate = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || rate < 0) {
    return "must be a rate like \"1%\"";
  }
  out = percent ? rate / 100 : rate;
  return {};
}

// A latency bound: a duration string ("30s").
std::string ReadLatency(const json& x, Duration& out) {
  if (!x.is_string()) return "must be a duration string";
  auto t = ParseDuration(x.get<std::string>());
  if (!t.ok()) return t.error().message;
  out = *t;
  return {};
}

// {"stepTime": "1m", "rateFactor": 2, "maxRate": 600,
//  "slo": {"p95": "30s", "errorRate": "1%"}}
void ReadStress(JsonReader& entry, double time_scale, Scenario& s) {
  if (!s.rate_per_minute) return entry.Fail("rate", "the stress shape starts from a rate");
  if (!entry.Has("stress")) {
    return entry.Fail("stress", "required with \"shape\": \"stress\" (stepTime, slo)");
  }
  StressSettings st;
  entry.Message("stress", [&](JsonReader& r) {
    constexpr double kNoLimit = std::numeric_limits<double>::max();
    r.Field("stepTime", st.step_time, ScenarioTime{time_scale});
    r.Field("rateFactor", st.rate_factor,
            checks::Number{1, kNoLimit, "must be a number greater than 1"});
    r.Field("maxRate", st.max_rate, checks::Number{0, kNoLimit, "must be > 0"});
    r.Message("slo", [&](JsonReader& slo) {
      slo.Field("p95", st.slo_p95, ReadLatency);
      slo.Field("errorRate", st.slo_error_rate, ReadErrorRate);
    });
    if (st.step_time <= Duration::zero()) r.Fail("stepTime", "required, > 0");
    if (st.slo_p95 <= Duration::zero()) r.Fail("slo.p95", "required");
  });
  s.shape_data = std::make_shared<StressSettings>(st);
}

// A stress search runs one step of stepTime per rate, multiplying the rate
// by rateFactor, until the SLO breaks, maxRate is passed or runTime ends.
// Says which rates runTime holds; a runTime that holds no step is a problem,
// one that ends before maxRate a note (the search may end without breaking).
void PlanStress(const Scenario& s, const std::string& at, Preflight& out) {
  const auto* settings = s.ShapeSettings<StressSettings>();
  if (settings == nullptr || !s.rate_per_minute || *s.rate_per_minute <= 0) return;
  const StressSettings& st = *settings;
  if (st.step_time <= Duration::zero() || st.rate_factor <= 1) return;
  const auto fits = static_cast<int>(s.run_time / st.step_time);
  if (fits == 0) {
    out.problems.push_back(fmt::format("{}.runTime: {} is shorter than one stress step ({})", at,
                                       FormatDuration(s.run_time), FormatDuration(st.step_time)));
    return;
  }
  std::vector<std::string> rates;
  double rate = *s.rate_per_minute;
  int steps = 0;
  for (; steps < fits && (st.max_rate <= 0 || rate <= st.max_rate);
       ++steps, rate *= st.rate_factor) {
    if (rates.size() < 8) rates.push_back(fmt::format("{:g}", rate));
  }
  if (steps > static_cast<int>(rates.size())) rates.push_back("…");
  out.notes.push_back(
      fmt::format("{}.stress: {} step(s) of {} at {} runs/min, until the SLO breaks", at, steps,
                  FormatDuration(st.step_time), fmt::join(rates, ", ")));
  if (st.max_rate > 0 && rate <= st.max_rate) {
    int needed = steps;
    for (double r = rate; r <= st.max_rate; r *= st.rate_factor) ++needed;
    out.notes.push_back(fmt::format(
        "{}.stress: reaching maxRate {:g}/min takes {} steps ({}), but runTime {} holds {}: the "
        "search may end with the SLO still holding",
        at, st.max_rate, needed, FormatDuration(st.step_time * needed), FormatDuration(s.run_time),
        steps));
  }
}

// Each shard's share of the rate search's ceiling, as the rates themselves
// are divided.
Status ShardStress(Scenario& s, int count) {
  auto settings = std::make_shared<StressSettings>(*s.ShapeSettings<StressSettings>());
  settings->max_rate /= count;
  s.shape_data = std::move(settings);
  return Ok();
}

// Open-loop steps of rising rate through the mode's `load`, each judged
// against the SLO, until one breaks it (or maxRate, runTime or Ctrl-C ends
// the search).
Status DriveStress(const Scenario& scenario, Context& context, ShapeLoad* load) {
  const StressSettings& stress = *scenario.ShapeSettings<StressSettings>();
  const WallTime deadline = WallClock::now() + scenario.run_time;
  Scenario step = scenario;
  results::StressStop stop;
  stop.scenario = scenario.index;
  auto stopped = [&](results::StressStopReason reason, std::string detail) {
    stop.reason = reason;
    stop.detail = std::move(detail);
    context.Record([&](Findings& f) { f.stress_stops.push_back(stop); });
    return Ok();
  };
  for (double rate = *scenario.rate_per_minute;; rate *= stress.rate_factor) {
    if (context.Interrupted()) {
      return stopped(results::StressStopReason::kInterrupted,
                     fmt::format("interrupted before the step at {:g}/min", rate));
    }
    if (stress.max_rate > 0 && rate > stress.max_rate) {
      return stopped(
          results::StressStopReason::kMaxRateReached,
          fmt::format("the next step, {:g}/min, is above maxRate {:g}/min", rate, stress.max_rate));
    }
    const WallTime start = WallClock::now();
    if (start + stress.step_time > deadline) {
      return stopped(results::StressStopReason::kRunTimeReached,
                     fmt::format("runTime ended before the step at {:g}/min could run its {}", rate,
                                 FormatDuration(stress.step_time)));
    }
    step.rate_per_minute = rate;
    // Runs of this step are those meant to start within it.
    if (Status s = load->OpenLoop(step, start + stress.step_time); !s.ok()) return s;
    results::StressStep result;
    result.scenario = scenario.index;
    result.rate_per_minute = rate;
    metrics::Histogram latency;
    for (const auto& r : context.runs().Records()) {
      if (r.scenario != scenario.index || r.intended < start ||
          r.intended >= start + stress.step_time) {
        continue;
      }
      ++result.runs;
      if (r.state != RuntimeState::kSucceeded) ++result.failed;
      if (auto l = r.LatencyFromIntended(); l && r.Finished()) {
        latency.Record(std::chrono::duration_cast<std::chrono::milliseconds>(*l).count());
      }
    }
    result.p95_ms = latency.ValueAtPercentile(95);
    result.error_rate = result.runs ? static_cast<double>(result.failed) / result.runs : 0;
    result.held = result.runs > 0 && latency.count() > 0 &&
                  std::chrono::milliseconds(result.p95_ms) <= stress.slo_p95 &&
                  result.error_rate <= stress.slo_error_rate;
    context.Record([&](Findings& f) { f.stress_steps.push_back(result); });
    if (!result.held) {
      std::string why = latency.count() == 0
                            ? fmt::format("no run of the step finished ({} of {} failed)",
                                          result.failed, result.runs)
                            : fmt::format("p95 {} (SLO {}), {:.1f}% of runs failed (SLO {:.1f}%)",
                                          FormatDuration(std::chrono::milliseconds(result.p95_ms)),
                                          FormatDuration(stress.slo_p95), result.error_rate * 100,
                                          stress.slo_error_rate * 100);
      return stopped(results::StressStopReason::kSloBroken,
                     fmt::format("the SLO broke at {:g}/min: {}", rate, why));
    }
  }
}

}  // namespace

const ShapeSpec& StressShape() {
  static const ShapeSpec shape{.name = "stress",
                               .field = "stress",
                               .read = ReadStress,
                               .plan = PlanStress,
                               .shard = ShardStress,
                               .drive = DriveStress,
                               .section = "stress"};
  return shape;
}

}  // namespace kfpbench::harness
