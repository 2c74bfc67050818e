#include "plan/calibration.h"

#include <memory>

#include <fmt/format.h>

#include "ir/pipeline_spec.h"
#include "ir/quantity.h"
#include "plan/command_errors.h"
#include "results/results_json.h"
#include "sim/config.h"
#include "util/files.h"
#include "util/human.h"
#include "util/time.h"

namespace kfpbench::plan {
namespace {

// "| level | runs | in flight | makespan measured -> predicted | p95 ... |" rows.
std::string LevelTable(const std::vector<sim::LevelFit>& fits) {
  auto cell = [](double measured, double predicted) {
    return fmt::format("{} -> {} ({:+.1f}%)", FormatDuration(FromSeconds(measured)),
                       FormatDuration(FromSeconds(predicted)),
                       measured > 0 ? (predicted - measured) / measured * 100 : 0.0);
  };
  std::string s = fmt::format("  {:<28} {:>5} {:>9}  {:<30} {}\n", "level", "runs", "in flight",
                              "makespan measured -> predicted", "p95 run measured -> predicted");
  for (const auto& f : fits) {
    s += fmt::format("  {:<28} {:>5} {:>9.2f}  {:<30} {}\n", f.source, f.runs, f.runs_in_flight,
                     cell(f.measured_makespan, f.predicted_makespan),
                     cell(f.measured_p95, f.predicted_p95));
  }
  return s;
}

Result<sim::MeasuredLevel> LoadLevel(const std::filesystem::path& path) {
  sim::MeasuredLevel level{path.string(), {}, {}};
  if (auto full = results::LoadResults(path); full.ok()) {
    level.runs = std::move(full->runs);
    if (auto op = full->operations.find("CreateRun"); op != full->operations.end()) {
      level.create_run_us = op->second.latency_us;
    }
    return level;
  }
  auto runs = results::LoadRunRecords(path);
  if (!runs.ok()) return runs.error();
  level.runs = std::move(*runs);
  return level;
}

}  // namespace

Result<sim::Calibration> CalibrateFromFiles(const CalibrationRequest& r) {
  std::shared_ptr<const ir::PipelineSpec> spec;
  if (!r.pipeline.empty()) {
    auto parsed = ir::LoadPipelineSpec(r.pipeline);
    if (!parsed.ok()) return BadInput(parsed.error().message);
    spec = std::make_shared<const ir::PipelineSpec>(std::move(*parsed));
  }
  sim::SharedServiceInputs inputs;
  inputs.fifo = r.fifo;
  inputs.artifact_bytes = r.artifact_bytes;
  if (!r.cluster.empty()) {
    auto cluster = sim::LoadCluster(r.cluster);
    if (!cluster.ok()) return BadInput(cluster.error().message);
    inputs.cluster = std::move(*cluster);
  }
  std::vector<sim::MeasuredLevel> levels;
  for (const auto& path : r.results) {
    auto level = LoadLevel(path);
    if (!level.ok()) return BadInput(level.error().message);
    levels.push_back(std::move(*level));
  }
  auto c = sim::CalibrateLevels(levels, spec, inputs);
  if (!c.ok()) return BadInput(c.error().message);
  if (auto st = WriteFileAtomically(r.out, sim::ToJson(*c).dump(2) + "\n"); !st.ok()) {
    return Error{st.error().message};
  }
  return c;
}

std::string Describe(const sim::Calibration& c, const CalibrationRequest& r) {
  std::string s = fmt::format("calibrated from {} runs; overhead {} per task\n", c.runs,
                              FormatDuration(c.overhead_p50));
  s += fmt::format("  {:<24} {}\n", "default", c.models.fallback.duration.ToString());
  for (const auto& [label, m] : c.models.by_label) {
    s += fmt::format("  {:<24} {}{}\n", label, m.duration.ToString(),
                     m.artifact_bytes > 0
                         ? " + uploads " + FormatBytes(static_cast<double>(m.artifact_bytes))
                         : "");
  }
  if (c.shared.fitted) {
    s += fmt::format(
        "artifact store {}/s, {} sharing: fitted so the simulator reproduces every level\n",
        FormatBytes(c.shared.artifact_store.bandwidth),
        c.shared.artifact_store.fifo ? "fifo" : "fair");
    s += LevelTable(c.shared.levels);
    s += "without a shared service (steps fitted at the lightest level alone):\n" +
         LevelTable(c.shared.without);
  } else if (!c.shared.why_not.empty() && (r.results.size() > 1 || !r.artifact_bytes.empty())) {
    s += "artifact store not fitted: " + c.shared.why_not + "\n";
  }
  if (c.shared.api_fitted) {
    s += fmt::format(
        "api         CreateRun {} each over {} worker{}: fitted to every level's mean latency\n",
        FormatDuration(c.shared.api.run_create), c.shared.api.workers,
        c.shared.api.workers == 1 ? "" : "s");
    for (const auto& l : c.shared.api_levels) {
      s += fmt::format("  {:<28} {:>5} calls  mean {:.1f}ms -> {:.1f}ms ({:+.1f}%)\n", l.source,
                       l.calls, l.measured_mean * 1e3, l.predicted_mean * 1e3,
                       (l.predicted_mean - l.measured_mean) / l.measured_mean * 100);
    }
  } else if (r.results.size() > 1) {
    s += "api not fitted: " + c.shared.api_why_not + "\n";
  }
  return s;
}

}  // namespace kfpbench::plan
