#include <algorithm>
#include <cmath>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/caveats.h"
#include "report/failures.h"
#include "report/reporter.h"
#include "util/time.h"

namespace kfpbench::report {
namespace {

// Each value in the unit that shows it (42us, 3.1ms, 1.52s, 2m5s): a fixed
// unit prints a 30 us call as 0.0 ms. Saturated, never overflowed: a
// results.json from elsewhere, or an extrapolation far past what was measured
// (1.2e17 us seen under UBSan), can hold more than int64 nanoseconds do.
std::string Us(double us) {
  if (std::fabs(us) < 9e12) {
    return FormatDuration(std::chrono::microseconds(static_cast<int64_t>(us)));
  }
  return FormatDuration(FromSeconds(us / 1e6));
}

std::string Ms(double ms) { return Us(ms * 1000); }

// The columns every table of calls has: count, errors, rate and latency.
void OperationHeader(std::ostream& out) {
  out << fmt::format("{:<22} {:>7} {:>7} {:>8} {:>8} {:>8} {:>8} {:>8}\n", "operation", "count",
                     "errors", "rps", "p50", "p95", "p99", "max");
}

void OperationRow(std::ostream& out, std::string_view name, const metrics::Histogram& h,
                  uint64_t errors, double seconds) {
  out << fmt::format("{:<22} {:>7} {:>7} {:>8.1f} {:>8} {:>8} {:>8} {:>8}\n", name, h.count(),
                     errors, seconds > 0 ? h.count() / seconds : 0.0, Us(h.ValueAtPercentile(50)),
                     Us(h.ValueAtPercentile(95)), Us(h.ValueAtPercentile(99)), Us(h.max()));
}

std::string Exponent(const std::optional<results::PowerLawFit>& fit) {
  if (!fit) return "-";
  std::string interval =
      fit->exponent_low ? fmt::format(" [{:.2f}, {:.2f}]", *fit->exponent_low, *fit->exponent_high)
                        : " [2 levels: no interval]";
  return fmt::format("{:.2f}{} {}", fit->exponent, interval, fit->verdict);
}

// Per growth scenario: the levels (fill and what the target stored), each
// operation's p50/p99 per level, and the fits.
void GrowthSection(std::ostream& out, const results::BenchmarkResults& r) {
  for (const auto& curve : r.growth) {
    out << fmt::format(
        "\nGrowth, scenario {} (objects: runs stored, as ListRuns total_size says)\n",
        curve.scenario);
    out << fmt::format("{:>10} {:>10} {:>12} {:>11} {:>9} {:>10} {:>9} {:>11}\n", "level", "stored",
                       "experiments", "runs filled", "fill (s)", "objects/s", "unsettled",
                       "measure (s)");
    for (const auto& l : curve.levels) {
      out << fmt::format("{:>10} {:>10} {:>12} {:>11} {:>9.1f} {:>10.1f} {:>9} {:>11.1f}\n",
                         l.target_runs, l.runs_stored, l.experiments_stored, l.runs_created,
                         l.fill_seconds, l.FillRatePerSecond(), l.unsettled_runs,
                         l.measure_seconds);
    }
    out << fmt::format("{:<20}", "p50 / p99 (calls)");
    for (const auto& l : curve.levels) out << fmt::format(" {:>24}", l.runs_stored);
    out << "\n";
    for (auto op : results::kGrowthOperations) {
      out << fmt::format("{:<20}", op);
      for (const auto& l : curve.levels) {
        auto it = l.latency_us.find(std::string(op));
        std::string cell = "-";
        if (it != l.latency_us.end() && it->second.count() > 0) {
          cell = fmt::format("{} / {} ({})", Us(it->second.ValueAtPercentile(50)),
                             Us(it->second.ValueAtPercentile(99)), it->second.count());
        }
        out << fmt::format(" {:>24}", cell);
      }
      out << "\n";
    }
    auto fits = curve.Fits();
    if (!fits.empty()) {
      out << "Growth order: latency ~ runs^k, k by least squares on log-log with its 95% "
             "interval\n";
      for (const auto& [op, f] : fits) {
        std::string at;
        if (f.p99_at_extrapolation) {
          at = fmt::format("; p99 at {} runs ~{}", curve.extrapolate_to,
                           Us(*f.p99_at_extrapolation));
          if (f.p99_at_extrapolation_low) {
            at += fmt::format(" ({} to {})", Us(*f.p99_at_extrapolation_low),
                              Us(*f.p99_at_extrapolation_high));
          }
        }
        out << fmt::format("  {:<20} p50 k={}; p99 k={}{}\n", op, Exponent(f.p50), Exponent(f.p99),
                           at);
      }
    }
    if (!curve.stopped_because.empty()) {
      out << fmt::format("scenario {}: stopped: {}\n", curve.scenario, curve.stopped_because);
    }
  }
}

// The measured mix of every growth level, pooled per operation: the calls a
// growth scenario is about, apart from the fill's.
void MeasuredMixTable(std::ostream& out, const results::BenchmarkResults& r) {
  std::map<std::string, metrics::Histogram> pooled;
  std::map<std::string, uint64_t> errors;
  double seconds = 0;
  for (const auto& curve : r.growth) {
    for (const auto& l : curve.levels) {
      for (const auto& [op, h] : l.latency_us) pooled[op].Merge(h);
      for (const auto& [op, n] : l.errors) errors[op] += n;
      seconds += l.measure_seconds;
    }
  }
  if (pooled.empty()) return;
  out << fmt::format(
      "\nMeasured mix (every level's measure phase; the fill's calls are not in it)\n");
  OperationHeader(out);
  for (const auto& [op, h] : pooled) OperationRow(out, op, h, errors[op], seconds);
}

// What following the runs asked of the target, apart from the workload.
void ObserverSection(std::ostream& out, const results::BenchmarkResults& r, double elapsed) {
  const results::ObserverSummary& o = r.observer;
  if (!o.Used()) return;
  uint64_t workload = 0;
  for (const auto& [name, op] : r.operations) workload += op.latency_us.count();
  const uint64_t calls = o.Calls();
  const uint64_t runs = o.runs_by_listing + o.runs_by_polling;
  out << fmt::format(
      "\nObserver (kfpbench following its runs; not in the table above): {} calls, {:.1f}% of all "
      "calls, {:.2f} per run; budget {}\n",
      calls, calls + workload ? 100.0 * calls / (calls + workload) : 0.0,
      runs ? static_cast<double>(calls) / runs : 0.0,
      o.qps_budget > 0 ? fmt::format("{:g}/s", o.qps_budget) : std::string("unlimited"));
  for (const auto& [name, op] : o.operations) {
    OperationRow(out, name, op.latency_us, op.errors, elapsed);
  }
  out << fmt::format("{} runs' ends found by listing ({} sweeps), {} polled one by one{}\n",
                     o.runs_by_listing, o.list_sweeps, o.runs_by_polling,
                     o.polling_reason.empty() ? "" : " (" + o.polling_reason + ")");
  if (const auto& lag = o.observe_lag_ms; lag.count() > 0) {
    out << fmt::format(
        "observed after the server's finished_at: p50 {} ms, p95 {} ms, max {} ms (widens "
        "`observed` only; durations are the server's)\n",
        lag.ValueAtPercentile(50), lag.ValueAtPercentile(95), lag.max());
  }
}

void HarnessSection(std::ostream& out, const results::BenchmarkResults& r) {
  if (const auto& u = r.harness_usage; u.Measured()) {
    out << fmt::format(
        "kfpbench itself{}: {:.1f} s CPU over {:.1f} s ({:.2f} cores), peak memory {:.0f} MiB, {} "
        "thread{}\n",
        r.target.embedded ? " (with the embedded backend)" : "", u.cpu_user_s + u.cpu_system_s,
        u.wall_s, u.CpuCores(), u.peak_rss_bytes / 1048576.0, u.threads, u.threads == 1 ? "" : "s");
  }
}

void Heading(std::ostream& out, const results::BenchmarkResults& r, double elapsed) {
  out << fmt::format("\nkfpbench {} against {}{} — {:.1f} s{}\n", r.kfpbench_version, r.target.url,
                     r.target.embedded ? " (embedded backend)" : "", elapsed,
                     r.partial ? " — PARTIAL" : "");
  if (!r.target.origin.empty()) out << "Target: " << r.target.origin << "\n";
  if (!r.target.namespace_.empty()) out << "Namespace: " << r.target.namespace_ << "\n";
  // What changes the meaning of every figure below, first (as every report has it).
  auto caveats = CaveatsOf(r);
  if (!caveats.empty()) out << "Caveats:\n";
  for (const auto& c : caveats) out << "  - " << c.text << "\n";
}

// What of the table above the fill and its settling made: every call less
// the measured mix's, per operation (counts; their latencies are in the
// table, mixed, and the measured mix's alone in its own). The mix's variants
// of an operation (ListRuns:deep) are calls of the operation (ListRuns).
void FillCallsLine(std::ostream& out, const results::BenchmarkResults& r) {
  std::map<std::string, uint64_t> measured;
  for (const auto& curve : r.growth) {
    for (const auto& l : curve.levels) {
      for (const auto& [op, h] : l.latency_us) measured[op.substr(0, op.find(':'))] += h.count();
    }
  }
  std::vector<std::string> parts;
  for (const auto& [name, op] : r.operations) {
    uint64_t all = op.latency_us.count(), mix = measured[name];
    if (all > mix) parts.push_back(fmt::format("{} {}", name, all - mix));
  }
  out << fmt::format(
      "Of these, the fill and its settling made: {}\n",
      parts.empty() ? std::string("none") : fmt::format("{}", fmt::join(parts, ", ")));
}

void OperationsTable(std::ostream& out, const results::BenchmarkResults& r, double elapsed,
                     bool growth) {
  out << (growth ? "\nAll API calls, every phase (fill, settling and the measured mix together; "
                   "percentiles by nearest rank, <=0.78% bucket error)\n"
                 : "\nAPI calls (latency; percentiles by nearest rank, <=0.78% bucket error)\n");
  OperationHeader(out);
  for (const auto& [name, op] : r.operations) {
    OperationRow(out, name, op.latency_us, op.errors, elapsed);
  }
  if (growth) FillCallsLine(out, r);
}

// The fill's runs are created, not followed one by one: "0 submitted" after
// thousands of CreateRun calls would read as nothing happened.
void GrowthRunsLine(std::ostream& out, const results::BenchmarkResults& r) {
  int64_t filled = 0;
  uint64_t measured = 0;
  for (const auto& curve : r.growth) {
    for (const auto& l : curve.levels) {
      filled += l.runs_created;
      if (auto it = l.latency_us.find("CreateRun"); it != l.latency_us.end()) {
        measured += it->second.count();
      }
    }
  }
  out << fmt::format(
      "\nRuns: {} created by the growth fill and {} by its measured mix (not followed one by "
      "one; see Growth)\n",
      filled, measured);
}

// The runs followed: how they ended, and their durations and queue waits.
void RunsTable(std::ostream& out, const results::BenchmarkResults& r,
               const metrics::Histogram& durations) {
  std::map<std::string, int> by_state;
  int not_created = 0;
  for (const auto& run : r.runs) {
    if (NotCreated(run)) {
      ++not_created;
    } else {
      by_state[std::string(RuntimeStateName(run.state))]++;
    }
  }
  const metrics::Histogram waits = r.QueueWaitsMs();
  out << fmt::format("\nRuns: {} submitted", r.runs.size() - not_created);
  for (const auto& [state, n] : by_state) out << fmt::format(", {} {}", n, state);
  if (not_created > 0) out << fmt::format("; {} not created (CreateRun failed)", not_created);
  out << "\n";
  out << fmt::format("{:<22} {:>7} {:>8} {:>8} {:>8} {:>8} {:>8}\n", "(duration)", "count", "min",
                     "p50", "p95", "p99", "max");
  for (const auto& [label, h] :
       {std::pair{"run duration", &durations}, std::pair{"queue wait", &waits}}) {
    out << fmt::format("{:<22} {:>7} {:>8} {:>8} {:>8} {:>8} {:>8}\n", label, h->count(),
                       Ms(h->min()), Ms(h->ValueAtPercentile(50)), Ms(h->ValueAtPercentile(95)),
                       Ms(h->ValueAtPercentile(99)), Ms(h->max()));
  }
}

// One line each for what qualifies the run figures: start delays of an
// open loop, and the schedules' fires (cache hits are caveats, CaveatsOf).
void RunNotes(std::ostream& out, const results::BenchmarkResults& r) {
  if (auto delays = r.StartDelaysMs(); delays.count() > 0) {
    out << fmt::format(
        "open loop: start delay p50 {} ms, p99 {} ms, max {} ms; {} of {} runs started more than "
        "{} ms late\n",
        delays.ValueAtPercentile(50), delays.ValueAtPercentile(99), delays.max(), r.LateStarts(),
        delays.count(), results::BenchmarkResults::kLateStart.count());
  }
  for (const auto& s : r.schedules) {
    auto lags = r.TriggerLagsMs();
    out << fmt::format(
        "scheduled runs [{}]: {} schedules, {} fires expected, {} made, {} missed; trigger lag "
        "p50 {} ms, max {} ms\n",
        s.scenario, s.recurring_runs, s.expected_fires, s.observed_fires, s.Missed(),
        lags.ValueAtPercentile(50), lags.max());
  }
}

void StressSection(std::ostream& out, const results::BenchmarkResults& r) {
  if (r.stress_steps.empty()) return;
  out << "\nStress steps (latency from intended start)\n";
  out << fmt::format("{:<9} {:>12} {:>7} {:>7} {:>10} {:>8}  {}\n", "scenario", "runs/min", "runs",
                     "failed", "p95 (s)", "errors", "SLO");
  for (const auto& s : r.stress_steps) {
    out << fmt::format("{:<9} {:>12.1f} {:>7} {:>7} {:>10.2f} {:>7.1f}%  {}\n", s.scenario,
                       s.rate_per_minute, s.runs, s.failed, s.p95_ms / 1000.0, s.error_rate * 100,
                       s.held ? "held" : "BROKEN");
  }
  for (const auto& stop : r.stress_stops) {
    double peak = r.StressPeakPerMinute(stop.scenario);
    bool broke = stop.reason == results::StressStopReason::kSloBroken;
    out << fmt::format("scenario {}: {}. {}\n", stop.scenario, stop.detail,
                       peak == 0 ? "No rate held."
                       : broke   ? fmt::format("Peak: {:g} runs/min.", peak)
                                 : fmt::format("Held up to {:g} runs/min; the peak is higher "
                                                 "than the search went.",
                                               peak));
  }
}

void ArtifactSection(std::ostream& out, const results::BenchmarkResults& r) {
  auto artifacts = r.ArtifactThroughput();
  if (artifacts.empty()) return;
  out << "\nArtifact throughput per step (artifact size / step duration, MiB/s)\n";
  out << fmt::format("{:<22} {:>7} {:>10} {:>8} {:>8} {:>8}\n", "step", "count", "size", "min",
                     "p50", "max");
  for (const auto& [step, t] : artifacts) {
    const auto& h = t.kib_per_s;
    out << fmt::format("{:<22} {:>7} {:>9.0f}M {:>8.1f} {:>8.1f} {:>8.1f}\n", step, h.count(),
                       t.artifact_bytes / 1048576.0, h.min() / 1024.0,
                       h.ValueAtPercentile(50) / 1024.0, h.max() / 1024.0);
  }
}

// Why calls failed and why runs did not succeed, then the benchmark's own
// errors and what it could not clean up.
void WhyItFailed(std::ostream& out, const results::BenchmarkResults& r) {
  bool heading = false;
  for (const auto& [name, op] : r.operations) {
    for (const auto& [message, n] : op.error_messages) {
      if (!heading) out << "\nWhy calls failed (the first distinct messages of each operation)\n";
      heading = true;
      out << fmt::format("  {} x{}: {}\n", name, n, message);
    }
  }
  std::map<std::string, int> run_errors;
  for (const auto& run : r.runs) {
    if (!run.error.empty() && !NotCreated(run)) run_errors[run.error]++;
  }
  if (!run_errors.empty()) out << "\nWhy runs did not succeed\n";
  int shown = 0;
  for (const auto& [message, n] : run_errors) {
    if (++shown > 5) {
      out << fmt::format("  ... and {} more distinct messages\n", run_errors.size() - 5);
      break;
    }
    out << fmt::format("  x{}: {}\n", n, message);
  }
  for (const auto& e : r.errors) out << "error: " << e << "\n";
  for (const auto& c : r.cleanup_failures) out << "not cleaned up: " << c << "\n";
}

// What the benchmark created on the target and whether it is gone.
void CreatedObjects(std::ostream& out, const results::BenchmarkResults& r) {
  if (r.benchmark_id.empty()) return;
  const auto& c = r.created;
  out << fmt::format(
      "\nOn the target, benchmark {} created {} pipeline(s), {} experiment(s), {} run(s) and {} "
      "recurring run(s); ",
      r.benchmark_id, c.pipelines, c.experiments, c.runs, c.recurring_runs);
  if (r.kept) {
    out << fmt::format("kept (--keep): kfpbench cleanup --benchmark-id {} deletes them\n",
                       r.benchmark_id);
  } else if (r.deleted.total() >= c.total() && r.cleanup_failures.empty()) {
    out << "all deleted\n";
  } else {
    out << fmt::format("deleted {} of {}; kfpbench cleanup --benchmark-id {} deletes the rest\n",
                       r.deleted.total(), c.total(), r.benchmark_id);
  }
}

}  // namespace

Status ConsoleReporter::Report(const results::BenchmarkResults& r) {
  double elapsed = ToSeconds(r.finished - r.started);
  Heading(out_, r, elapsed);
  // A growth scenario's results first: the levels and fits are what it
  // measured, and its fill dwarfs every other count.
  const bool growth = !r.growth.empty();
  if (growth) {
    GrowthSection(out_, r);
    MeasuredMixTable(out_, r);
  }
  OperationsTable(out_, r, elapsed, growth);
  ObserverSection(out_, r, elapsed);
  auto durations = r.RunDurationsMs();
  if (growth && r.runs.empty()) {
    GrowthRunsLine(out_, r);
  } else {
    RunsTable(out_, r, durations);
  }
  RunNotes(out_, r);
  StressSection(out_, r);
  ArtifactSection(out_, r);
  WhyItFailed(out_, r);
  CreatedObjects(out_, r);
  if (r.resent_requests > 0) {
    out_ << fmt::format(
        "resent: {} idempotent request(s) whose kept-alive connection closed as "
        "they went out (each call counted once above)\n",
        r.resent_requests);
  }
  HarnessSection(out_, r);
  out_.flush();
  return Ok();
}

}  // namespace kfpbench::report
