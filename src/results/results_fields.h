// The field tables of results.json's objects (results/json_fields.h), shared
// by results_writer.cc, results_reader.cc and pod_lifecycle.cc. Each lists the fields in the
// order the reader takes them; the writer adds the derived ones beside.
#pragma once

#include "results/json_fields.h"
#include "results/results.h"

namespace kfpbench::results {

// One second of an operation's time series: windows of the same second (after
// each part's shift, MergeContext::shift_s) add their counts; a percentile
// becomes the largest of the parts', an upper bound on the merged one.
inline constexpr FieldTable kWindowFields{Required("t", &metrics::Window::second, kFirst),
                                          Required("count", &metrics::Window::count, kSum),
                                          Field("errors", &metrics::Window::errors, kSum),
                                          Field("p50_us", &metrics::Window::p50_us, kMax),
                                          Field("p95_us", &metrics::Window::p95_us, kMax),
                                          Field("p99_us", &metrics::Window::p99_us, kMax),
                                          Field("max_us", &metrics::Window::max_us, kMax)};

// A part's error messages counted in, within the cap a recorder keeps
// (metrics::OperationStats::AddErrorMessage).
inline void MergeErrorMessages(std::map<std::string, uint64_t>& into,
                               const std::map<std::string, uint64_t>& from) {
  for (const auto& [message, n] : from) {
    auto it = into.find(message);
    if (it != into.end()) {
      it->second += n;
    } else if (into.size() < metrics::OperationStats::kMaxErrorMessages) {
      into.emplace(message, n);
    }
  }
}

// An operation's calls (the writer adds the derived count, rates and
// summary beside them).
inline constexpr FieldTable kOperationFields{
    Required("histogram", &metrics::OperationStats::latency_us, kHistogramMerge),
    Required("errors", &metrics::OperationStats::errors, kSum),
    Section("by_status", &metrics::OperationStats::by_status, kSum),
    Section("error_messages", &metrics::OperationStats::error_messages,
            CustomRule<std::map<std::string, uint64_t>>{"sum within the cap", MergeErrorMessages}),
    Section("timeseries", &metrics::OperationStats::windows, AlignedWindows(kWindowFields))};

inline constexpr FieldTable kRunFields{Field("scenario", &RunRecord::scenario),
                                       Field("run_id", &RunRecord::run_id),
                                       Field("state", &RunRecord::state),
                                       Field("intended_at", &RunRecord::intended),
                                       Field("recurring_run_id", &RunRecord::recurring_run_id),
                                       Field("scheduled_at", &RunRecord::scheduled),
                                       Field("submitted_at", &RunRecord::submitted),
                                       Field("created_at", &RunRecord::created),
                                       Field("finished_at", &RunRecord::finished),
                                       Field("observed_at", &RunRecord::observed)};

inline constexpr FieldTable kTaskFields{Field("name", &TaskTiming::name),
                                        Field("state", &TaskTiming::state),
                                        Field("created_at", &TaskTiming::created),
                                        Field("started_at", &TaskTiming::started),
                                        Field("finished_at", &TaskTiming::finished),
                                        Field("dag", &TaskTiming::dag)};

// A growth level's "fill" object. A level measured in two parts (the same
// scenario repeated) keeps the first part's fill and counts.
inline constexpr FieldTable kFillFields{
    Field("runs_created", &GrowthLevel::runs_created, kFirst),
    Field("experiments_created", &GrowthLevel::experiments_created, kFirst),
    Field("pipelines_created", &GrowthLevel::pipelines_created, kFirst),
    Field("versions_created", &GrowthLevel::versions_created, kFirst),
    Field("failures", &GrowthLevel::fill_failures, kFirst),
    Field("seconds", &GrowthLevel::fill_seconds, kFirst),
    Field("settle_seconds", &GrowthLevel::settle_seconds, kFirst),
    Field("unsettled_runs", &GrowthLevel::unsettled_runs, kFirst)};

// One level; its "operations" (histogram and errors per operation) are
// written by hand, and add.
inline constexpr FieldTable kGrowthLevelFields{
    Required("target_runs", &GrowthLevel::target_runs, kFirst),
    Required("runs_stored", &GrowthLevel::runs_stored, kFirst),
    Field("experiments_stored", &GrowthLevel::experiments_stored, kFirst),
    Field("pipelines_stored", &GrowthLevel::pipelines_stored, kFirst),
    Field("measure_seconds", &GrowthLevel::measure_seconds, kFirst),
    Field("deepest_page", &GrowthLevel::deepest_page, kFirst),
    Object("fill", kFillFields),
    Section("operations.histogram", &GrowthLevel::latency_us, kHistogramMerge),
    Section("operations.errors", &GrowthLevel::errors, kSum)};

// A growth scenario ("growth.<scenario>"); its fits are derived. Growth is
// never sharded (ApplyShard refuses it); the same scenario in two parts
// (repetitions) merges level by level.
inline constexpr FieldTable kGrowthCurveFields{
    Section("scenario", &GrowthCurve::scenario, kFirst),
    Field("extrapolate_to", &GrowthCurve::extrapolate_to, kFirst),
    Field("stopped_because", &GrowthCurve::stopped_because, kFirst),
    Section("levels", &GrowthCurve::levels, ByKey(&GrowthLevel::target_runs, kGrowthLevelFields))};

inline constexpr FieldTable kStressStepFields{
    Required("rate_per_minute", &StressStep::rate_per_minute),
    Field("runs", &StressStep::runs),
    Field("failed", &StressStep::failed),
    Field("p95_latency_from_intended_ms", &StressStep::p95_ms),
    Field("error_rate", &StressStep::error_rate),
    Field("held", &StressStep::held)};

// A SCHEDULED_RUNS scenario ("schedules.<scenario>"): shards of one schedule
// scenario add up, fires owed and made.
inline constexpr FieldTable kScheduleFields{
    Section("scenario", &ScheduleSummary::scenario, kFirst),
    Field("recurring_runs", &ScheduleSummary::recurring_runs, kSum),
    Field("expected_fires", &ScheduleSummary::expected_fires, kSum),
    Field("observed_fires", &ScheduleSummary::observed_fires, kSum)};

// The run follower's calls add up over parts; the budget is the first set.
inline constexpr FieldTable kObserverFields{
    Field("qps_budget", &ObserverSummary::qps_budget, kFirstSet),
    Field("poll_interval_ms", &ObserverSummary::poll_interval, kFirstSet),
    Field("list_sweeps", &ObserverSummary::list_sweeps, kSum),
    Field("runs_by_listing", &ObserverSummary::runs_by_listing, kSum),
    Field("runs_by_polling", &ObserverSummary::runs_by_polling, kSum),
    Field("polling_reason", &ObserverSummary::polling_reason, kFirstSet),
    Field("observe_lag_histogram", &ObserverSummary::observe_lag_ms, kHistogramMerge),
    Field("budget_wait_ms", &ObserverSummary::budget_wait, kSum),
    Section("operations", &ObserverSummary::operations, PerKey(kOperationFields))};

// kfpbench's own use adds up; peaks are the largest part's.
inline constexpr FieldTable kHarnessUsageFields{
    Field("wall_s", &HarnessUsage::wall_s, kSum),
    Field("cpu_user_s", &HarnessUsage::cpu_user_s, kSum),
    Field("cpu_system_s", &HarnessUsage::cpu_system_s, kSum),
    Field("peak_rss_bytes", &HarnessUsage::peak_rss_bytes, kMax),
    Field("rss_bytes", &HarnessUsage::rss_bytes, kMax),
    Field("threads", &HarnessUsage::threads, kMax)};

inline constexpr FieldTable kBackPressureFields{
    Field("waits", &BackPressure::waits, kSum), Field("waited_ms", &BackPressure::waited, kSum),
    Field("not_resent", &BackPressure::not_resent, kSum),
    Section("by_operation", &BackPressure::by_operation, kSum)};

inline constexpr FieldTable kTargetObjectFields{
    Field("pipelines", &TargetObjects::pipelines, kSum),
    Field("experiments", &TargetObjects::experiments, kSum),
    Field("runs", &TargetObjects::runs, kSum),
    Field("recurring_runs", &TargetObjects::recurring_runs, kSum)};

inline constexpr FieldTable kTargetFields{
    Field("url", &TargetInfo::url), Field("embedded", &TargetInfo::embedded),
    Field("api_version", &TargetInfo::api_version), Field("healthz", &TargetInfo::healthz),
    // Optional: older files lack them.
    Field("origin", &TargetInfo::origin), Field("namespace", &TargetInfo::namespace_),
    Field("executor", &TargetInfo::executor),
    Field("executor_reason", &TargetInfo::executor_reason)};

inline constexpr FieldTable kScenarioInfoFields{
    Field("index", &ScenarioInfo::index), Field("mode", &ScenarioInfo::mode),
    Field("artifact_bytes", &ScenarioInfo::artifact_bytes)};

// The "scenario" and "shard" objects, which hold fields of the results. Parts
// run with different time scales measured different loads: not merged.
inline constexpr FieldTable kScenarioFields{
    Field("path", &BenchmarkResults::scenario_path, kFirst),
    Field("source", &BenchmarkResults::scenario_source, kFirst),
    Field("time_scale", &BenchmarkResults::time_scale, kEqual)};  // older files lack it
// The merged result stands for the whole load, not one shard of it.
inline constexpr FieldTable kShardFields{Field("index", &BenchmarkResults::shard_index, kWhole),
                                         Field("count", &BenchmarkResults::shard_count, kWhole)};

// What shapes and modes measure beyond calls and runs, one section each,
// filled by their runners (harness::Context::Record) and added to the
// results through these rules. A new measured quantity is a member of
// BenchmarkResults, its line here, and its section's JSON in
// results_writer.cc and results_reader.cc.
inline constexpr FieldTable kMeasuredFields{
    Section("stress.steps", &BenchmarkResults::stress_steps, kAppend),
    Section("stress.stopped", &BenchmarkResults::stress_stops, kAppend),
    Section("schedules", &BenchmarkResults::schedules,
            ByKey(&ScheduleSummary::scenario, kScheduleFields)),
    Section("growth", &BenchmarkResults::growth,
            ByKey(&GrowthCurve::scenario, kGrowthCurveFields))};

// results.json's top level: every member of BenchmarkResults, with how it
// merges. Fields are written and read through the table; each Section is
// written and read by its own code in results_writer.cc and
// results_reader.cc (its form is its own: keyed by scenario, with derived
// figures beside it), and merged by the rule named here.
inline constexpr FieldTable kResultsFields{
    Field("kfpbench_version", &BenchmarkResults::kfpbench_version, kFirst),
    Field("started_at", &BenchmarkResults::started, kEarliest),
    Field("finished_at", &BenchmarkResults::finished, kLatest),
    Field("partial", &BenchmarkResults::partial, kAny),
    Field("partial_reason", &BenchmarkResults::partial_reason, JoinRule{"; "}),
    Field("errors", &BenchmarkResults::errors, kAppend),
    Field("cleanup_failures", &BenchmarkResults::cleanup_failures, kAppend),
    // Optional: older files lack them. Shards of one benchmark share no id;
    // the merge names them all.
    Field("benchmark_id", &BenchmarkResults::benchmark_id, JoinRule{" ", true}),
    Field("kept", &BenchmarkResults::kept, kAny),
    Field("resent_requests", &BenchmarkResults::resent_requests, kSum),
    Object("scenario", kScenarioFields), Object("shard", kShardFields),
    Section("target", &BenchmarkResults::target, kFirst),
    Section("scenarios", &BenchmarkResults::scenarios, kFirstSet),
    Section("operations", &BenchmarkResults::operations, PerKey(kOperationFields)),
    Section("runs", &BenchmarkResults::runs, kAppend), Group(kMeasuredFields),
    Section("created", &BenchmarkResults::created, Nested(kTargetObjectFields)),
    Section("deleted", &BenchmarkResults::deleted, Nested(kTargetObjectFields)),
    Section("observer", &BenchmarkResults::observer, Nested(kObserverFields)),
    Section("harness_usage", &BenchmarkResults::harness_usage, Nested(kHarnessUsageFields)),
    Section("back_pressure", &BenchmarkResults::back_pressure, Nested(kBackPressureFields)),
    Section("collectors", &BenchmarkResults::collectors, kAppend),
    Section("pod_lifecycle", &BenchmarkResults::pod_lifecycle, kOwnMerge),
    Section("repetitions", &BenchmarkResults::repetitions, kAppend)};

// pod_lifecycle: a pod as read, its containers, its step's counts and the pods not read.
inline constexpr FieldTable kContainerFields{
    Field("name", &kube::ContainerTimeline::name),
    Field("init", &kube::ContainerTimeline::init),
    Field("image", &kube::ContainerTimeline::image),
    Field("pull_ms", &kube::ContainerTimeline::pull),
    Field("image_present", &kube::ContainerTimeline::image_present),
    Field("pull_failed", &kube::ContainerTimeline::pull_failed),
    Field("started_at", &kube::ContainerTimeline::started),
    Field("finished_at", &kube::ContainerTimeline::finished),
    Field("exit_code", &kube::ContainerTimeline::exit_code),
    Field("restarts", &kube::ContainerTimeline::restarts),
    Field("readiness_probe", &kube::ContainerTimeline::has_readiness_probe)};

inline constexpr FieldTable kPodRecordFields{Field("run_id", &PodRecord::run_id),
                                             Field("step", &PodRecord::step)};
// A pod's fields but its creation time, which is always written and required.
inline constexpr FieldTable kPodFields{
    Field("pod", &kube::PodTimeline::name),
    Field("uid", &kube::PodTimeline::uid),
    Field("node", &kube::PodTimeline::node),
    Field("phase", &kube::PodTimeline::phase),
    Field("scheduled_at", &kube::PodTimeline::scheduled),
    Field("initialized_at", &kube::PodTimeline::initialized),
    Field("containers_ready_at", &kube::PodTimeline::containers_ready),
    Field("ready_at", &kube::PodTimeline::ready),
    Field("ready_inferred", &kube::PodTimeline::ready_inferred),
    Field("failed_scheduling", &kube::PodTimeline::failed_scheduling),
    Field("unschedulable", &kube::PodTimeline::unschedulable),
    Field("events_read", &kube::PodTimeline::events_read)};

// A step's pods; shards of one benchmark read different runs' pods, which add.
inline constexpr FieldTable kStepFields{
    Field("pods", &StepPodLatency::pods, kSum),
    Field("image_pulls", &StepPodLatency::image_pulls, kSum),
    Field("images_present", &StepPodLatency::images_present, kSum),
    Field("pull_failures", &StepPodLatency::pull_failures, kSum),
    Field("failed_scheduling", &StepPodLatency::failed_scheduling, kSum),
    Field("unschedulable", &StepPodLatency::unschedulable, kSum),
    Field("ready_inferred", &StepPodLatency::ready_inferred, kSum),
    Section("latency_ms", &StepPodLatency::ms, kHistogramMerge)};

inline constexpr FieldTable kMissingFields{
    Field("run_id", &MissingPod::run_id), Field("step", &MissingPod::step),
    Field("pod", &MissingPod::pod), Field("why", &MissingPod::why)};

// The "pod_lifecycle" section: what the writer and reader take through the
// table, and how every member merges (PodLifecycle::Merge walks it). A part
// that read no pods has nothing set, so it adds nothing.
inline constexpr FieldTable kPodLifecycleFields{
    Section("collected", &PodLifecycle::collected, kAny),
    Field("context", &PodLifecycle::context, kFirstSet),
    Field("namespace", &PodLifecycle::namespace_, kFirstSet),
    Field("pods_requested", &PodLifecycle::pods_requested, kSum),
    Field("kubectl_calls", &PodLifecycle::kubectl_calls, kSum),
    Field("errors", &PodLifecycle::errors, kAppend),
    Section("pods_without_events", &PodLifecycle::pods_without_events, kSum),
    Section("steps", &PodLifecycle::steps, PerKey(kStepFields)),
    Section("pods", &PodLifecycle::pods, kAppend),
    Section("missing_pods", &PodLifecycle::missing, kAppend)};

}  // namespace kfpbench::results
