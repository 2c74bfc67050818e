#include "plan/profile.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "ir/pipeline_spec.h"
#include "util/human.h"
#include "util/percentile.h"
#include "util/strings.h"
#include "util/units.h"

namespace kfpbench::plan {
namespace {

// A hair of tolerance, so 0.30000000004 cores stays 300m rather than 400m.
constexpr double kEpsilon = 1e-9;

std::string Seconds(Duration d) { return FormatDuration(d); }

}  // namespace

double RoundCpuUp(double cores) {
  double steps = std::ceil(std::max(cores, 0.0) / kCpuStepCores - kEpsilon);
  return std::max(1.0, steps) * kCpuStepCores;
}

int64_t RoundMemoryUp(int64_t bytes) {
  int64_t steps = (std::max<int64_t>(bytes, 0) + kMemoryStepBytes - 1) / kMemoryStepBytes;
  return std::max<int64_t>(1, steps) * kMemoryStepBytes;
}

std::string FormatCpu(double cores) {
  auto milli = static_cast<int64_t>(std::llround(cores * 1000));
  if (milli % 1000 == 0) return fmt::format("{}", milli / 1000);
  return fmt::format("{}m", milli);
}

std::string FormatMemory(int64_t bytes) {
  if (bytes % kGi == 0) return fmt::format("{}Gi", bytes / kGi);
  if (bytes % kMi == 0) return fmt::format("{}Mi", bytes / kMi);
  return fmt::format("{}", bytes);
}

Recommendation Recommend(const Usage& cpu, const Usage& memory, double headroom) {
  const double factor = 1.0 + headroom;
  Recommendation r;
  r.cpu_request = RoundCpuUp(cpu.p95 * factor);
  r.cpu_limit = std::max(r.cpu_request, RoundCpuUp(cpu.peak * factor));
  r.memory_request = RoundMemoryUp(static_cast<int64_t>(std::ceil(memory.p95 * factor)));
  r.memory_limit = std::max(r.memory_request,
                            RoundMemoryUp(static_cast<int64_t>(std::ceil(memory.peak * factor))));
  return r;
}

Result<NodeSize> ParseNodeSize(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return Error{fmt::format("--node-size '{}': {} (expected CPU,MEMORY such as 16cpu,56Gi)",
                             std::string(text), why)};
  };
  size_t comma = text.find(',');
  if (comma == std::string_view::npos) return bad("no comma");
  std::string cpu_text(TrimSpace(text.substr(0, comma)));
  std::string_view memory_text = TrimSpace(text.substr(comma + 1));
  if (cpu_text.ends_with("cpu")) cpu_text.resize(cpu_text.size() - 3);
  auto cpu = ir::ParseQuantityCpu(cpu_text);
  if (!cpu.ok() || !(*cpu > 0)) return bad("CPU must be a positive quantity");
  auto memory = ir::ParseQuantityMemory(memory_text);
  if (!memory.ok() || *memory <= 0) return bad("memory must be a positive quantity");
  return NodeSize{*cpu, *memory};
}

Fit JobsPerNode(const Recommendation& r, const NodeSize& node) {
  auto by_cpu = static_cast<int64_t>(std::floor(node.cpu / r.cpu_request + kEpsilon));
  int64_t by_memory = node.memory / r.memory_request;
  if (by_cpu <= by_memory) return {by_cpu, "cpu"};
  return {by_memory, "memory"};
}

ProfileReport BuildProfile(const std::vector<StepExecution>& executions,
                           const ProfileOptions& options) {
  ProfileReport report;
  report.options = options;
  struct Acc {
    StepProfile profile;
    std::vector<double> cpu, memory, durations;
    double cpu_peak = 0, memory_peak = 0, cpu_p95 = 0, memory_p95 = 0;
    double cpu_seconds = 0;
    bool summarised = false;
  };
  std::vector<Acc> steps;
  std::map<std::string, size_t> index;
  for (const auto& e : executions) {
    auto [it, fresh] = index.emplace(e.step, steps.size());
    if (fresh) {
      steps.emplace_back();
      steps.back().profile.step = e.step;
      steps.back().profile.executor_label = e.executor_label;
    }
    Acc& a = steps[it->second];
    ++a.profile.executions;
    a.durations.push_back(std::chrono::duration<double>(e.duration).count());
    a.cpu_seconds += e.cpu_seconds;
    a.cpu.insert(a.cpu.end(), e.cpu_cores.begin(), e.cpu_cores.end());
    a.memory.insert(a.memory.end(), e.memory_bytes.begin(), e.memory_bytes.end());
    a.profile.samples += std::max(e.cpu_cores.size(), e.memory_bytes.size());
    a.summarised |= e.cpu_summary.has_value() || e.memory_summary.has_value();
    // Summaries without samples (Prometheus peaks): the largest wins.
    if (e.cpu_cores.empty() && e.cpu_summary) {
      a.cpu_peak = std::max(a.cpu_peak, e.cpu_summary->peak);
      a.cpu_p95 = std::max(a.cpu_p95, e.cpu_summary->p95);
    }
    if (e.memory_bytes.empty() && e.memory_summary) {
      a.memory_peak = std::max(a.memory_peak, e.memory_summary->peak);
      a.memory_p95 = std::max(a.memory_p95, e.memory_summary->p95);
    }
  }
  for (auto& a : steps) {
    StepProfile& p = a.profile;
    p.cpu_cores.peak = a.cpu.empty() ? a.cpu_peak : std::max(a.cpu_peak, Percentile(a.cpu, 100));
    p.cpu_cores.p95 = a.cpu.empty() ? a.cpu_p95 : std::max(a.cpu_p95, Percentile(a.cpu, 95));
    p.memory_bytes.peak =
        a.memory.empty() ? a.memory_peak : std::max(a.memory_peak, Percentile(a.memory, 100));
    p.memory_bytes.p95 =
        a.memory.empty() ? a.memory_p95 : std::max(a.memory_p95, Percentile(a.memory, 95));
    p.duration_p50 = std::chrono::duration_cast<Duration>(
        std::chrono::duration<double>(Percentile(a.durations, 50)));
    p.duration_max = std::chrono::duration_cast<Duration>(
        std::chrono::duration<double>(Percentile(a.durations, 100)));
    p.cpu_seconds_mean = p.executions ? a.cpu_seconds / p.executions : 0;
    p.no_data = p.samples == 0 && !a.summarised;
    p.recommended = Recommend(p.cpu_cores, p.memory_bytes, options.headroom);
    if (options.node) {
      p.fit = JobsPerNode(p.recommended, *options.node);
      if (report.bottleneck_step.empty() || p.fit->jobs < report.bottleneck_jobs) {
        report.bottleneck_step = p.step;
        report.bottleneck_jobs = p.fit->jobs;
      }
    }
    report.steps.push_back(std::move(p));
  }
  return report;
}

std::string DescribeRule(double headroom) {
  return fmt::format(
      "Rule: request = p95 x {0:g}, limit = peak x {0:g} ({1:g}% headroom); CPU rounded up to "
      "100m, memory up to 64Mi (at least 100m and 64Mi); a limit is never below its request.",
      1 + headroom, headroom * 100);
}

std::string Describe(const ProfileReport& r) {
  std::ostringstream out;
  out << fmt::format("Profile of {} ({}, {}", r.pipeline, r.source, Plural(r.repeats, "run"));
  if (r.sample_interval_ms > 0) out << fmt::format(", sampled every {:g} ms", r.sample_interval_ms);
  out << ")\n\n";
  out << fmt::format("{:<20} {:>4} {:>9} {:>9} {:>9} {:>10} {:>10} {:>7}  {:>7} {:>7} {:>7} {:>7}",
                     "step", "runs", "duration", "cpu peak", "cpu p95", "mem peak", "mem p95",
                     "samples", "cpu req", "cpu lim", "mem req", "mem lim");
  if (r.options.node) out << fmt::format(" {:>10}", "jobs/node");
  out << "\n";
  for (const auto& s : r.steps) {
    out << fmt::format(
        "{:<20} {:>4} {:>9} {:>9.2f} {:>9.2f} {:>10} {:>10} {:>7}  {:>7} {:>7} {:>7} {:>7}", s.step,
        s.executions, Seconds(s.duration_p50), s.cpu_cores.peak, s.cpu_cores.p95,
        fmt::format("{:.0f}Mi", s.memory_bytes.peak / kMi),
        fmt::format("{:.0f}Mi", s.memory_bytes.p95 / kMi), s.samples,
        FormatCpu(s.recommended.cpu_request), FormatCpu(s.recommended.cpu_limit),
        FormatMemory(s.recommended.memory_request), FormatMemory(s.recommended.memory_limit));
    if (s.fit) out << fmt::format(" {:>6} ({})", s.fit->jobs, s.fit->limited_by);
    out << "\n";
  }
  out << "\n(duration: median over runs; cpu in cores; samples: readings taken while it ran)\n";
  for (const auto& s : r.steps) {
    if (s.no_data) {
      out << fmt::format(
          "Step {} ended before its first sample: its figures are unknown, its recommendation "
          "the minimum.\n",
          s.step);
    }
  }
  for (const auto& s : r.steps) {
    if (s.accelerator.empty()) continue;
    out << fmt::format(
        "Step {} asks for {} {} (the pipeline's accelerator: requested, not sampled; kept in the "
        "sized pipeline).\n",
        s.step, s.accelerator_count, s.accelerator);
  }
  out << DescribeRule(r.options.headroom) << "\n";
  if (r.options.node && !r.bottleneck_step.empty()) {
    out << fmt::format(
        "Node {}: the bottleneck step is {}: {} fit on one node by their requests, the fewest of "
        "any step.\n",
        r.options.node_text, r.bottleneck_step, r.bottleneck_jobs);
  }
  if (r.pipeline_fit) {
    const PipelineFit& f = *r.pipeline_fit;
    std::string tasks;
    for (const auto& t : f.tasks) tasks += (tasks.empty() ? "" : ", ") + t;
    out << fmt::format(
        "Node {}: {} whole pipelines fit at once, limited by {} at their widest level ({}: {} "
        "CPU, {} requested together).\n",
        r.options.node_text, f.pipelines, f.limited_by, tasks, FormatCpu(f.cpu_request),
        FormatMemory(f.memory_request));
  }
  return out.str();
}

nlohmann::json ToJson(const ProfileReport& r) {
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& s : r.steps) {
    nlohmann::json j = {
        {"step", s.step},
        {"executor_label", s.executor_label},
        {"executions", s.executions},
        {"duration_p50_s", std::chrono::duration<double>(s.duration_p50).count()},
        {"duration_max_s", std::chrono::duration<double>(s.duration_max).count()},
        {"cpu_cores", {{"peak", s.cpu_cores.peak}, {"p95", s.cpu_cores.p95}}},
        {"memory_bytes", {{"peak", s.memory_bytes.peak}, {"p95", s.memory_bytes.p95}}},
        {"samples", s.samples},
        {"cpu_seconds_mean", s.cpu_seconds_mean},
        {"recommended",
         {{"cpu_request", FormatCpu(s.recommended.cpu_request)},
          {"cpu_limit", FormatCpu(s.recommended.cpu_limit)},
          {"memory_request", FormatMemory(s.recommended.memory_request)},
          {"memory_limit", FormatMemory(s.recommended.memory_limit)}}},
    };
    if (s.fit) j["jobs_per_node"] = {{"jobs", s.fit->jobs}, {"limited_by", s.fit->limited_by}};
    if (!s.accelerator.empty()) {
      j["accelerator"] = {{"type", s.accelerator}, {"count", s.accelerator_count}};
    }
    steps.push_back(std::move(j));
  }
  nlohmann::json j = {{"kind", "kfpbench-profile"},
                      {"version", 1},
                      {"pipeline", r.pipeline},
                      {"source", r.source},
                      {"repeats", r.repeats},
                      {"headroom", r.options.headroom},
                      {"rule", DescribeRule(r.options.headroom)},
                      {"steps", std::move(steps)}};
  if (r.sample_interval_ms > 0) j["sample_interval_ms"] = r.sample_interval_ms;
  if (r.options.node) {
    j["node"] = {{"text", r.options.node_text},
                 {"cpu", r.options.node->cpu},
                 {"memory_bytes", r.options.node->memory}};
    j["bottleneck"] = {{"step", r.bottleneck_step}, {"jobs_per_node", r.bottleneck_jobs}};
  }
  if (r.pipeline_fit) {
    j["pipelines_per_node"] = {{"pipelines", r.pipeline_fit->pipelines},
                               {"level", r.pipeline_fit->tasks},
                               {"cpu_request", FormatCpu(r.pipeline_fit->cpu_request)},
                               {"memory_request", FormatMemory(r.pipeline_fit->memory_request)},
                               {"limited_by", r.pipeline_fit->limited_by}};
  }
  return j;
}

nlohmann::json ApplyRecommendations(const nlohmann::json& pipeline_spec,
                                    const ProfileReport& report) {
  nlohmann::json spec = pipeline_spec;
  std::map<std::string, Recommendation> by_label;
  for (const auto& s : report.steps) {
    if (s.executor_label.empty()) continue;
    auto [it, fresh] = by_label.emplace(s.executor_label, s.recommended);
    if (fresh) continue;
    Recommendation& r = it->second;
    r.cpu_request = std::max(r.cpu_request, s.recommended.cpu_request);
    r.cpu_limit = std::max(r.cpu_limit, s.recommended.cpu_limit);
    r.memory_request = std::max(r.memory_request, s.recommended.memory_request);
    r.memory_limit = std::max(r.memory_limit, s.recommended.memory_limit);
  }
  auto executors = spec.find("deploymentSpec");
  if (executors == spec.end() || !executors->contains("executors")) return spec;
  for (auto& [label, executor] : (*executors)["executors"].items()) {
    auto it = by_label.find(label);
    if (it == by_label.end() || !executor.contains("container")) continue;
    const Recommendation& r = it->second;
    nlohmann::json resources = {
        {"resourceCpuRequest", FormatCpu(r.cpu_request)},
        {"resourceCpuLimit", FormatCpu(r.cpu_limit)},
        {"resourceMemoryRequest", FormatMemory(r.memory_request)},
        {"resourceMemoryLimit", FormatMemory(r.memory_limit)},
    };
    // The accelerator is asked for, not measured: the sized step keeps it.
    const nlohmann::json& old = executor["container"]["resources"];
    if (old.is_object() && old.contains("accelerator"))
      resources["accelerator"] = old["accelerator"];
    executor["container"]["resources"] = std::move(resources);
  }
  return spec;
}

}  // namespace kfpbench::plan
