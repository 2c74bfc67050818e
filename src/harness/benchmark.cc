#include "harness/benchmark.h"

#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "harness/collector.h"
#include "harness/modes.h"
#include "harness/output_folder.h"
#include "harness/pod_collector.h"
#include "harness/shapes.h"
#include "report/failures.h"
#include "report/live_metrics.h"
#include "report/notify.h"
#include "report/repetitions.h"
#include "report/reporter.h"
#include "report/thresholds.h"
#include "report/write_reports.h"
#include "results/results_json.h"
#include "server/auth.h"
#include "util/ids.h"
#include "util/secrets.h"

namespace kfpbench::harness {
namespace {

constexpr auto kCollectorTimeout = std::chrono::seconds(60);

bool Interrupted(const std::atomic<bool>* flag) { return flag != nullptr && flag->load(); }

// One pass over the scenario file, with what surrounds it: collectors at
// start and end, the pods read before clean-up, Prometheus after the load.
results::BenchmarkResults OnePass(Session& session, const ScenarioFile& file,
                                  const BenchmarkOptions& options,
                                  const std::function<void(const results::Progress&)>& progress) {
  nlohmann::json collected = nlohmann::json::array();
  for (const auto& c : options.collectors) {
    collected.push_back(RunCollector(c, "start", session.url(), kCollectorTimeout));
  }
  HarnessOptions harness = options.harness;
  if (!options.pods.context.empty()) harness.before_cleanup = PodLifecycleStep(options.pods);
  harness.cancel_calls = &session.cancel_calls();
  // Written again, complete, by Finish; until then these copies are what
  // survives a clean-up that hangs, a second Ctrl-C or a SIGKILL.
  auto warned = std::make_shared<bool>(false);
  harness.checkpoint = [&options, warned](const results::BenchmarkResults& load) {
    Status s = results::WriteResults(options.finish.out_dir / "results.json", load);
    if (!s.ok() && !*warned) spdlog::warn("cannot write the results so far: {}", s.error().message);
    *warned = !s.ok();
  };
  uint64_t resent_before = session.resent_requests();
  auto results =
      RunScenarios(file, session.client(), session.recorder(), harness, [&](const auto& p) {
        if (options.on_progress) options.on_progress(p);
        progress(p);
      });
  results.resent_requests = session.resent_requests() - resent_before;
  if (options.on_pass_end) options.on_pass_end();
  if (options.prometheus) {
    auto prometheus = session.ClientFor(*options.prometheus);
    auto filled = AddPrometheusUsage(results.runs, *prometheus, options.prometheus_options);
    if (filled.ok()) {
      spdlog::info("prometheus: CPU and memory for {} step(s)", *filled);
    } else {
      results.errors.push_back(filled.error().message);
    }
  }
  for (const auto& c : options.collectors) {
    collected.push_back(RunCollector(c, "end", session.url(), kCollectorTimeout));
  }
  results.collectors = std::move(collected);
  results.target = session.target();
  results.target.executor_reason = file.executor_reason;
  results.time_scale = file.time_scale;
  return results;
}

// Each repetition into OUT/rep-K/ (when there are several), live metrics
// across them, and their exact merge.
results::BenchmarkResults Repeat(Session& session, const ScenarioFile& file,
                                 const BenchmarkOptions& options, report::LiveMetrics* live) {
  auto on_progress = [live](const results::Progress& p) {
    if (live) live->Update(p);
  };
  const std::filesystem::path& out_dir = options.finish.out_dir;
  std::vector<results::BenchmarkResults> repetitions;
  for (int k = 1; k <= options.repeat; ++k) {
    if (k > 1) spdlog::info("repetition {} of {}", k, options.repeat);
    repetitions.push_back(OnePass(session, file, options, on_progress));
    const auto& rep = repetitions.back();
    bool last = k == options.repeat || Interrupted(options.finish.interrupted);
    std::optional<WallTime> restart;
    if (!last) restart = WallClock::now();
    if (live) {
      live->EndRepetition(rep, restart);
    } else if (restart) {
      session.recorder().Restart(*restart);
    }
    if (options.repeat > 1) {
      std::filesystem::path dir = out_dir / fmt::format("rep-{}", k);
      std::error_code ec;
      std::filesystem::create_directories(dir, ec);
      Status s = ec ? Status(Error{fmt::format("cannot create {}: {}", dir.string(), ec.message())})
                    : results::WriteResults(dir / "results.json", rep);
      if (s.ok()) s = report::WriteReports(rep, report::DefaultReportOptions(dir));
      if (!s.ok()) std::cerr << "kfpbench: " << Redact(s.error().message) << "\n";
      std::cerr << fmt::format("repetition {}/{}: {} API calls, {} runs -> {}\n", k, options.repeat,
                               rep.ApiCalls(), rep.runs.size(), dir.string());
    }
    if (last) break;
  }
  // Only when something scrapes: a run nobody watches should not wait.
  if (live && live->scrapes() > 0 && !live->AwaitFinalScrape(std::chrono::seconds(5))) {
    spdlog::warn("--metrics-listen: no scrape of the final numbers within 5 s");
  }
  if (repetitions.size() == 1) return std::move(repetitions.front());
  auto combined = report::CombineRepetitions(repetitions);
  // Every repetition ran the same file, so the merge cannot fail; keep the
  // first rather than lose the run if it ever does.
  if (!combined.ok()) {
    std::cerr << "kfpbench: cannot combine repetitions: " << combined.error().message << "\n";
    return std::move(repetitions.front());
  }
  return std::move(*combined);
}

void Notify(const std::string& url, const results::BenchmarkResults& results,
            const std::vector<report::Verdict>& verdicts, const std::string& results_path) {
  auto body = report::ThresholdNotification(results, verdicts, results_path);
  if (!body) return;
  if (Status s = report::PostNotification(url, *body); !s.ok()) {
    std::cerr << "kfpbench: " << Redact(s.error().message) << "\n";
  } else {
    std::cerr << "kfpbench: posted the failed thresholds to --notify\n";
  }
}

}  // namespace

Result<Outcome> RunBenchmark(Session& session, const ScenarioFile& file,
                             const BenchmarkOptions& options, std::ostream& console) {
  if (!options.finish.notify.empty()) {
    // Webhook URLs carry their secret in the path.
    RegisterSecret(options.finish.notify);
    if (Status s = report::CheckNotifyUrl(options.finish.notify); !s.ok()) return s.error();
  }
  std::unique_ptr<report::LiveMetrics> live;
  if (!options.metrics_listen.empty()) {
    auto started = report::LiveMetrics::Start(options.metrics_listen, session.recorder());
    if (!started.ok()) return started.error();
    live = std::move(*started);
    spdlog::info("live metrics on http://{}/metrics", options.metrics_listen);
    // HOST:PORT, [v6]:PORT: the endpoint asks for no credentials.
    std::string host = options.metrics_listen.substr(0, options.metrics_listen.rfind(':'));
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
      host = host.substr(1, host.size() - 2);
    }
    if (!server::IsLoopbackAddress(host)) {
      spdlog::warn(
          "--metrics-listen {}: off loopback, and without authentication: anyone who reaches "
          "it reads this benchmark's operations, error counts and target; prefer 127.0.0.1 "
          "and a scraper on this host, or a network only you reach",
          options.metrics_listen);
    }
  }
  if (Status s = session.CheckReachable(); !s.ok()) return s.error();
  // Pods and Prometheus series live in the target's namespace unless told.
  BenchmarkOptions with_defaults = options;
  const std::string& ns = session.options().namespace_;
  if (with_defaults.prometheus_options.namespace_.empty()) {
    with_defaults.prometheus_options.namespace_ = ns;
  }
  if (!with_defaults.pods.context.empty() && with_defaults.pods.namespace_.empty()) {
    with_defaults.pods.namespace_ = ns.empty() ? "kubeflow" : ns;
  }
  with_defaults.harness.embedded_target = session.embedded();
  if (with_defaults.harness.benchmark_id.empty()) {
    with_defaults.harness.benchmark_id = "kfpbench-" + NewUuid().substr(0, 8);
  }
  spdlog::info("benchmark id {}: every name this benchmark gives on the target starts with it",
               with_defaults.harness.benchmark_id);
  for (const auto& s : file.scenarios) {
    if (s.shape == nullptr || s.shape->check_target == nullptr) continue;
    if (Status st = s.shape->check_target(s, session.embedded(), options.harness); !st.ok()) {
      return st.error();
    }
  }
  ScenarioFile prepared = file;
  if (Status s = PrepareScenarios(prepared, session.client()); !s.ok()) return s.error();
  if (Status s = ClaimOutputFolder(options.finish.out_dir); !s.ok()) return s.error();
  auto results = Repeat(session, prepared, with_defaults, live.get());
  FinishOptions finish = options.finish;
  if (finish.thresholds.empty()) finish.thresholds = file.thresholds;
  return Finish(results, finish, console);
}

Outcome Finish(const results::BenchmarkResults& results, const FinishOptions& options,
               std::ostream& console) {
  auto failed = [](const Error& e) {
    std::cerr << "kfpbench: " << Redact(e.message) << "\n";
    return Outcome::kFailed;
  };
  if (Status s = report::ConsoleReporter(console).Report(results); !s.ok()) {
    spdlog::warn("console report: {}", s.error().message);
  }
  auto json_path = options.out_dir / "results.json";
  if (Status s = results::WriteResults(json_path, results); !s.ok()) return failed(s.error());
  console << "\nresults: " << json_path.string() << (results.partial ? " (partial)" : "")
          << std::endl;
  auto reports = report::DefaultReportOptions(options.out_dir);
  reports.thresholds = options.thresholds;
  reports.junit = options.junit;
  if (Status s = report::WriteReports(results, reports); !s.ok()) {
    std::cerr << "kfpbench: " << Redact(s.error().message) << "\n";
  } else {
    console << "report:  " << reports.html.string() << std::endl;
    if (!reports.junit.empty()) console << "junit:   " << reports.junit.string() << std::endl;
  }
  bool thresholds_failed = false;
  if (!options.thresholds.empty()) {
    auto verdicts = report::EvaluateThresholds(results, options.thresholds);
    if (!verdicts.ok()) return failed(verdicts.error());
    console << "\nThresholds\n";
    for (const auto& v : *verdicts) {
      console << fmt::format("  {:<4} {:<16} {:<22} observed {} ({})\n", v.passed ? "ok" : "FAIL",
                             v.metric, v.expression, v.observed_text, v.margin);
    }
    thresholds_failed = !report::AllPassed(*verdicts);
    if (thresholds_failed && !options.notify.empty()) {
      Notify(options.notify, results, *verdicts, json_path.string());
    }
  }
  auto failures = report::FailureReasons(results, {options.max_failed_runs});
  if (!failures.empty()) {
    console << "\nFAILED\n";
    for (const auto& reason : failures) console << "  " << reason << "\n";
  }
  return OutcomeOf(Interrupted(options.interrupted), !failures.empty(), thresholds_failed);
}

Outcome OutcomeOf(bool interrupted, bool work_failed, bool thresholds_failed) {
  if (interrupted) return Outcome::kInterrupted;
  if (work_failed) return Outcome::kFailed;
  if (thresholds_failed) return Outcome::kThresholdsFailed;
  return Outcome::kOk;
}

}  // namespace kfpbench::harness
