// Step profiles and what they recommend: from CPU and memory samples of each
// step (the embedded backend's process sampler, or a cluster's Prometheus),
// Kubernetes requests and limits and how many of a step fit on a node.
//
// The rule, stated in the output and in docs/CAPACITY.md:
//   request = p95 of the samples x (1 + headroom), limit = peak x (1 + headroom),
//   CPU rounded up to a multiple of 100m (at least 100m),
//   memory rounded up to a multiple of 64Mi (at least 64Mi),
//   a limit never below its request.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/result.h"
#include "util/time.h"

namespace kfpbench::plan {

inline constexpr double kCpuStepCores = 0.1;           // 100m
inline constexpr int64_t kMemoryStepBytes = 64 << 20;  // 64Mi

// Rounds up to the next multiple of 100m; never below 100m.
double RoundCpuUp(double cores);
// Rounds up to the next multiple of 64Mi; never below 64Mi.
int64_t RoundMemoryUp(int64_t bytes);
// "1500m" / "2"; "192Mi" / "3Gi" (the units the rounding produces).
std::string FormatCpu(double cores);
std::string FormatMemory(int64_t bytes);

struct Usage {
  double peak = 0;
  double p95 = 0;
};

struct Recommendation {
  double cpu_request = 0, cpu_limit = 0;         // cores
  int64_t memory_request = 0, memory_limit = 0;  // bytes
};

// Applies the rule above; `headroom` is a fraction (0.2 for 20%).
Recommendation Recommend(const Usage& cpu_cores, const Usage& memory_bytes, double headroom);

struct NodeSize {
  double cpu = 0;      // cores
  int64_t memory = 0;  // bytes
};
// "16cpu,56Gi", "16,56Gi", "15500m,60G". Errors say what was expected.
Result<NodeSize> ParseNodeSize(std::string_view text);

// How many of a step fit on a node by its requests, and which resource runs
// out first ("cpu" or "memory").
struct Fit {
  int64_t jobs = 0;
  std::string limited_by;
};
Fit JobsPerNode(const Recommendation& r, const NodeSize& node);

// One execution of a step: its duration and the samples taken while it ran.
struct StepExecution {
  std::string run_id;          // may be empty
  std::string step;            // task name in the pipeline ("train-a")
  std::string executor_label;  // "exec-train"; may be empty
  Duration duration{};
  std::vector<double> cpu_cores;
  std::vector<double> memory_bytes;
  // Summaries known without samples (a results.json with only peaks):
  // used when the sample vectors are empty.
  std::optional<Usage> cpu_summary, memory_summary;
  double cpu_seconds = 0;
};

struct StepProfile {
  std::string step;
  std::string executor_label;
  int executions = 0;
  Duration duration_p50{}, duration_max{};
  Usage cpu_cores;
  Usage memory_bytes;
  size_t samples = 0;
  bool no_data = false;  // neither samples nor summaries: ended before any sample
  double cpu_seconds_mean = 0;
  Recommendation recommended;
  std::optional<Fit> fit;  // with a node size
  // The accelerator the pipeline asks for (KFP's set_accelerator_type and
  // _limit): requested, not sampled. Empty type: none.
  std::string accelerator;
  int64_t accelerator_count = 0;
};

// How many whole runs fit on a node at once, by the DAG level whose
// recommended requests add up to the most (plan/pipeline_fit.h).
struct PipelineFit {
  int64_t pipelines = 0;
  std::vector<std::string> tasks;  // that level's steps
  double cpu_request = 0;          // their requests together
  int64_t memory_request = 0;
  std::string limited_by;  // "cpu" or "memory"
};

struct ProfileOptions {
  double headroom = 0.2;
  std::optional<NodeSize> node;
  std::string node_text;  // as given, for the output
};

struct ProfileReport {
  std::string pipeline;  // name or file
  std::string source;    // "embedded backend" or the results.json read
  int repeats = 0;
  double sample_interval_ms = 0;  // 0 when unknown
  ProfileOptions options;
  std::vector<StepProfile> steps;  // in the order first seen
  // With a node size: the step that fits fewest times per node.
  std::string bottleneck_step;
  int64_t bottleneck_jobs = 0;
  // With a node size and the pipeline's DAG: whole runs per node.
  std::optional<PipelineFit> pipeline_fit;
};

// Groups executions by step; p95 and peak are over all samples of a step.
ProfileReport BuildProfile(const std::vector<StepExecution>& executions,
                           const ProfileOptions& options);

// The rule as one paragraph, with the headroom filled in.
std::string DescribeRule(double headroom);
// The console table, with the rule and (with a node size) jobs per node.
std::string Describe(const ProfileReport& report);
// profile.json: per step the summary and the recommendation.
nlohmann::json ToJson(const ProfileReport& report);

// A copy of compiled IR (as JSON) whose executors ask for the recommended
// requests and limits, so `simulate` and `plan` place steps by measured size.
// An executor used by several steps gets the largest of their figures.
nlohmann::json ApplyRecommendations(const nlohmann::json& pipeline_spec,
                                    const ProfileReport& report);

}  // namespace kfpbench::plan
