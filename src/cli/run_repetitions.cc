#include "cli/run_repetitions.h"

#include <iostream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "report/notify.h"
#include "report/repetitions.h"
#include "report/reporter.h"
#include "report/write_reports.h"
#include "util/secrets.h"

namespace kfpbench::cli {

void RunRepetitionFlags::Add(CLI::App& cmd) {
  cmd.add_option("--repeat", repeat,
                 "run the scenario file N times, one repetition after the other; writes "
                 "OUT/rep-K/ per repetition and their exact merge to OUT (compare tests over "
                 "the repetitions)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd.add_option("--metrics-listen", metrics_listen,
                 "serve live Prometheus metrics of the run on HOST:PORT/metrics, e.g. "
                 "127.0.0.1:9464 (dashboard: deploy/grafana/)");
  cmd.add_option("--notify", notify,
                 "POST a JSON summary (Slack-compatible `text`) to this URL when a threshold "
                 "fails");
}

RepeatedRun::RepeatedRun(const RunRepetitionFlags& flags, metrics::Recorder& recorder,
                         const std::atomic<bool>* interrupted)
    : flags_(flags), recorder_(recorder), interrupted_(interrupted) {}

RepeatedRun::~RepeatedRun() = default;

Status RepeatedRun::Start() {
  if (!flags_.notify.empty()) {
    // Webhook URLs carry their secret in the path.
    RegisterSecret(flags_.notify);
    if (Status s = report::CheckNotifyUrl(flags_.notify); !s.ok()) return s;
  }
  if (flags_.metrics_listen.empty()) return Ok();
  auto live = report::LiveMetrics::Start(flags_.metrics_listen, recorder_);
  if (!live.ok()) return live.error();
  live_ = std::move(*live);
  spdlog::info("live metrics on http://{}/metrics", flags_.metrics_listen);
  return Ok();
}

harness::BenchmarkResults RepeatedRun::Run(const std::filesystem::path& out_dir,
                                           const OnePass& pass) {
  auto on_progress = [this](const harness::Progress& p) {
    if (live_) live_->Update(p);
  };
  std::vector<harness::BenchmarkResults> repetitions;
  for (int k = 1; k <= flags_.repeat; ++k) {
    if (k > 1) spdlog::info("repetition {} of {}", k, flags_.repeat);
    repetitions.push_back(pass(on_progress));
    const auto& rep = repetitions.back();
    bool last = k == flags_.repeat || (interrupted_ && interrupted_->load());
    std::optional<WallTime> restart;
    if (!last) restart = WallClock::now();
    if (live_) {
      live_->EndRepetition(rep, restart);
    } else if (restart) {
      recorder_.Restart(*restart);
    }
    if (flags_.repeat > 1) {
      std::filesystem::path dir = out_dir / fmt::format("rep-{}", k);
      std::error_code ec;
      std::filesystem::create_directories(dir, ec);
      Status s = ec ? Status(Error{fmt::format("cannot create {}: {}", dir.string(), ec.message())})
                    : report::JsonReporter(dir / "results.json").Report(rep);
      if (s.ok()) s = report::WriteReports(rep, report::DefaultReportOptions(dir));
      if (!s.ok()) std::cerr << "kfpbench: " << Redact(s.error().message) << "\n";
      uint64_t calls = 0;
      for (const auto& [name, op] : rep.operations) calls += op.latency_us.count();
      std::cerr << fmt::format("repetition {}/{}: {} API calls, {} runs -> {}\n", k, flags_.repeat,
                               calls, rep.runs.size(), dir.string());
    }
    if (last) break;
  }
  // Only when something scrapes: a run nobody watches should not wait.
  if (live_ && live_->scrapes() > 0 && !live_->AwaitFinalScrape(std::chrono::seconds(5))) {
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

void RepeatedRun::NotifyThresholds(const harness::BenchmarkResults& results,
                                   const std::vector<report::Verdict>& verdicts,
                                   const std::string& results_path) {
  if (flags_.notify.empty()) return;
  auto body = report::ThresholdNotification(results, verdicts, results_path);
  if (!body) return;
  if (Status s = report::PostNotification(flags_.notify, *body); !s.ok()) {
    std::cerr << "kfpbench: " << Redact(s.error().message) << "\n";
  } else {
    std::cerr << "kfpbench: posted the failed thresholds to --notify\n";
  }
}

}  // namespace kfpbench::cli
