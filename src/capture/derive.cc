#include "capture/derive.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "capture/capture.h"
#include "capture/capture_page.h"
#include "capture/fit.h"
#include "capture/overhead_fit.h"
#include "capture/samples.h"
#include "sim/config.h"
#include "util/files.h"
#include "util/json_reader.h"
#include "util/percentile.h"

namespace kfpbench::capture {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// "lognormal:<median>:<sigma>" with the median in microseconds, the form
// exec::ParseDurationDist reads.
std::string DurationSpec(const LognormalFit& fit) {
  return fmt::format("lognormal:{}us:{:.4f}", std::llround(fit.median * 1e6), fit.sigma);
}

constexpr double kOverheadQuantile = 0.05;

std::string MicrosText(double seconds) {
  return fmt::format("{}us", std::llround(std::max(0.0, seconds) * 1e6));
}

double Share(int64_t part, int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

std::string CsvCell(const json& v) {
  std::string text = v.is_string() ? v.get<std::string>() : v.dump();
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  quoted += '"';
  return quoted;
}

json StepModel(const StepSamples& s) {
  const int64_t executed = s.succeeded + s.failed;
  json out = {{"succeeded", s.succeeded},
              {"failed", s.failed},
              {"cached", s.cached},
              {"not_run", s.not_run},
              {"failure_rate", Share(s.failed, executed)},
              {"cache_hit_rate", Share(s.cached, s.cached + executed)},
              {"attempts", s.attempts},
              {"retried_tasks", s.retried},
              {"duration_seconds", Quantiles(s.durations)},
              {"overhead_seconds", Quantiles(s.overheads)}};
  LognormalFit fit = FitLognormal(s.durations);
  if (fit.n > 0) {
    out["lognormal"] = {{"median_seconds", fit.median},
                        {"sigma", fit.sigma},
                        {"ks_d", fit.ks_d},
                        {"ks_d_5pct", 0.886 / std::sqrt(static_cast<double>(fit.n))},
                        {"n", fit.n},
                        {"spec", DurationSpec(fit)}};
  }
  return out;
}

// What the versions give: the mix, the replay's scenarios and the whole
// mix's simulator pipelines.
struct VersionOutputs {
  json mix = json::array();
  json replay = json::array();
  std::string mix_yaml;  // simulate/workload.yaml's pipelines
  std::set<std::string> simulated;
};

// A version's arrivals for the simulator and ORCHESTRATE: offset, then the
// parameters kept as columns.
std::string VersionArrivalsCsv(const VersionSamples& v) {
  std::vector<std::string> names;
  for (const auto& [offset, params] : v.arrivals) {
    for (const auto& [name, value] : params.items()) {
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
  }
  std::string csv = "offset";
  for (const auto& n : names) csv += "," + n;
  csv += "\n";
  for (const auto& [offset, params] : v.arrivals) {
    csv += fmt::format("{:.6f}", offset);
    for (const auto& n : names) {
      csv += ',';
      if (params.contains(n)) csv += CsvCell(params[n]);
    }
    csv += "\n";
  }
  return csv;
}

// simulate/<version>/: pipeline.json, arrivals.csv, workload.yaml.
Status WriteVersionWorkload(const fs::path& folder, const std::string& key, const json& spec,
                            const VersionSamples& v, WallTime since, WallTime until) {
  const fs::path dir = folder / kSimulateDir / key;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Error{fmt::format("cannot create {}: {}", dir.string(), ec.message())};
  if (Status s = WriteFileAtomically(dir / "pipeline.json", spec.dump(1) + "\n"); !s.ok()) {
    return s;
  }
  if (Status s = WriteFileAtomically(dir / "arrivals.csv", VersionArrivalsCsv(v)); !s.ok()) {
    return s;
  }
  std::string yaml = fmt::format(
      "# {} runs of {} ({}) captured between {} and {}, at their recorded offsets\n"
      "# from the capture's first run. Step models: ../../{}.\n"
      "pipeline: pipeline.json\n"
      "arrivals:\n  kind: csv\n  file: arrivals.csv\n"
      "calibration: ../../{}\n",
      v.runs, v.pipeline_name, key, FormatRfc3339(since), FormatRfc3339(until), kCalibrationFile,
      kCalibrationFile);
  return WriteFileAtomically(dir / "workload.yaml", yaml);
}

// Version files: names for the mix, specs for the simulator workloads and
// the replay.
Result<VersionOutputs> DeriveVersions(const fs::path& folder, Samples& samples, WallTime since,
                                      WallTime until) {
  VersionOutputs out;
  for (auto& [key, v] : samples.versions) {
    auto text = ReadRegularFile(folder / kVersionsDir / (key + ".json"), kMaxFolderFileBytes);
    json file = ParseJson(text.ok() ? *text : std::string());
    const bool has_spec = !file.is_discarded() && file.contains("spec") &&
                          !file["spec"].is_null() && !file.contains("spec_error");
    if (!file.is_discarded()) v.pipeline_name = file.value("pipeline_name", file.value("name", ""));
    // The version as people named it (KFP's display_name), beside its id.
    std::string version_name =
        file.is_discarded() ? "" : file.value("display_name", file.value("name", ""));
    json entry = {{"pipeline_version", key},
                  {"version_name", version_name},
                  {"pipeline_name", v.pipeline_name},
                  {"runs", v.runs},
                  {"share", Share(v.runs, samples.runs)},
                  {"censored", v.censored},
                  {"states", v.states},
                  {"run_seconds", Quantiles(v.run_seconds)},
                  {"spec_missing", !has_spec}};
    if (has_spec) {
      if (Status s = WriteVersionWorkload(folder, key, file["spec"], v, since, until); !s.ok()) {
        return s.error();
      }
      entry["simulate"] = fmt::format("{}/{}/workload.yaml", kSimulateDir, key);
      out.simulated.insert(key);
      out.mix_yaml += fmt::format("  {}: {{pipeline: {}/pipeline.json, share: {:.6f}}}\n", key, key,
                                  Share(v.runs, samples.runs));
      // Every version's offsets count from the capture's first run, so the
      // scenarios, all starting at 0, replay the runs at their recorded times.
      out.replay.push_back(
          {{"mode", "ORCHESTRATE"},
           {"startTime", 0},
           {"csv", fmt::format("{}/{}/arrivals.csv", kSimulateDir, key)},
           {"pipelineFileName", fmt::format("{}/{}/pipeline.json", kSimulateDir, key)}});
    }
    out.mix.push_back(std::move(entry));
  }
  return out;
}

// The step models by executor label, and what the stub executor and the
// simulator take of them.
struct StepOutputs {
  json models = json::object();
  json unlabelled = json::object();
  json stub_durations = json::array();
  json stub_failures = json::array();
  json calibration = json::object();
};

StepOutputs DeriveSteps(const Samples& samples) {
  StepOutputs out;
  for (const auto& [label, s] : samples.steps) {
    out.models[label] = StepModel(s);
    if (s.failed > 0) {
      out.stub_failures.push_back(
          fmt::format("{}={:.4f}", label, Share(s.failed, s.succeeded + s.failed)));
    }
    LognormalFit fit = FitLognormal(s.durations);
    if (fit.n == 0) continue;
    out.stub_durations.push_back(label + "=" + DurationSpec(fit));
    json cal = {{"duration", DurationSpec(fit)}};
    // The overhead a task pays when it need not wait for room: a low
    // quantile of created -> started. The median would count the waits for
    // capacity a contended cluster recorded, which the simulator models
    // itself, twice.
    if (!s.overheads.empty()) {
      std::vector<double> sorted = s.overheads;
      std::sort(sorted.begin(), sorted.end());
      cal["overhead"] = MicrosText(sorted[NearestRank(sorted.size(), kOverheadQuantile) - 1]);
    }
    out.calibration[label] = std::move(cal);
  }
  for (const auto& [name, s] : samples.unlabelled) out.unlabelled[name] = StepModel(s);
  return out;
}

// simulate/workload.yaml: every version with a spec in one simulation, each
// run at its recorded offset on its own version (the CSV's pipeline column).
// Runs of versions without a spec have no pipeline to simulate: left out,
// and the file says how many.
Status WriteMixWorkload(const fs::path& folder, const VersionOutputs& versions,
                        const Samples& samples) {
  if (versions.simulated.empty()) return Ok();
  const fs::path dir = folder / kSimulateDir;
  int64_t left_out = 0;
  std::string kept = "offset,pipeline\n";
  std::istringstream lines(samples.mix_csv);
  std::string line;
  std::getline(lines, line);  // the header
  while (std::getline(lines, line)) {
    const std::string key = line.substr(line.find(',') + 1);
    versions.simulated.contains(key) ? void(kept += line + "\n") : void(++left_out);
  }
  std::string yaml = fmt::format(
      "# The captured mix: {} runs of {} pipeline versions at their recorded offsets\n"
      "# (arrivals.csv names each run's version){}. Step models: ../{}.\n"
      "pipelines:\n{}arrivals:\n  kind: csv\n  file: arrivals.csv\ncalibration: ../{}\n",
      samples.runs - left_out, versions.simulated.size(),
      left_out > 0 ? fmt::format("; {} runs of versions without a spec left out", left_out) : "",
      kCalibrationFile, versions.mix_yaml, kCalibrationFile);
  if (Status s = WriteFileAtomically(dir / "arrivals.csv", kept); !s.ok()) return s;
  if (Status s = WriteFileAtomically(dir / "workload.yaml", yaml); !s.ok()) return s;
  // What `simulate` and `plan` will read is read here once, so a capture
  // never completes with a workload they refuse.
  if (auto w = sim::LoadWorkload(dir / "workload.yaml"); !w.ok()) {
    return Error{"the captured mix does not load as a simulator workload: " + w.error().message};
  }
  return Ok();
}

json WorkloadJson(const Samples& samples, VersionOutputs& versions, StepOutputs& steps,
                  WallTime since, WallTime until) {
  const double window_seconds = ToSeconds(until - since);
  json workload = {
      {"format", 1},
      {"window", {{"since", FormatRfc3339(since)}, {"until", FormatRfc3339(until)}}},
      {"runs", samples.runs},
      {"tasks", samples.tasks},
      {"censored", samples.censored},
      {"negative_intervals", samples.negative},
      {"run_states", samples.run_states},
      {"run_seconds", Quantiles(samples.run_seconds)},
      {"mix", std::move(versions.mix)},
      {"arrivals",
       {{"file", kArrivalsFile},
        {"mean_rate_per_second", window_seconds > 0 ? samples.runs / window_seconds : 0.0},
        {"rate_per_hour_by_hour_of_week", RateByHourOfWeek(samples.arrivals, since, until)}}},
      {"steps", std::move(steps.models)},
      {"tasks_without_spec", std::move(steps.unlabelled)},
      {"stub_durations", steps.stub_durations}};
  if (samples.first) workload["arrivals"]["first"] = FormatRfc3339(*samples.first);
  if (samples.first && samples.last_finished) {
    workload["makespan_seconds"] = ToSeconds(*samples.last_finished - *samples.first);
  }
  return workload;
}

// The overhead's basis, as calibration.json and workload.json state it, and
// a sentence for the console. Without the recorded cluster, the low
// quantile of created -> started stays (it counts no wait on a cluster with
// room at least 5% of the time), and the numbers say how much of the gap
// may be waiting; with it, the overhead is fitted on it (overhead_fit.h).
struct OverheadOutcome {
  bool fitted = false;
  OverheadFit fit;
  json record;
  std::string note;
};

Result<OverheadOutcome> DeriveOverhead(const fs::path& folder, const Samples& samples,
                                       const sim::ClusterSpec* cluster) {
  std::vector<double> gaps;
  double ceiling = -1;
  for (const auto& [label, s] : samples.steps) {
    if (s.overheads.empty()) continue;
    gaps.insert(gaps.end(), s.overheads.begin(), s.overheads.end());
    std::vector<double> sorted = s.overheads;
    std::sort(sorted.begin(), sorted.end());
    const double median = sorted[NearestRank(sorted.size(), 0.5) - 1];
    ceiling = ceiling < 0 ? median : std::min(ceiling, median);
  }
  OverheadOutcome out;
  if (gaps.empty()) {
    out.record = {{"basis", "none: no task has both a create and a start time"}};
    return out;
  }
  double mean = 0;
  for (double g : gaps) mean += g;
  mean /= static_cast<double>(gaps.size());
  std::sort(gaps.begin(), gaps.end());
  const double p05 = gaps[NearestRank(gaps.size(), kOverheadQuantile) - 1];
  const double p50 = gaps[NearestRank(gaps.size(), 0.5) - 1];
  json gap = {{"n", gaps.size()}, {"mean", mean}, {"p05", p05}, {"p50", p50}};
  if (cluster == nullptr) {
    out.record = {{"basis",
                   "p05 of created->started per label; the capture cannot tell pod "
                   "start-up from waiting for room (capture --recorded-cluster fits it)"},
                  {"created_to_started_seconds", gap}};
    out.note = fmt::format(
        "overhead: the 5th percentile of created->started per step ({:.3f} s over all steps; "
        "median {:.3f} s). A capture cannot tell start-up from waiting for room: on a cluster "
        "full more than 95% of the time this is wait. --recorded-cluster RECORDED.yaml fits it on "
        "the "
        "cluster the history ran on",
        p05, p50);
    return out;
  }
  auto mix = sim::LoadWorkload(folder / kSimulateDir / "workload.yaml");
  if (!mix.ok()) return Error{"the captured mix does not load: " + mix.error().message};
  auto fit = FitOverheadOnCluster(*cluster, *mix, mean, ceiling);
  if (!fit.ok()) {
    return Error{"fitting the overhead on the recorded cluster: " + fit.error().message};
  }
  out.fitted = true;
  out.fit = *fit;
  out.note = DescribeOverheadFit(*fit);
  const char* limit = fit->limit == OverheadFit::Limit::kFloor     ? "floor"
                      : fit->limit == OverheadFit::Limit::kCeiling ? "ceiling"
                                                                   : "none";
  out.record = {{"basis",
                 "fitted on the recorded cluster: the overhead with which the captured "
                 "arrivals simulated on it give the recorded mean created->started"},
                {"seconds", fit->overhead},
                {"created_to_started_seconds", gap},
                {"simulated_gap_seconds", fit->simulated_gap},
                {"simulated_waits_alone_seconds", fit->waits_alone},
                {"ceiling_seconds", fit->ceiling},
                {"limit", limit},
                {"simulations", fit->simulations}};
  return out;
}

}  // namespace

json RateByHourOfWeek(const std::vector<WallTime>& arrivals, WallTime since, WallTime until) {
  using std::chrono::hours;
  // 1970-01-01 was a Thursday: hour 0 of the epoch is hour 72 of its week.
  auto hour_of_week = [](WallTime t) {
    const int64_t h = std::chrono::floor<hours>(t).time_since_epoch() / hours(1);
    return static_cast<int>(((h + 72) % 168 + 168) % 168);
  };
  std::vector<double> exposure(168, 0.0);
  for (WallTime t = since; t < until;) {
    WallTime next = std::min<WallTime>(std::chrono::floor<hours>(t) + hours(1), until);
    exposure[hour_of_week(t)] += ToSeconds(next - t) / 3600.0;
    t = next;
  }
  std::vector<int64_t> counts(168, 0);
  for (WallTime a : arrivals) {
    if (a >= since && a < until) ++counts[hour_of_week(a)];
  }
  json rates = json::array();
  for (int h = 0; h < 168; ++h) {
    rates.push_back(exposure[h] > 0 ? json(static_cast<double>(counts[h]) / exposure[h]) : json());
  }
  return rates;
}

json FolderFiles(const fs::path& folder) {
  json files = json::array();
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(folder, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    std::string rel = fs::relative(it->path(), folder).string();
    if (rel == kCheckpointFile || rel == kManifestFile || rel.find(".tmp") != std::string::npos)
      continue;
    files.push_back(rel);
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The most runs that arrived in any minute of the capture, per second: what
// the replay's observer must keep up with (harness/replay_steps.h).
double PeakRunsPerSecond(std::vector<WallTime> arrivals) {
  std::sort(arrivals.begin(), arrivals.end());
  size_t most = 0;
  for (size_t first = 0, last = 0; last < arrivals.size(); ++last) {
    while (arrivals[last] - arrivals[first] >= std::chrono::minutes(1)) ++first;
    most = std::max(most, last - first + 1);
  }
  return static_cast<double>(most) / 60;
}

Status Derive(const fs::path& folder, WallTime since, WallTime until,
              const sim::ClusterSpec* cluster, std::string* overhead_note) {
  Samples samples;
  if (Status s = ReadSamples(folder / kRunsFile, samples); !s.ok()) return s;
  auto versions = DeriveVersions(folder, samples, since, until);
  if (!versions.ok()) return versions.error();
  StepOutputs steps = DeriveSteps(samples);
  if (Status s = WriteFileAtomically(folder / kArrivalsFile, samples.arrivals_csv); !s.ok()) {
    return s;
  }
  if (!versions->replay.empty()) {
    // The embedded backend's stub steps take the fitted step times and
    // failure rates (harness/replay_steps.h), scaled with --time-scale.
    json file = {{"replay",
                  {{"stubDurations", steps.stub_durations},
                   {"stubFailures", steps.stub_failures},
                   {"peakRunsPerSecond", PeakRunsPerSecond(samples.arrivals)}}},
                 {"scenarios", versions->replay}};
    if (Status s = WriteFileAtomically(folder / kReplayFile, file.dump(1) + "\n"); !s.ok()) {
      return s;
    }
  }
  json calibration = {
      {"source", "kfpbench capture"},
      {"note", fmt::format("step models fitted to {} runs created between {} and {}", samples.runs,
                           FormatRfc3339(since), FormatRfc3339(until))},
      {"steps", steps.calibration}};
  auto write_calibration = [&] {
    return WriteFileAtomically(folder / kCalibrationFile, calibration.dump(1) + "\n");
  };
  if (Status s = write_calibration(); !s.ok()) return s;
  if (Status s = WriteMixWorkload(folder, *versions, samples); !s.ok()) return s;
  auto overhead = DeriveOverhead(folder, samples, versions->simulated.empty() ? nullptr : cluster);
  if (!overhead.ok()) return overhead.error();
  if (overhead->fitted) {
    // The fitted overhead replaces the low quantile for every label, and
    // the mix workload (which reads this file) simulates with it.
    for (auto& cal : calibration["steps"]) cal["overhead"] = MicrosText(overhead->fit.overhead);
  }
  calibration["fit"]["overhead"] = overhead->record;
  if (Status s = write_calibration(); !s.ok()) return s;
  if (overhead_note != nullptr) *overhead_note = overhead->note;
  json workload = WorkloadJson(samples, *versions, steps, since, until);
  workload["overhead"] = overhead->record;
  if (Status s = WriteCapturePage(folder / kPageFile, samples, workload); !s.ok()) return s;
  return WriteFileAtomically(folder / kWorkloadFile, workload.dump(1) + "\n");
}

}  // namespace kfpbench::capture
