#include "plan/calibration.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "ir/pipeline_spec.h"
#include "ir/quantity.h"
#include "ir/yaml_json.h"
#include "plan/capacity_page.h"
#include "plan/command_errors.h"
#include "results/results_json.h"
#include "sim/config.h"
#include "sim/step_draw.h"
#include "sim/summary_levels.h"
#include "util/files.h"
#include "util/human.h"
#include "util/json_reader.h"
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

// A summary-levels file (sim/summary_levels.h) rather than a results.json:
// a JSON file whose top level has "summary_levels".
Result<std::optional<sim::SummaryLevels>> ReadSummaryLevels(const std::filesystem::path& path) {
  if (std::filesystem::is_directory(path)) return std::optional<sim::SummaryLevels>{};
  auto text = ReadFile(path);
  if (!text.ok()) return std::optional<sim::SummaryLevels>{};  // LoadLevel says why
  auto json = ParseJson(*text);
  if (!sim::IsSummaryLevels(json)) return std::optional<sim::SummaryLevels>{};
  auto levels = sim::ParseSummaryLevels(*text);
  if (!levels.ok()) return Error{path.string() + ": " + levels.error().message};
  return std::optional<sim::SummaryLevels>{std::move(*levels)};
}

// The measured step models pin what summary levels cannot tell apart: each
// label's share of the step time, and the overhead.
void PinFromMeasured(const sim::Calibration& measured, sim::SummaryLevels& summary) {
  const sim::StepModels expected = sim::ExpectedSteps(measured.models);
  for (const auto& [label, m] : expected.by_label) {
    summary.measured_steps[label] = ToSeconds(m.duration.a);
  }
  if (!summary.overhead) summary.overhead = measured.overhead_p50;
}

Result<sim::Calibration> FitSummary(sim::Calibration c, sim::SummaryLevels summary,
                                    std::shared_ptr<const ir::PipelineSpec> spec,
                                    const sim::SummaryFitOptions& options) {
  if (c.runs > 0) PinFromMeasured(c, summary);
  auto fit = sim::FitSummaryLevels(summary, std::move(spec), options);
  if (!fit.ok()) return BadInput(fit.error().message);
  if (c.runs == 0) c.models = sim::ModelsOf(*fit);
  c.summary = std::move(*fit);
  c.summary_levels = std::move(summary);
  return c;
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
  std::optional<sim::SummaryLevels> summary;
  for (const auto& path : r.results) {
    auto file = ReadSummaryLevels(path);
    if (!file.ok()) return BadInput(file.error().message);
    if (file->has_value() && summary) {
      return BadInput(path.string() + ": give one summary-levels file (it holds every level)");
    }
    if (file->has_value()) {
      summary = std::move(**file);
      continue;
    }
    auto level = LoadLevel(path);
    if (!level.ok()) return BadInput(level.error().message);
    levels.push_back(std::move(*level));
  }
  sim::Calibration c;
  if (!levels.empty()) {
    auto measured = sim::CalibrateLevels(levels, spec, inputs);
    if (!measured.ok()) return BadInput(measured.error().message);
    c = std::move(*measured);
  }
  if (summary) {
    auto fitted = FitSummary(std::move(c), std::move(*summary), spec, r.summary_options);
    if (!fitted.ok()) return fitted.error();
    c = std::move(*fitted);
  }
  if (auto st = WriteFileAtomically(r.out, sim::ToJson(c).dump(2) + "\n"); !st.ok()) {
    return Error{st.error().message};
  }
  if (!r.html.empty() && c.summary) {
    const nlohmann::json fit = sim::ToJson(*c.summary, c.summary_levels);
    CapacityPage page{"kfpbench calibrate", Describe(c, r), nullptr, nullptr, nullptr, &fit};
    if (auto st = WriteCapacityPage(page, r.html); !st.ok()) return Error{st.error().message};
  }
  return c;
}

std::string Describe(const sim::Calibration& c, const CalibrationRequest& r) {
  if (c.summary && c.runs == 0) return sim::Describe(*c.summary, c.summary_levels);
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
  } else if (r.results.size() > 1 && !c.summary) {
    s += "api not fitted: " + c.shared.api_why_not + "\n";
  }
  if (c.summary) s += sim::Describe(*c.summary, c.summary_levels);
  return s;
}

nlohmann::json SummaryFitOfWorkload(const std::filesystem::path& workload) {
  auto text = ReadFile(workload);
  if (!text.ok()) return nullptr;
  // LoadWorkload has said what is wrong with the workload, if anything.
  const auto root = ir::YamlToTextJson(*text);
  if (!root.ok() || !root->is_object()) return nullptr;
  const auto named = root->find("calibration");
  if (named == root->end() || !named->is_string()) return nullptr;
  auto calibration = ReadFile(workload.parent_path() / named->get<std::string>());
  if (!calibration.ok()) return nullptr;
  auto j = ParseJson(*calibration);
  if (!j.is_object() || !j.contains("fit") || !j["fit"].is_object()) return nullptr;
  return j["fit"].value("summary", nlohmann::json());
}

std::string UndecidedWarning(const std::filesystem::path& workload) {
  const nlohmann::json fit = SummaryFitOfWorkload(workload);
  if (!fit.is_object()) return "";
  const nlohmann::json id = fit.value("identifiability", nlohmann::json::object());
  if (!id.is_object() || id.value("decided", true)) return "";
  std::string widest;
  double ratio = 1;
  for (const auto& level : fit.value("levels", nlohmann::json::array())) {
    const auto range = level.value("near_fits_makespan_seconds", nlohmann::json::array());
    if (!range.is_array() || range.size() != 2 || !range[0].is_number() || !range[1].is_number() ||
        level.value("role", "") == "fitted") {
      continue;
    }
    const double lo = range[0].get<double>(), hi = range[1].get<double>();
    if (lo > 0 && hi / lo > ratio) {
      ratio = hi / lo;
      widest = fmt::format(" (on \"{}\" they predict {} to {})", level.value("name", ""),
                           FormatDuration(FromSeconds(lo)), FormatDuration(FromSeconds(hi)));
    }
  }
  return fmt::format(
      "warning     THE DATA CANNOT DECIDE: the calibration's {} near-equal fits disagree on "
      "levels it was not fitted to{}; this answer is one of them (calibrate names what would "
      "decide)\n",
      id.value("near_equal_fits", 0), widest);
}

std::string PrecisionNote(double error) {
  if (!(error > 0)) return "";
  return fmt::format(
      "precision   figures rounded to what the calibration's error allows: it missed levels it "
      "did not see by up to {:.0f}%\n",
      error * 100);
}

double UnseenError(const std::filesystem::path& workload) {
  const nlohmann::json fit = SummaryFitOfWorkload(workload);
  if (!fit.is_object()) return 0;
  double worst = 0;
  for (const auto& level : fit.value("levels", nlohmann::json::array())) {
    if (!level.is_object()) continue;
    for (const char* key : {"leave_one_out_error", "error"}) {
      if (std::string(key) == "error" && level.value("role", "") != "held out") continue;
      if (auto e = level.find(key); e != level.end() && e->is_number()) {
        worst = std::max(worst, std::abs(e->get<double>()));
      }
    }
  }
  return worst;
}

}  // namespace kfpbench::plan
