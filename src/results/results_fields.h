// The field tables of results.json's objects (results/json_fields.h), shared
// by results_writer.cc, results_reader.cc and pod_lifecycle.cc. Each lists the fields in the
// order the reader takes them; the writer adds the derived ones beside.
#pragma once

#include "results/json_fields.h"
#include "results/results.h"

namespace kfpbench::results {

inline constexpr FieldTable kWindowFields{
    Required("t", &metrics::Window::second),   Required("count", &metrics::Window::count),
    Field("errors", &metrics::Window::errors), Field("p50_us", &metrics::Window::p50_us),
    Field("p95_us", &metrics::Window::p95_us), Field("p99_us", &metrics::Window::p99_us),
    Field("max_us", &metrics::Window::max_us)};

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

inline constexpr FieldTable kGrowthLevelFields{
    Required("target_runs", &GrowthLevel::target_runs),
    Required("runs_stored", &GrowthLevel::runs_stored),
    Field("experiments_stored", &GrowthLevel::experiments_stored),
    Field("pipelines_stored", &GrowthLevel::pipelines_stored),
    Field("measure_seconds", &GrowthLevel::measure_seconds),
    Field("deepest_page", &GrowthLevel::deepest_page)};

// A growth level's "fill" object.
inline constexpr FieldTable kFillFields{
    Field("runs_created", &GrowthLevel::runs_created),
    Field("experiments_created", &GrowthLevel::experiments_created),
    Field("pipelines_created", &GrowthLevel::pipelines_created),
    Field("versions_created", &GrowthLevel::versions_created),
    Field("failures", &GrowthLevel::fill_failures),
    Field("seconds", &GrowthLevel::fill_seconds),
    Field("settle_seconds", &GrowthLevel::settle_seconds),
    Field("unsettled_runs", &GrowthLevel::unsettled_runs)};

inline constexpr FieldTable kStressStepFields{
    Required("rate_per_minute", &StressStep::rate_per_minute),
    Field("runs", &StressStep::runs),
    Field("failed", &StressStep::failed),
    Field("p95_latency_from_intended_ms", &StressStep::p95_ms),
    Field("error_rate", &StressStep::error_rate),
    Field("held", &StressStep::held)};

inline constexpr FieldTable kScheduleFields{
    Field("recurring_runs", &ScheduleSummary::recurring_runs),
    Field("expected_fires", &ScheduleSummary::expected_fires),
    Field("observed_fires", &ScheduleSummary::observed_fires)};

inline constexpr FieldTable kObserverFields{
    Field("qps_budget", &ObserverSummary::qps_budget),
    Field("poll_interval_ms", &ObserverSummary::poll_interval),
    Field("list_sweeps", &ObserverSummary::list_sweeps),
    Field("runs_by_listing", &ObserverSummary::runs_by_listing),
    Field("runs_by_polling", &ObserverSummary::runs_by_polling),
    Field("polling_reason", &ObserverSummary::polling_reason),
    Field("observe_lag_histogram", &ObserverSummary::observe_lag_ms),
    Field("budget_wait_ms", &ObserverSummary::budget_wait)};

inline constexpr FieldTable kHarnessUsageFields{
    Field("wall_s", &HarnessUsage::wall_s),
    Field("cpu_user_s", &HarnessUsage::cpu_user_s),
    Field("cpu_system_s", &HarnessUsage::cpu_system_s),
    Field("peak_rss_bytes", &HarnessUsage::peak_rss_bytes),
    Field("rss_bytes", &HarnessUsage::rss_bytes),
    Field("threads", &HarnessUsage::threads)};

inline constexpr FieldTable kBackPressureFields{Field("waits", &BackPressure::waits),
                                                Field("waited_ms", &BackPressure::waited),
                                                Field("not_resent", &BackPressure::not_resent)};

inline constexpr FieldTable kTargetObjectFields{
    Field("pipelines", &TargetObjects::pipelines),
    Field("experiments", &TargetObjects::experiments), Field("runs", &TargetObjects::runs),
    Field("recurring_runs", &TargetObjects::recurring_runs)};

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

// The "scenario" and "shard" objects, which hold fields of the results.
inline constexpr FieldTable kScenarioFields{
    Field("path", &BenchmarkResults::scenario_path),
    Field("source", &BenchmarkResults::scenario_source),
    Field("time_scale", &BenchmarkResults::time_scale)};  // older files lack it
inline constexpr FieldTable kShardFields{Field("index", &BenchmarkResults::shard_index),
                                         Field("count", &BenchmarkResults::shard_count)};

// The top level's own fields; each section has its own table or reader.
inline constexpr FieldTable kResultsFields{
    Field("kfpbench_version", &BenchmarkResults::kfpbench_version),
    Field("started_at", &BenchmarkResults::started),
    Field("finished_at", &BenchmarkResults::finished), Field("partial", &BenchmarkResults::partial),
    Field("partial_reason", &BenchmarkResults::partial_reason),
    Field("errors", &BenchmarkResults::errors),
    Field("cleanup_failures", &BenchmarkResults::cleanup_failures),
    // Optional: older files lack them.
    Field("benchmark_id", &BenchmarkResults::benchmark_id), Field("kept", &BenchmarkResults::kept),
    Field("resent_requests", &BenchmarkResults::resent_requests)};

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

inline constexpr FieldTable kStepFields{
    Field("pods", &StepPodLatency::pods),
    Field("image_pulls", &StepPodLatency::image_pulls),
    Field("images_present", &StepPodLatency::images_present),
    Field("pull_failures", &StepPodLatency::pull_failures),
    Field("failed_scheduling", &StepPodLatency::failed_scheduling),
    Field("unschedulable", &StepPodLatency::unschedulable),
    Field("ready_inferred", &StepPodLatency::ready_inferred)};

inline constexpr FieldTable kMissingFields{
    Field("run_id", &MissingPod::run_id), Field("step", &MissingPod::step),
    Field("pod", &MissingPod::pod), Field("why", &MissingPod::why)};

}  // namespace kfpbench::results
