#include "harness/runner.h"

#include <algorithm>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "harness/growth_fill.h"
#include "ir/pipeline_spec.h"
#include "results/results_fields.h"
#include "util/files.h"
#include "util/ids.h"

namespace kfpbench::harness {
namespace {

// DeleteRun calls in flight while a growth fill is deleted.
constexpr int kGrowthCleanUpConcurrency = 8;

}  // namespace

Context::Context(kfp::Client& client, results::RunLog& runs, const HarnessOptions& options,
                 WallTime started)
    : client_(client),
      runs_(runs),
      options_(options),
      started_(started),
      follower_calls_(
          std::make_unique<FollowerCalls>(client, options.observer_qps, options.poll_interval)) {}

bool Context::Interrupted() const {
  return aborted_.load(std::memory_order_relaxed) ||
         (options_.interrupted && options_.interrupted->load(std::memory_order_relaxed));
}

bool Context::Hurried() const {
  return options_.hurry != nullptr && options_.hurry->load(std::memory_order_relaxed);
}

WallTime Context::StopWaitingAt(WallTime give_up) const {
  if (!Interrupted()) return give_up;
  // Not now(): a caller comparing its own earlier now() must see it passed.
  if (Hurried()) return WallTime::min();
  int64_t noticed = 0;
  int64_t now = WallClock::now().time_since_epoch().count();
  interrupted_at_ns_.compare_exchange_strong(noticed, now);
  WallTime at{WallClock::duration(noticed == 0 ? now : noticed)};
  return std::min(give_up, at + options_.grace);
}

void Context::Abort(std::string reason) {
  std::lock_guard lock(mu_);
  if (aborted_.exchange(true)) return;
  abort_reason_ = std::move(reason);
}

std::string Context::abort_reason() const {
  std::lock_guard lock(mu_);
  return abort_reason_;
}

size_t Context::runs_created() const {
  std::lock_guard lock(mu_);
  return run_ids_.size();
}

bool Context::SleepUntil(WallTime t) const {
  // Short slices keep Ctrl-C responsive without a signal-safe wake-up channel.
  constexpr auto kSlice = std::chrono::milliseconds(50);
  for (;;) {
    if (Interrupted()) return false;
    auto now = WallClock::now();
    if (now >= t) return true;
    std::this_thread::sleep_for(std::min<Duration>(t - now, kSlice));
  }
}

Result<std::string> Context::ReadPipelineFile(const std::filesystem::path& path) {
  std::lock_guard lock(mu_);
  if (auto it = file_cache_.find(path.string()); it != file_cache_.end()) return it->second;
  // Twice KFP's 32 MiB pipeline limit; never a device or a FIFO.
  constexpr size_t kMaxPipelineFileBytes = size_t{64} << 20;
  auto content = ReadRegularFile(path, kMaxPipelineFileBytes);
  if (content.ok()) file_cache_.emplace(path.string(), *content);
  return content;
}

void Context::AddPipelineTexts(const std::map<std::string, std::string>& texts) {
  std::lock_guard lock(mu_);
  file_cache_.insert(texts.begin(), texts.end());
}

void Context::TrackPipeline(const UploadedPipeline& pipeline) {
  std::lock_guard lock(mu_);
  if (pipelines_.emplace("id:" + pipeline.pipeline_id, pipeline).second) ++created_.pipelines;
}

Result<UploadedPipeline> Context::EnsurePipeline(const std::filesystem::path& path, bool cache) {
  auto content = ReadPipelineFile(path);
  if (!content.ok()) return content.error();
  if (!cache) {
    content = ir::WithCaching(*content, false);
    if (!content.ok()) return Error{fmt::format("{}: {}", path.string(), content.error().message)};
  }
  std::error_code ec;
  std::string key =
      std::filesystem::weakly_canonical(path, ec).string() + (cache ? "" : "#no-cache");
  std::lock_guard lock(mu_);
  if (auto it = pipelines_.find(key); it != pipelines_.end()) return it->second;
  // A unique name, so benchmarks never collide with each other or with users'
  // pipelines of the same file name.
  std::string name = Name(fmt::format("{}-{}", path.stem().string(), NewUuid().substr(0, 8)));
  auto uploaded = client_.UploadPipeline(name, path.filename().string(), *content);
  if (!uploaded.ok()) {
    return Error{fmt::format("cannot upload {}: {}", path.string(), uploaded.error().message)};
  }
  UploadedPipeline p{uploaded->pipeline_id, name};
  pipelines_.emplace(key, p);
  ++created_.pipelines;
  return p;
}

void Context::TrackRun(const std::string& run_id) {
  std::lock_guard lock(mu_);
  run_ids_.push_back(run_id);
  ++created_.runs;
}

void Context::TrackExperiment(const std::string& experiment_id) {
  std::lock_guard lock(mu_);
  experiment_ids_.push_back(experiment_id);
  ++created_.experiments;
}

void Context::TrackRecurringRun(const std::string& recurring_run_id) {
  std::lock_guard lock(mu_);
  recurring_run_ids_.push_back(recurring_run_id);
  ++created_.recurring_runs;
}

results::TargetObjects Context::created() const {
  std::lock_guard lock(mu_);
  return created_;
}

std::string Context::Name(std::string_view what) const {
  return fmt::format("{}-{}", options_.benchmark_id.empty() ? "kfpbench" : options_.benchmark_id,
                     what);
}

std::string Context::Description(std::string_view what) const {
  return fmt::format("created by kfpbench benchmark {} {}", options_.benchmark_id, what);
}

void AddFindings(const Findings& findings, results::BenchmarkResults& results) {
  // Appends and merges by scenario: nothing that can refuse.
  Status s = results::kMeasuredFields.MergeFields(results, findings, {.first = false});
  if (!s.ok()) spdlog::error("the shapes' findings: {}", s.error().message);
}

void Context::Record(const std::function<void(Findings&)>& update) {
  std::lock_guard lock(mu_);
  update(findings_);
}

Findings Context::findings() const {
  std::lock_guard lock(mu_);
  return findings_;
}

void Context::TrackGrowthFill(const std::string& prefix) {
  std::lock_guard lock(mu_);
  if (std::find(growth_fills_.begin(), growth_fills_.end(), prefix) == growth_fills_.end()) {
    growth_fills_.push_back(prefix);
  }
}

Context::CleanUpReport Context::CleanUp() {
  std::lock_guard lock(mu_);
  CleanUpReport report;
  report.created = created_;
  if (options_.keep) return report;
  results::TargetObjects& deleted = report.deleted;
  auto note = [&](const std::string& what, const Status& s, int64_t& count) {
    // Already gone is as good as deleted.
    if (s.ok() || s.error().NotFound()) {
      ++count;
    } else {
      report.failures.push_back(what + ": " + s.error().message);
    }
  };
  // Schedules first, so they stop making runs that would then be left behind.
  for (const auto& id : recurring_run_ids_) {
    note("recurring run " + id, client_.DeleteRecurringRun(id), deleted.recurring_runs);
  }
  for (const auto& prefix : growth_fills_) {
    auto outcome =
        CleanUpFill(client_, prefix, kGrowthCleanUpConcurrency, [this] { return Hurried(); });
    for (auto& f : outcome.failures) report.failures.push_back(std::move(f));
    if (outcome.stopped) {
      report.failures.push_back(fmt::format(
          "the growth fill '{}': clean-up stopped after {} runs; run `kfpbench growth-cleanup "
          "--prefix {}` with the same target flags to delete the rest",
          prefix, outcome.runs_deleted, prefix));
    }
  }
  growth_fills_.clear();
  for (const auto& id : run_ids_) note("run " + id, client_.DeleteRun(id), deleted.runs);
  for (const auto& id : experiment_ids_) {
    note("experiment " + id, client_.DeleteExperiment(id), deleted.experiments);
  }
  for (const auto& [path, p] : pipelines_) {
    note("pipeline " + p.name, client_.DeletePipeline(p.pipeline_id, /*cascade=*/true),
         deleted.pipelines);
  }
  recurring_run_ids_.clear();
  run_ids_.clear();
  experiment_ids_.clear();
  pipelines_.clear();
  return report;
}

}  // namespace kfpbench::harness
