#include "cli/commands.h"

#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "exec/artifact_store.h"
#include "plan/answer.h"
#include "plan/calibration.h"
#include "plan/capacity_page.h"
#include "plan/plan.h"
#include "sim/arrivals.h"
#include "sim/config.h"
#include "sim/replications.h"
#include "sim/simulator.h"

namespace kfpbench::cli {

Command AddSimulateCommand(CLI::App& app) {
  struct Flags {
    std::string cluster;
    std::string workload;
    std::string out = "simulation.json";
    int64_t runs = 0;
    int64_t concurrency = 0;
    double arrival_scale = 0;  // 0: as recorded
    bool quiet = false;
    std::string html;
    int replications = 10;
  };
  auto f = std::make_shared<Flags>();
  auto* cmd = app.add_subcommand(
      "simulate", "predict makespan, run durations and nodes for a workload on a cluster");
  cmd->add_option("cluster", f->cluster, "CLUSTER.yaml: node pools and autoscaler")->required();
  cmd->add_option("workload", f->workload, "WORKLOAD.yaml: pipeline, arrivals, step durations")
      ->required();
  cmd->add_option("--out", f->out, "JSON output file")->capture_default_str();
  cmd->add_option("--runs", f->runs, "override the workload's run count")->check(CountAboveZero());
  cmd->add_option("--concurrency", f->concurrency,
                  "closed loop: keep this many runs in flight, the next starting when one ends "
                  "(overrides the workload's arrivals)")
      ->check(CountAboveZero());
  cmd->add_option("--arrival-scale", f->arrival_scale,
                  "F times the workload's runs over the same time (\"Monday x 3\"): each CSV "
                  "arrival stands for F runs spread over the gap to the next, a rate is "
                  "multiplied")
      ->check(GreaterThanZero());
  cmd->add_option("--replications", f->replications,
                  "also simulate this many seeds (the workload's and the next) and say how far "
                  "the makespan, run p95 and pending p95 move between them; 1: the workload's "
                  "seed alone. Only when step times or branches are drawn")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  cmd->add_flag("--quiet", f->quiet, "no console summary");
  cmd->add_option("--html", f->html,
                  "also write a self-contained HTML page: nodes, CPU and waiting work over time");
  auto run = [f]() -> int {
    auto cluster = sim::LoadCluster(f->cluster);
    if (!cluster.ok()) return Fail(cluster.error().message, kExitBadInput);
    auto workload = sim::LoadWorkload(f->workload);
    if (!workload.ok()) return Fail(workload.error().message, kExitBadInput);
    if (f->runs > 0) workload->runs = f->runs;
    if (f->concurrency > 0) {
      workload->arrival_kind = sim::WorkloadSpec::ArrivalKind::kClosed;
      workload->concurrency = f->concurrency;
    }
    if (f->arrival_scale > 0) {
      if (auto st = sim::ScaleArrivals(*workload, f->arrival_scale); !st.ok()) {
        return Fail("--arrival-scale: " + st.error().message, kExitBadInput);
      }
    }
    auto result = sim::Simulate(*cluster, *workload);
    if (!result.ok()) return Fail(result.error().message, kExitBadInput);
    // How sure: the same workload over more seeds, when anything in it is
    // drawn from the seed (otherwise every seed gives the same figures).
    std::optional<sim::Spread> spread;
    if (f->replications > 1 && plan::IsRandom(*workload)) {
      auto s = sim::SimulateReplications(*cluster, *workload, f->replications);
      if (!s.ok()) return Fail(s.error().message, kExitBadInput);
      spread = *s;
    }
    nlohmann::json extra = nlohmann::json::object();
    if (spread) extra["spread"] = sim::ToJson(*spread);
    if (auto st = sim::WriteResultJson(*result, f->out, extra); !st.ok()) {
      return Fail(st.error().message, kExitFailed);
    }
    // A calibration that could not decide says so beside the answer, and
    // one whose unseen levels were missed by 5-60% gets figures no finer
    // than that.
    const std::string warning = plan::UndecidedWarning(f->workload);
    const double error = plan::UnseenError(f->workload);
    const std::string summary = sim::Summary(*result, error) +
                                (spread ? sim::DescribeSpread(*spread, error) : "") + warning +
                                plan::PrecisionNote(error);
    if (!f->html.empty()) {
      plan::CapacityPage page{"kfpbench simulate " + f->workload, summary, nullptr, &*result};
      if (auto st = plan::WriteCapacityPage(page, f->html); !st.ok()) {
        return Fail(st.error().message, kExitFailed);
      }
    }
    if (!f->quiet) std::cout << summary << "results     " << f->out << "\n";
    if (!f->quiet && !f->html.empty()) std::cout << "page        " << f->html << "\n";
    return result->failed > 0 ? kExitFailed : kExitOk;
  };
  return {cmd, run};
}

namespace {

// calibrate's options for a summary-levels file.
void AddSummaryFitOptions(CLI::App& cmd, std::string& html, double& fit_seconds) {
  cmd.add_option("--html", html,
                 "with summary levels, also write a page: each level's makespan measured and "
                 "predicted, the near-equal fits' band, and the errors on levels not fitted");
  cmd.add_option("--fit-seconds", fit_seconds,
                 "with summary levels, the whole search's time (grid, refinement, the "
                 "near-equal set's edges); what it cuts short is left out and said so")
      ->check(CLI::Range(1.0, 86400.0))
      ->capture_default_str();
}

}  // namespace

Command AddCalibrateCommand(CLI::App& app) {
  struct Flags {
    std::vector<std::string> results;
    std::string pipeline;
    std::string cluster;
    std::vector<std::string> artifact_bytes;
    std::string sharing = "fair";
    std::string out = "calibration.json";
    std::string html;
    double fit_seconds = 120;
  };
  auto f = std::make_shared<Flags>();
  auto* cmd = app.add_subcommand(
      "calibrate",
      "fit the simulator's step durations and overhead from measured runs, and with two or "
      "more load levels the artifact store's bandwidth; or fit the step split, overhead and "
      "autoscaler delay to levels given as summary figures");
  cmd->add_option("results", f->results,
                  "RESULTS_DIR (or its results.json), one per load level: step models come from "
                  "the lightest, shared services are fitted to all; or one SUMMARY.json of "
                  "levels given as runs, nodes and makespan (docs/CAPACITY.md), which a "
                  "results.json beside it pins the step split of")
      ->required();
  cmd->add_option("--pipeline", f->pipeline,
                  "the pipeline the runs ran, to fit each executor label on its own");
  cmd->add_option("--cluster", f->cluster,
                  "CLUSTER.yaml the levels ran on (for the embedded backend, the one given to "
                  "run --cluster): needed to fit shared services");
  cmd->add_option("--artifact-bytes", f->artifact_bytes,
                  "what a step uploads to the artifact store, LABEL=SIZE (e.g. exec-train=1Gi); "
                  "with two or more levels the store's bandwidth is fitted");
  cmd->add_option("--artifact-sharing", f->sharing,
                  "how the store shares its bandwidth: fair (uploads in progress share it "
                  "equally) or fifo (one at a time)")
      ->check(CLI::IsMember({"fair", "fifo"}))
      ->capture_default_str();
  cmd->add_option("--out", f->out, "calibration file for simulate (workload `calibration:`)")
      ->capture_default_str();
  AddSummaryFitOptions(*cmd, f->html, f->fit_seconds);
  auto run = [f]() -> int {
    plan::CalibrationRequest request;
    request.summary_options.max_seconds = f->fit_seconds;
    request.html = f->html;
    request.results.assign(f->results.begin(), f->results.end());
    request.pipeline = f->pipeline;
    request.cluster = f->cluster;
    request.fifo = f->sharing == "fifo";
    request.out = f->out;
    for (const auto& text : f->artifact_bytes) {
      auto labeled = exec::ParseLabeledBytes(text);
      if (!labeled.ok() || labeled->first.empty()) {
        return Fail(fmt::format(
            "--artifact-bytes '{}': expected LABEL=SIZE, such as exec-train=1Gi", text));
      }
      request.artifact_bytes[labeled->first] = labeled->second;
    }
    const bool shared = f->results.size() > 1 && !request.artifact_bytes.empty();
    if (shared && f->cluster.empty()) {
      return Fail(
          "--cluster: fitting the artifact store replays each level on the cluster it "
          "ran on; name it");
    }
    if (shared && f->pipeline.empty()) {
      return Fail(
          "--pipeline: fitting the artifact store replays each level's runs; name the "
          "pipeline they ran");
    }
    auto c = plan::CalibrateFromFiles(request);
    if (!c.ok()) return Fail(c.error().message, c.error().BadInput() ? kExitBadInput : kExitFailed);
    std::cout << plan::Describe(*c, request) << "written     " << f->out << "\n";
    if (!f->html.empty())
      std::cout << "page        "
                << (c->summary ? f->html : "not written: --html draws summary levels; none given")
                << "\n";
    return kExitOk;
  };
  return {cmd, run};
}

Command AddPlanCommand(CLI::App& app) {
  struct Flags {
    std::string cluster;
    std::string workload;
    int64_t runs = 0;
    int nodes = 0;
    Duration within{0};  // zero: not given
    std::string out;
    std::string html;
    plan::Replications reps;
    int max_replications = 0;  // 0: 400, or --replications when that is more
    double arrival_scale = 0;  // 0: not given
    std::string slo;           // empty: the question's default figure
  };
  auto f = std::make_shared<Flags>();
  auto* cmd = app.add_subcommand(
      "plan",
      "answer a capacity question by search over the simulator: give two of --runs, --nodes, "
      "--within and get the third");
  cmd->add_option("cluster", f->cluster, "CLUSTER.yaml (its first pool is the node size)")
      ->required();
  cmd->add_option("workload", f->workload,
                  "WORKLOAD.yaml (arrivals ignored, all at once, unless --arrival-scale)")
      ->required();
  cmd->add_option("--runs", f->runs, "how many runs")->check(CountAboveZero());
  cmd->add_option("--nodes", f->nodes, "how many nodes")->check(CountAboveZero());
  AddPositiveDurationOption(*cmd, "--within", f->within, "time allowed, e.g. 2h");
  cmd->add_option("--arrival-scale", f->arrival_scale,
                  "instead of --runs: the workload's own arrivals carrying F times their runs "
                  "(a capture's day x 3: each recorded arrival stands for F runs, bursts where "
                  "they were), simulated as they arrive; --within then holds the run p95 "
                  "unless --slo says otherwise")
      ->check(GreaterThanZero());
  cmd->add_option("--slo", f->slo,
                  "the figure --within holds: makespan (default with --runs), run-p95 (default "
                  "with --arrival-scale) or wait-p95 (tasks' queue wait, ready to placed)")
      ->check(CLI::IsMember({"makespan", "run-p95", "wait-p95"}));
  cmd->add_option("--replications", f->reps.count,
                  "simulate every probe with this many seeds first (the workload's seed, +1, "
                  "...); a probe judged against --within then doubles them until decided")
      ->capture_default_str();
  cmd->add_option("--max-replications", f->max_replications,
                  "the cap: a probe whose interval still straddles the quantile here is "
                  "reported undecided (default 400, or --replications if more)")
      ->check(CLI::Range(1, 100000));
  AddParsedOption(*cmd, "--confidence", f->reps.confidence, plan::ParseQuantile,
                  "of the Wilson interval a probe is decided by: 0.95, 95%", "95%", "TEXT");
  AddParsedOption(*cmd, "--quantile", f->reps.quantile, plan::ParseQuantile,
                  "answers hold for this share of the replications: 0.9, 90% or P90", "P90",
                  "TEXT");
  cmd->add_option("--threads", f->reps.threads,
                  "replications simulated at once (0: one per hardware thread); memory grows "
                  "with it, as each holds its own runs")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  cmd->add_option("--out", f->out, "also write the answer as JSON here");
  cmd->add_option("--html", f->html,
                  "also write a self-contained HTML page: makespan (quantile, median, band of the "
                  "replications) and run time versus runs and versus nodes around the answer, "
                  "with T and the answer marked, and the cluster over time");
  auto run = [f]() -> int {
    if (f->arrival_scale > 0 && f->runs > 0) {
      return Fail("give --runs or --arrival-scale, not both", kExitBadInput);
    }
    int given =
        (f->runs > 0 || f->arrival_scale > 0) + (f->nodes > 0) + (f->within > Duration::zero());
    if (given != 2) return Fail("give exactly two of --runs, --nodes and --within", kExitBadInput);
    f->reps.max =
        f->max_replications > 0 ? f->max_replications : std::max(f->reps.max, f->reps.count);
    if (auto st = plan::CheckReplications(f->reps); !st.ok()) {
      return Fail("--replications: " + st.error().message, kExitBadInput);
    }
    plan::Question question;
    question.cluster = f->cluster;
    question.workload = f->workload;
    question.runs = f->runs;
    question.nodes = f->nodes;
    question.within = f->within;
    question.replications = f->reps;
    question.arrival_scale = f->arrival_scale;
    if (!f->slo.empty()) {
      auto metric = plan::ParseMetric(f->slo);
      if (!metric.ok()) return Fail("--slo " + metric.error().message, kExitBadInput);
      question.metric = *metric;
    }
    auto a = plan::AnswerQuestion(question, {f->out, f->html}, [](const plan::Answer& answer) {
      std::cout << plan::Describe(answer);
    });
    if (!a.ok()) return Fail(a.error().message, a.error().BadInput() ? kExitBadInput : kExitFailed);
    if (!f->html.empty()) std::cout << "page        " << f->html << "\n";
    return kExitOk;
  };
  return {cmd, run};
}

}  // namespace kfpbench::cli
