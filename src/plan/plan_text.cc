// What `plan` prints and writes of an answer: its JSON and its lines for the
// console (plan.h), apart from the searches that find it.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "plan/calibration.h"
#include "plan/plan.h"
#include "util/human.h"

namespace kfpbench::plan {

namespace {

nlohmann::json ProbeJson(const Probe& p, double confidence) {
  nlohmann::json seeds = nlohmann::json::array();
  for (Duration d : p.makespans) seeds.push_back(ToSeconds(d));
  nlohmann::json j = {{"nodes", p.nodes},
                      {"runs", p.runs},
                      {"makespan_seconds", ToSeconds(p.makespan)},
                      {"median_seconds", ToSeconds(p.median)},
                      {"min_seconds", ToSeconds(p.min)},
                      {"max_seconds", ToSeconds(p.max)},
                      {"replications", p.makespans.size()},
                      {"replication_makespans_seconds", seeds}};
  j["binds"] = sim::BindsKey(p.binding.what);
  if (p.verdict != Verdict::kNotJudged) {
    j["within"] = {
        {"replications", p.within.hits},
        {"probability", p.within.Estimate()},
        {"interval", {p.within.low, p.within.high}},
        {"interval_method", p.deterministic ? "exact: every replication the same" : "wilson"},
        {"confidence", confidence},
        {"verdict", VerdictName(p.verdict)},
        {"deterministic", p.deterministic}};
  }
  return j;
}

int64_t ReplicationsRun(const Answer& a) {
  int64_t n = 0;
  for (const Probe& p : a.probes) n += static_cast<int64_t>(p.makespans.size());
  return n;
}

}  // namespace

std::string BindsAt(const Probe& probe, const Analytic& analytic) {
  const sim::Binding& b = probe.binding;
  std::string text = b.text;
  if (b.what == sim::Binds::kCpu || b.what == sim::Binds::kMemory) {
    const bool memory = b.what == sim::Binds::kMemory;
    const std::string name = sim::BindsName(b.what);
    const std::string per_node =
        fmt::format(" ({} per node: {})", memory ? analytic.slots_by_memory : analytic.slots_by_cpu,
                    memory ? "memory" : "CPU");
    if (text.compare(0, name.size(), name) == 0) text.insert(name.size(), per_node);
  }
  if (b.what == sim::Binds::kResource) {
    // "nodes' nvidia.com/gpu (4 per node: nvidia.com/gpu)"
    const std::string name = "nodes' " + b.resource;
    auto slots = analytic.slots_by_resource.find(b.resource);
    if (slots != analytic.slots_by_resource.end() && text.compare(0, name.size(), name) == 0) {
      text.insert(name.size(), fmt::format(" ({} per node: {})", slots->second, b.resource));
    }
  }
  return text;
}

std::string Percent(double fraction) {
  // Truncated, so a share never shows as reaching a quantile it does not:
  // 89.99% is "89%", never "90%" beside P90.
  return fmt::format("{}%", static_cast<int64_t>(std::floor(fraction * 100 + 1e-9)));
}

namespace {

// "200 runs on 18 nodes", or on a recorded pattern "the recorded arrivals x3
// (330 runs) on 18 nodes".
std::string Where(const Probe& p, const Measure& m) {
  const std::string runs = m.recorded_arrivals ? fmt::format("the recorded arrivals x{:g} ({})",
                                                             m.arrival_scale, Plural(p.runs, "run"))
                                               : Plural(p.runs, "run");
  return runs + " on " + Plural(p.nodes, "node");
}

// "finish" / "keep run p95", and their negation.
std::string Verb(const Measure& m, bool holds) {
  if (m.metric == Metric::kMakespan) return holds ? "finish" : "do not finish";
  return fmt::format("{} {}", holds ? "keep" : "do not keep", MetricName(m.metric));
}

}  // namespace

std::string DescribeWithin(const Probe& p, Duration limit, const Replications& reps) {
  const std::string where = Where(p, reps.measure);
  const auto n = static_cast<int64_t>(p.makespans.size());
  if (p.deterministic) {
    return fmt::format(
        "{} {} within {}: {} in every one of {} (step times are constant, so "
        "each is the same simulation)",
        where, Verb(reps.measure, p.within.hits == n), FormatDurationExact(limit),
        FormatDurationAgainst(p.makespan, limit), Plural(n, "replication"));
  }
  std::string s =
      fmt::format("{} {} within {} in {} of replications ({:g}% interval {} to {}, Wilson; {})",
                  where, Verb(reps.measure, true), FormatDurationExact(limit),
                  Percent(p.within.Estimate()), reps.confidence * 100, Percent(p.within.low),
                  Percent(p.within.high), Plural(n, "replication"));
  switch (p.verdict) {
    case Verdict::kMeets:
      return s + ": at least " + QuantileName(reps.quantile);
    case Verdict::kMisses:
      return s + ": below " + QuantileName(reps.quantile);
    case Verdict::kUndecided:
      return s + fmt::format(": undecided against {} at the cap of {}", QuantileName(reps.quantile),
                             Plural(reps.max, "replication"));
    case Verdict::kNotJudged:
      break;
  }
  return s;
}

nlohmann::json ToJson(const Answer& a) {
  const double c = a.replications.confidence;
  nlohmann::json probes = nlohmann::json::array();
  for (const auto& p : a.probes) probes.push_back(ProbeJson(p, c));
  nlohmann::json j = {{"nodes", a.nodes},
                      {"runs", a.runs},
                      {"makespan_seconds", ToSeconds(a.makespan)},
                      {"replications", a.at_answer.makespans.size()},
                      {"replications_first_batch", a.replications.count},
                      {"replications_max", a.replications.max},
                      {"replications_all_probes", ReplicationsRun(a)},
                      {"quantile", a.replications.quantile},
                      {"metric", MetricName(a.replications.measure.metric)},
                      {"model_error", a.model_error},
                      {"confidence", c},
                      {"random", a.random},
                      {"at_answer", ProbeJson(a.at_answer, c)},
                      {"analytic",
                       {{"single_run_seconds", ToSeconds(a.analytic.single_run)},
                        {"single_run_from", "expected step times"},
                        {"width", a.analytic.width},
                        {"slots_per_node", a.analytic.slots_per_node},
                        {"slots_by_cpu", a.analytic.slots_by_cpu},
                        {"slots_by_memory", a.analytic.slots_by_memory},
                        {"runs_per_wave", a.analytic.runs_per_wave},
                        {"waves", a.analytic.waves},
                        {"time_seconds", ToSeconds(a.analytic.time)},
                        {"nodes", a.analytic_nodes},
                        {"runs", a.analytic_runs}}},
                      {"explanation", a.explanation},
                      {"bottleneck", a.bottleneck},
                      {"binds",
                       {{"what", sim::BindsKey(a.at_answer.binding.what)},
                        {"text", a.binds},
                        {"pending_share", a.at_answer.binding.pending_share},
                        {"provisioning_share", a.at_answer.binding.provisioning_share},
                        {"api_share", a.at_answer.binding.api_share},
                        {"store_share", a.at_answer.binding.store_share}}},
                      {"probes", probes}};
  if (!a.warning.empty()) j["warning"] = a.warning.substr(a.warning.find("THE DATA"));
  if (a.replications.measure.recorded_arrivals) {
    j["arrivals"] = "recorded";
    j["arrival_scale"] = a.replications.measure.arrival_scale;
  }
  // Only with resources beyond CPU and memory, so other answers read as before.
  for (const auto& [name, slots] : a.analytic.slots_by_resource) {
    j["analytic"]["slots_by_resource"][name] = slots;
  }
  if (!a.analytic.node_offers.empty()) j["node_offers"] = a.analytic.node_offers;
  if (a.at_answer.binding.what == sim::Binds::kResource) {
    j["binds"]["resource"] = a.at_answer.binding.resource;
  }
  if (a.deadline > Duration::zero()) {
    j["deadline_seconds"] = ToSeconds(a.deadline);
    j["replications_within_deadline"] = a.at_answer.Within(a.deadline);
    j["probability_within_deadline"] = a.at_answer.within.Estimate();
    j["probability_interval"] = {a.at_answer.within.low, a.at_answer.within.high};
    if (a.neighbour.verdict != Verdict::kNotJudged) j["neighbour"] = ProbeJson(a.neighbour, c);
  }
  return j;
}

std::string Describe(const Answer& a) {
  const Probe& p = a.at_answer;
  const std::string q = QuantileName(a.replications.quantile);
  std::string s;
  const auto n = static_cast<int64_t>(p.makespans.size());
  auto shown = [&](Duration d) {
    if (a.model_error > 0) return FormatDurationKnownTo(d, a.model_error);
    return a.deadline > Duration::zero() ? FormatDurationAgainst(d, a.deadline) : FormatDuration(d);
  };
  if (a.deadline > Duration::zero()) {
    s += "answer      " + DescribeWithin(p, a.deadline, a.replications) + "\n";
    s += a.warning;
    if (a.neighbour.verdict != Verdict::kNotJudged) {
      s += "next        " + DescribeWithin(a.neighbour, a.deadline, a.replications) + "\n";
    }
  }
  if (a.deadline == Duration::zero()) s += a.warning;
  // An answer in nodes is one in GPU nodes when the pool's nodes offer GPUs.
  std::string nodes = Plural(a.nodes, "node");
  if (!a.analytic.node_offers.empty()) nodes += " of " + a.analytic.node_offers;
  const Measure& m = a.replications.measure;
  const std::string runs = m.recorded_arrivals ? fmt::format("the recorded arrivals x{:g} ({})",
                                                             m.arrival_scale, Plural(a.runs, "run"))
                                               : Plural(a.runs, "run");
  // The makespan is the default figure and reads as before; any other is
  // named.
  const std::string figure =
      m.metric == Metric::kMakespan ? q : fmt::format("{} of {}", q, MetricName(m.metric));
  s += fmt::format("simulated   {} on {}: {} {}, median {}, range {} to {} ({})\n", runs, nodes,
                   figure, shown(a.makespan), shown(p.median), shown(p.min), shown(p.max),
                   Plural(n, "replication"));
  if (!m.recorded_arrivals) {
    s += fmt::format("analytic    {} of {} x {} expected single run = {} ({} wide, {} per node)\n",
                     Plural(a.analytic.waves, "wave"), Plural(a.analytic.runs_per_wave, "run"),
                     FormatDuration(a.analytic.single_run), shown(a.analytic.time),
                     Plural(a.analytic.width, "task"), a.analytic.slots_per_node);
  }
  // One node count is the answer; the waves formula's is a hand check, and
  // says so, so the two never read as two answers.
  if (a.analytic_nodes > 0) {
    s += fmt::format(
        "analytic    the waves formula alone asks {} (a hand check; the answer is the "
        "simulated {})\n",
        Plural(a.analytic_nodes, "node"), a.nodes);
  }
  if (a.analytic_runs > 0) {
    s += fmt::format(
        "analytic    the waves formula alone allows {} (a hand check; the answer is the "
        "simulated {})\n",
        Plural(a.analytic_runs, "run"), a.runs);
  }
  if (!a.explanation.empty()) s += "why         " + a.explanation + "\n";
  if (!a.bottleneck.empty() && a.explanation.find(a.bottleneck) == std::string::npos) {
    s += "bottleneck  " + a.bottleneck + "\n";
  }
  if (!a.binds.empty() && a.binds != a.bottleneck) s += "binds       " + a.binds + "\n";
  s += PrecisionNote(a.model_error);
  if (!a.random) {
    s += "spread      none: step times are constant and nothing branches, so every replication "
         "is the same simulation; the answer covers only what is modelled, not the variation "
         "of a real cluster\n";
  }
  s += fmt::format("searched    {}, {} in all",
                   Plural(static_cast<int64_t>(a.probes.size()), "probe"),
                   Plural(ReplicationsRun(a), "replication"));
  if (a.deadline > Duration::zero() && a.random) {
    s += fmt::format(
        " (each probe from {}, doubled up to {} until its {:g}% interval is "
        "above or below {})",
        a.replications.count, a.replications.max, a.replications.confidence * 100, q);
  }
  return s + "\n";
}

}  // namespace kfpbench::plan
